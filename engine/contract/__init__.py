"""The contract's words: a study's spec, its ledger and the rules the ledger keeps, its accounts, kill points, the
evidence folder's names and the exit statuses.

What the contract says, as code and data, with nothing of how a study is run:
the judge reads evidence through it, and the engine writes evidence by it.
"""
