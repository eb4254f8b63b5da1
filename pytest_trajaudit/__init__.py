"""pytest-trajaudit: audits of AI-agent benchmark runs as pytest items.

``import pytest_trajaudit`` stays light: no pytest, pydantic or litellm import happens here.
"""

import sys

__version__ = "0.1.0"


class TrajauditWarning(UserWarning):
    """A WARN finding, shown in pytest's warnings summary. ``-W error::pytest_trajaudit.TrajauditWarning`` turns
    WARN into failures (defined here, not in the adapter, so that filter path is short and stable)."""


def _no_assert_rewrite() -> None:
    """pytest rewrites the asserts of every module of a distribution that declares a ``pytest11`` plugin. When it
    may not write bytecode (``PYTHONDONTWRITEBYTECODE``, set in many container images) it parses and recompiles
    those modules in every pytest process: measured 0.25 s per process for this package (0.55 s instead of
    0.32 s for an empty audit; an xdist run pays it once per worker too). Nothing here relies on rewritten
    asserts, so take the package off pytest's list before its submodules are imported. Only pytest's private
    set is touched, and only when it is there: otherwise nothing changes but the speed."""
    for finder in sys.meta_path:
        must = getattr(finder, "_must_rewrite", None)
        if isinstance(must, set):
            must.discard(__name__)


_no_assert_rewrite()
