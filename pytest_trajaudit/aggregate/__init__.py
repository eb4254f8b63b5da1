"""Aggregate: pure roll-up functions over findings: per-job verdicts, completeness of the integrity checks, and the
cross-trial task groups (pass^k, skill impact). Pure: no pytest."""
