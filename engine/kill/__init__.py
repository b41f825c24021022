"""A kill of a study's controller: the protocol of one kill (freeze, capture, SIGKILL, resume), the driver that
arms and triggers it from the ledger, and the live recording of container events for its window."""
