from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = (REPO.parent / "shared" / "corpus").resolve()


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus of real job directories (../shared/corpus); skip cleanly when absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS
