"""P16 (verifier gaming) on real data: its outcomes on every job of a runs tree, and its findings on honest
library source.

    python benchmarks/p16_corpus.py runs ../shared/corpus       # status counts, every WARN/FAIL with evidence
    python benchmarks/p16_corpus.py library /usr/lib/python3.11 # findings by check on honest code (no test cases)

Only prints; asserts nothing.
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

from pytest_trajaudit.discover.jobs import find_jobs
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles._pycheck import analyse
from pytest_trajaudit.principles._testcases import Cases
from pytest_trajaudit.principles.engine import audit_job
from pytest_trajaudit.settings import Settings


def runs(root: Path) -> None:
    p16 = [registry()["P16"]]
    counts: collections.Counter[str] = collections.Counter()
    t0 = time.perf_counter()
    for ref in find_jobs(root):
        audit = audit_job(ref, Settings(), p16)
        if audit.error:
            counts["unusable"] += 1
            continue
        r = audit.results["P16"]
        counts[r.status] += 1
        if r.status in ("WARN", "FAIL"):
            print(f"{r.status:4} {ref.dir.relative_to(root)} reward={audit.meta.get('reward')}: {r.evidence[:300]}")
    print(dict(counts), f"{time.perf_counter() - t0:.1f} s")


def library(root: Path) -> None:
    counts: collections.Counter[tuple[str, bool]] = collections.Counter()
    examples: dict[tuple[str, bool], list[str]] = collections.defaultdict(list)
    n = 0
    t0 = time.perf_counter()
    for f in sorted(root.rglob("*.py")):
        if "test" in f.parts or f.name.startswith("test_") or not f.is_file() or f.is_symlink():
            continue
        try:
            code = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        n += 1
        for x in analyse(code, Cases())[0]:
            k = (x.check, x.strong)
            counts[k] += 1
            if len(examples[k]) < 3:
                examples[k].append(f"{f.relative_to(root)}:{x.lineno}: {x.line[:100]}")
    print(f"{n} files, {time.perf_counter() - t0:.1f} s")
    for (check, strong), c in counts.most_common():
        print(f"{check:16} {'strong' if strong else 'weak':6} {c}")
        for e in examples[(check, strong)]:
            print("    ", e)


if __name__ == "__main__":
    mode, where = sys.argv[1], Path(sys.argv[2])
    runs(where) if mode == "runs" else library(where)
