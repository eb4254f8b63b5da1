"""The pytest side of pytest-trajaudit: what the plugin hooks delegate to (kept apart from the pytest-free core)."""
