"""Collection nodes: directories of the audited tree, jobs, and one item per principle per job.

Security: no node here is a ``pytest.Directory`` and none calls ``pytest_collect_file``, so pytest never
imports a ``conftest.py``, ``test_*.py`` or ``__init__.py`` from the audited tree (PYTEST-NOTES.md §2).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

import pytest

from .discovery import JobRef, bare_file, classify, loose_files, subdirs
from .engine import JobAudit, audit_job
from .loaders.multi import RECORD, claim, list_members, member_ref, node_name
from .model import UnusableInput
from .principles import Principle
from .redact import redact


class TrajauditWarning(UserWarning):
    """A WARN finding. ``-W error::pytest_trajaudit.nodes.TrajauditWarning`` turns WARN into failures."""


class AuditFailure(Exception):
    """A FAIL finding (evidence in the message)."""


class UnusableJob(Exception):
    """The job's input cannot be audited (named file and reason)."""


class TreeNode(pytest.File):
    """A directory inside an audit root (a container of jobs), or the parent of a bare-file root."""

    def __init__(self, *, walk: bool = True, bare: tuple[Path, ...] = (), **kw: Any) -> None:
        super().__init__(**kw)
        self.walk = walk
        self.bare = bare

    def collect(self):
        if self.walk:
            ref = classify(self.path)
            if ref is not None:
                yield JobNode.from_parent(self, path=ref.anchor, ref=ref)
                return
        state = self.config.stash[STATE_KEY]
        done: set[Path] = set()
        if self.walk:  # loose runs of a container directory: *.traj, multi-record files (see loaders/multi.py)
            for f in loose_files(self.path):
                node = _file_node(self, f, given=False, max_file=state.settings.max_file_bytes)
                if node is not None:
                    done.add(f)
                    yield node
        for f in self.bare:
            if f not in done:
                yield _file_node(self, f, given=True, max_file=state.settings.max_file_bytes)
        for d in subdirs(self.path):
            if self.walk or state.under_root(d) or state.leads_to_root(d) or self.session_bare(d):
                yield TreeNode.from_parent(self, path=d, walk=self.walk or state.under_root(d),
                                           bare=self.session_bare(d))

    def session_bare(self, d: Path) -> tuple[Path, ...]:
        state = self.config.stash.get(STATE_KEY, None)
        return tuple(sorted(f for f in state.bare_files if f.parent == d)) if state else ()


class JobNode(pytest.File):
    """One job, anchored on a real file (result.json or the trajectory) so ``path::P1`` selects an item."""

    def __init__(self, *, ref: JobRef, **kw: Any) -> None:
        super().__init__(**kw)
        self.ref = ref
        self.selected: list[str] | None = None  # codes still selected after -k/-m (set at modifyitems)
        self._audit: JobAudit | None = None
        self.loads = 0
        self.error: str | None = None  # known unusable before loading (a multi-record file that cannot be listed)

    def collect(self):
        state = self.config.stash[STATE_KEY]
        for p in state.principles:
            item = PrincipleItem.from_parent(self, name=p.code, principle=p)
            item.add_marker(p.code)
            item.add_marker(p.tier.lower())
            item.add_marker(p.family)
            yield item

    @functools.cached_property
    def job_id(self) -> str:
        return self.config.stash[STATE_KEY].job_id(self.ref)

    def get_audit(self) -> JobAudit:
        if self._audit is None:
            state = self.config.stash[STATE_KEY]
            codes = set(self.selected) if self.selected is not None else None
            principles = [p for p in state.principles if codes is None or p.code in codes]
            self.loads += 1
            if self.error is not None:
                self._audit = JobAudit({"layout": self.ref.layout, "trial": self.path.name}, {}, error=self.error)
            else:
                self._audit = audit_job(self.ref, state.settings, principles)
        return self._audit

    def release(self) -> None:
        self._audit = None


