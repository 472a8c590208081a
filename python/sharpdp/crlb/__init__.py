"""sharpdp.crlb (in progress)."""
