"""Starting a study's controller and holding on to it: the launcher, the keeper that outlives a console, the
study's lock and the preparation of a fresh, resumed or attached study."""
