"""The crash-point explorer: a study's crash points found from a trace, each tried as a trial, a campaign of
trials on Dask, and folders followed as another process writes them."""
