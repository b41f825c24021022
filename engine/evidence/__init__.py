"""The evidence folder's records: written whole and never overwritten, read back typed, and every fact it holds
twice listed."""