class ContainerNode(JobNode):
    """A multi-record file (OpenHands ``output.jsonl``, Inspect ``.json``/``.eval``, trace-grader ``traces.json``):
    one child :class:`JobNode` per record, named by its member id, so node ids read ``<file>::<member>::P1`` and
    every item of a record shares the ``<file>::<member>`` prefix (one xdist loadscope unit). Listing the members
    reads the file at collection (cheaply: see ``loaders/multi.py``). When it cannot be listed, the file's own
    items (``<file>::P1``) error at setup with the reason: never a silent pass."""

    def __init__(self, *, fmt: Any = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.fmt = fmt

    def collect(self):
        max_file = self.config.stash[STATE_KEY].settings.max_file_bytes
        try:
            members = list_members(self.ref, max_file, self.fmt)
            if not members:
                raise UnusableInput(self.path, "holds no records")
        except UnusableInput as exc:
            self.error = f"{self.path.name}: {exc.reason}"
            yield from super().collect()
            return
        for m in members:
            name = node_name(m)
            yield JobNode.from_parent(self, path=self.path, name=name, nodeid=f"{self.nodeid}::{name}",
                                      ref=member_ref(self.ref, m))


def _file_node(parent: pytest.Collector, f: Path, *, given: bool, max_file: int) -> JobNode | None:
    """The node of one file: a SWE-agent ``*.traj`` is a job; a file a format module claims is a job ("single")
    or a :class:`ContainerNode` ("multi", from its name and first 4 KiB); a file given directly is always a job;
    any other loose file is no job."""
    if f.name.endswith(".traj"):
        return JobNode.from_parent(parent, path=f, ref=bare_file(f))
    c = claim(f, max_file)
    if c is not None and c[0] == "multi":
        return ContainerNode.from_parent(parent, path=f, ref=JobRef(f.parent, f, RECORD), fmt=c[1])
    if c is not None or given:
        return JobNode.from_parent(parent, path=f, ref=bare_file(f))
    return None


class PrincipleItem(pytest.Item):
    def __init__(self, *, principle: Principle, **kw: Any) -> None:
        super().__init__(**kw)
        self.principle = principle
        self.record: dict[str, Any] | None = None
        self.warn_msg: str | None = None

    @property
    def job(self) -> JobNode:
        return self.parent  # type: ignore[return-value]

    def _base_record(self) -> dict[str, Any]:
        p = self.principle
        return {"job": self.job.job_id, "code": p.code, "tier": p.tier, "family": p.family,
                "affects": p.affects_verdict, "key": p.key}

    def setup(self) -> None:
        audit = self.job.get_audit()
        rec = self._base_record()
        rec["loads"] = self.job.loads
        if audit.error:
            rec.update(status="ERROR", error=audit.error, meta=audit.meta)
            self.record = rec
            self.user_properties += [("trajaudit.status", "ERROR"), ("trajaudit.evidence", redact(audit.error)[:2000])]
            raise UnusableJob(audit.error)
        res = audit.results.get(self.principle.code)
        if res is None or res.internal_error:
            msg = res.internal_error if res else f"{self.principle.code} was not evaluated"
            rec.update(status="ERROR", evidence=msg)
            self.record = rec
            raise UnusableJob(msg)
        rec.update(status=res.status, evidence=res.evidence, data=res.data, events=res.events[:50], meta=audit.meta)
        self.record = rec
        # JUnit writes these as <properties> of the testcase (from the teardown report): status and evidence
        # reach CI for every outcome, passed items included
        self.user_properties += [("trajaudit.status", res.status), ("trajaudit.evidence", redact(res.evidence)[:2000])]

    def runtest(self) -> None:
        rec = self.record or {}
        status, evidence = rec.get("status"), rec.get("evidence", "")
        msg = f"{self.principle.code}: {evidence}"
        if status == "FAIL":
            raise AuditFailure(msg)
        if status == "WARN":
            self.warn_msg = msg
            warnings.warn_explicit(TrajauditWarning(f"{self.job.job_id}::{msg}"), TrajauditWarning,
                                   str(self.job.ref.dir), 0)
            return
        if status == "N/A":
            try:
                raise pytest.skip.Exception(msg, _use_item_location=True)
            except TypeError:  # pragma: no cover - private flag removed in a future pytest
                pytest.skip(msg)

    def repr_failure(self, excinfo, style=None):  # type: ignore[override]
        if isinstance(excinfo.value, AuditFailure):
            return f"[trajaudit] {self.job.job_id}::{excinfo.value}"
        if isinstance(excinfo.value, UnusableJob):
            return f"[trajaudit] {self.job.job_id}: unusable input: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):  # type: ignore[override]
        # setup errors are rendered through this (not repr_failure): keep them to one line, no traceback
        if isinstance(excinfo.value, UnusableJob | AuditFailure):
            return self.repr_failure(excinfo, style)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"{self.job.job_id}::{self.principle.code}"


# set by plugin.py (kept here so nodes and plugin share one key without a circular import)
STATE_KEY = pytest.StashKey["Any"]()
