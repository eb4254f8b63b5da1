from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.judgeserver import dead_url, judge_server, litellm  # noqa: F401 (fixtures: the real test server)


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary directory every user may traverse (for permission tests that drop to nobody: pytest's own
    tmp_path lives below a private 0700 directory), removed afterwards whatever its modes."""
    d = Path(tempfile.mkdtemp(prefix="trajaudit-adv-"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        for top, dirs, files in os.walk(d):
            for n in dirs + files:
                p = os.path.join(top, n)
                if not os.path.islink(p):
                    os.chmod(p, stat.S_IRWXU | os.stat(p).st_mode)
        shutil.rmtree(d, ignore_errors=True)
