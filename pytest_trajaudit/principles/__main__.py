"""``python -m pytest_trajaudit.principles``: print the registry's principle table (Markdown) for the docs."""

from . import registry_table

print(registry_table())
