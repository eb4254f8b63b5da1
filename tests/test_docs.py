"""The docs describe the code as it is: the principle table is the registry's, and every link resolves."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_trajaudit.principles import registry_table

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_principle_table_is_generated_from_the_registry() -> None:
    page = (REPO / "docs" / "principles.md").read_text(encoding="utf-8")
    assert registry_table() in page, "docs/principles.md is out of date: python -m pytest_trajaudit.principles"


def test_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert broken == []


def test_readme_stays_short() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 400
