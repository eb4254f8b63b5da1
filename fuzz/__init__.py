"""Fuzzing of every loader and of the strict decoder: shared seeds, generators and targets used by
``tests/test_fuzz.py`` (a short deterministic hypothesis slice) and ``fuzz/campaign.py`` (the long campaign)."""
