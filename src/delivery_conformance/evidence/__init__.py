"""What a run records, below every other layer: exchanges, violations, the ledger of judged
requirements, run events, and the redaction applied before any of it is stored."""
