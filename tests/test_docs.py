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


def test_quick_start_installs_the_core_package_and_the_tests_the_dev_extra() -> None:
    """A user's quick start needs no development tools; the test suite does (README and .ci/run agree)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    installs = [ln.strip() for ln in quick.splitlines() if "pip install" in ln]
    assert installs[0].startswith("python -m pip install . && pytest --trajaudit=")
    assert "python -m pip install -e '.[dev]'" in installs[1:]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r'pip install -q "\$TMP"/dist/\*\.whl \|\|', ci)  # the wheel, without extras
    assert "pip install -q -e '.[dev]'" in ci
    assert "Supported: CPython 3.11 and newer" in readme and "`pytest>=9.0,<10`" in readme
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires-python = ">=3.11"' in pyproject and '"pytest>=9.0,<10"' in pyproject
