"""A study while it runs: its session, the ledger pump, its containers followed live, its finish, and the
supervisor that runs many sessions in one event loop."""
