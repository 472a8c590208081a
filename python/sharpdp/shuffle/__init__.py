"""sharpdp.shuffle (in progress)."""
