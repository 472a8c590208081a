"""sharpdp.histogram (in progress)."""
