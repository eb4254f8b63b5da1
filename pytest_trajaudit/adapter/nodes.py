"""Collection nodes: directories of the audited tree, jobs, and one item per principle per job.

Security: no node here is a ``pytest.Directory`` and none calls ``pytest_collect_file``, so pytest never
imports a ``conftest.py``, ``test_*.py`` or ``__init__.py`` from the audited tree (the seed's PYTEST-NOTES.md §2).
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from .. import TrajauditWarning
from ..advisor.collect import advisor_known
from ..aggregate.groups import GroupResult, compact, evaluate, gather, plan
from ..discover.jobs import JobRef, bare_file, looks_like_trajectory, loose_files
from ..loaders.multi import RECORD, claim, list_members, member_ref, node_name
from ..model import UnusableInput
from ..principles import Principle, group_checks
from ..principles.engine import JobAudit, audit_job
from ..records import GroupRecord
from ..safeio import events_limit
from ..scan.redact import clean, printable
from .nodeids import path_id


class AuditFailure(Exception):
    """A FAIL finding (evidence in the message)."""


class UnusableJob(Exception):
    """The job's input cannot be audited (named file and reason)."""


def _printable_nodeid(kw: dict[str, Any]) -> dict[str, Any]:
    """Agent-chosen file names may hold newlines, ESC sequences, bidi overrides or bytes that are not UTF-8: such a
    node gets its path-derived node id with those characters escaped (``redact.printable``), so no terminal line,
    JUnit file or report can be broken or spoofed by a name. Ordinary names keep pytest's own node id."""
    path, parent = kw.get("path"), kw.get("parent")
    if path is None or parent is None:
        return kw
    if kw.get("name") is None:  # the node's name is also a keyword of every item below it (copied into reports)
        try:
            name = Path(path).relative_to(parent.path).as_posix() if parent.path != path else Path(path).name
        except ValueError:
            name = Path(path).name
        if printable(name) != name:
            kw["name"] = printable(name)
    if kw.get("nodeid") is None:
        try:
            rel = Path(path).relative_to(parent.config.rootpath).as_posix()
        except ValueError:  # outside the rootdir: ../ steps from it, so the id resolves (adapter/nodeids.py)
            rel = path_id(Path(path), parent.config.rootpath) or ""
            kw["nodeid"] = printable(rel)
            return kw
        safe = printable(rel)
        if safe != rel:
            kw["nodeid"] = safe
    return kw


class TreeNode(pytest.File):
    """A directory inside an audit root (a container of jobs), or the parent of a bare-file root."""

    def __init__(self, *, walk: bool = True, bare: tuple[Path, ...] = (), **kw: Any) -> None:
        super().__init__(**_printable_nodeid(kw))
        self.walk = walk
        self.bare = bare

    def collect(self):
        state = self.config.stash[STATE_KEY]
        if self.walk:
            try:  # a directory the auditing user cannot list would otherwise look empty: its jobs unaudited
                os.scandir(self.path).close()
            except OSError as exc:
                raise self.CollectError(f"trajaudit: cannot list {printable(str(self.path))}: "
                                        f"{exc.strerror or type(exc).__name__} — its jobs would go unaudited") from None
            ref = state.walk.classify(self.path)
            if ref is not None:
                if in_shard(self.config, ref):  # a job of another --trajaudit-shard is not collected at all
                    yield JobNode.from_parent(self, path=ref.anchor, ref=ref)
                return
        done: set[Path] = set()
        if self.walk:  # loose runs of a container directory: *.traj, multi-record files (see loaders/multi.py)
            for f in loose_files(self.path):
                node = _file_node(self, f, given=False, max_file=state.settings.max_file_bytes)
                if node is not None:
                    done.add(f)
                    if in_shard(self.config, node.ref):
                        yield node
        for f in self.bare:
            if f not in done:
                node = _file_node(self, f, given=True, max_file=state.settings.max_file_bytes)
                if node is not None and in_shard(self.config, node.ref):
                    yield node
        dirs = state.walk.subdirs(self.path)  # skips empty directories, but an audit root given by the user is always visited
        dirs += [r for r in state.roots if r.parent == self.path and r not in dirs and not r.is_symlink()]
        for d in sorted(dirs, key=lambda p: p.name):
            if self.walk or state.under_root(d) or state.leads_to_root(d) or self.session_bare(d):
                yield TreeNode.from_parent(self, path=d, walk=self.walk or state.under_root(d),
                                           bare=self.session_bare(d))

    def session_bare(self, d: Path) -> tuple[Path, ...]:
        state = self.config.stash.get(STATE_KEY, None)
        return tuple(sorted(f for f in state.bare_files if f.parent == d)) if state else ()


def _planned(state: Any) -> dict[Path, list[tuple[Path, str, list[JobRef]]]]:
    """The task groups of every audit root (planned from folder names, stat-only), by their first trial's
    directory. A root inside another root is planned with the outer one only (one group per task)."""
    plans: dict[Path, list[tuple[Path, str, list[JobRef]]]] | None = state.__dict__.get("_trajaudit_groups")
    if plans is None:
        plans = {}
        state.__dict__["_trajaudit_groups"] = plans
        for root in state.roots:
            if any(r in root.parents for r in state.roots):
                continue
            for key, refs in plan(state.walk.find_jobs(root)).items():
                plans.setdefault(refs[0].dir, []).append((root, key, refs))
    return plans


class JobNode(pytest.File):
    """One job, anchored on a real file (result.json or the trajectory) so ``path::P1`` selects an item."""

    def __init__(self, *, ref: JobRef, **kw: Any) -> None:
        super().__init__(**_printable_nodeid(kw))
        self.ref = ref
        self.selected: list[str] | None = None  # codes still selected after -k/-m (set at modifyitems)
        self._audit: JobAudit | None = None
        self.loads = 0
        self.meta_sent = False  # an item's record already carried the job's meta (see PrincipleItem.setup)
        self.error: str | None = None  # known unusable before loading (a multi-record file that cannot be listed)
        self.prefetch: list[JobNode] = []  # jobs a judge item of this job loads ahead (adapter/collect.py, in-process only)

    def collect(self):
        state = self.config.stash[STATE_KEY]
        adv = None  # ADV items only for a job whose privileged material is known (stat only: advisor/collect.py)

        def applies(p: Principle) -> bool:
            nonlocal adv
            if p.family != "advisor":
                return True
            if adv is None:
                adv = advisor_known(self.ref, state.settings.privileged_roots, state.settings.tasks_dirs)
            return adv

        # the integrity principles a full run audits this job with, selected or not (completeness.py)
        self.integrity = tuple(p.code for p in state.declarations().values() if p.role == "integrity" and applies(p))
        state.collected_jobs.append(self)
        for p in state.principles:
            if not applies(p):
                continue
            item = PrincipleItem.from_parent(self, name=p.code, principle=p)
            for mark in _marks(p):
                item.add_marker(mark)
            yield item
        yield from self._groups()

    def _groups(self):
        """The task groups whose first trial is this job (cross-trial checks, see groups.py). A group's node sits
        under that trial's job node, on the same file: ``<trial>/result.json::<task>::PASSK`` is a file path with
        selection parts, so pytest resolves it when pasted back, and an IDE files it under a file."""
        state = self.config.stash[STATE_KEY]
        if not state.group_codes:
            return
        for root, key, refs in _planned(state).get(self.ref.dir, ()):
            if refs[0].anchor != self.path:
                continue
            ids = [state.job_id(r) for r in refs]
            state.grouped.update(ids)
            yield TaskGroupNode.from_parent(self, name=key, nodeid=f"{self.nodeid}::{key}", root=root,
                                            members=list(zip(ids, refs, strict=True)))

    @functools.cached_property
    def job_id(self) -> str:
        return self.config.stash[STATE_KEY].job_id(self.ref)

    def get_audit(self, code: str | None = None) -> JobAudit:
        kept = {}
        if self._audit is not None and self._audit.partial and self._audit.error is None and code is not None \
                and code not in self._audit.pending and code not in self._audit.results:
            kept, self._audit = self._audit.pending, None  # released early (an item ran out of order): reload
        if self._audit is None:
            state = self.config.stash[STATE_KEY]
            codes = set(self.selected) if self.selected is not None else None
            principles = [p for p in state.principles if (codes is None or p.code in codes) and p.code not in kept]
            self.loads += 1
            if self.error is not None:
                self._audit = JobAudit({"layout": self.ref.layout, "trial": self.path.name}, {}, error=self.error)
            else:
                self._audit = audit_job(self.ref, state.settings, principles)
            self._audit.pending.update(kept)
            if self.job_id in state.grouped:  # publish what the job's task group reads (groups.py)
                state.store.put(compact(self.job_id, self._audit, state.declarations()))
        return self._audit

    def release(self) -> None:
        """Drop the job's audit. With judges configured, its judge items run after every other item (adapter/collect.py):
        until they have, the job keeps only their small state (meta, futures, finish, or their mechanical results)."""
        if self._audit is None:
            return
        state = self.config.stash[STATE_KEY]
        late: set[str] = set()
        if getattr(state.settings, "judge", None) is not None:
            late = {p.code for p in state.principles if p.judge}
            if self.selected is not None:
                late &= set(self.selected)
        self._audit = self._audit.trim(late) if late else None


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
        settings = self.config.stash[STATE_KEY].settings
        try:
            with events_limit(settings.max_events):  # listing may parse the file: --trajaudit-max-events holds
                members = list_members(self.ref, settings.max_file_bytes, self.fmt)
            if not members:
                raise UnusableInput(self.path, "holds no records")
        except UnusableInput as exc:
            self.error = f"{self.path.name}: {exc.reason}"
            yield from super().collect()
            return
        for m in members:
            name = node_name(m)
            yield RecordNode.from_parent(self, path=self.path, name=name, nodeid=f"{self.nodeid}::{name}",
                                         ref=member_ref(self.ref, m))


class RecordNode(JobNode, pytest.Class):
    """One record of a multi-record file: a job. It is also a ``pytest.Class`` for one reason: test explorers that
    build their tree from paths (VS Code's ``vscode_pytest``) nest an item under its parent class, named by it, and
    file every other item directly under its file, where each record's items would read ``P1``, ``P2``, … with
    nothing naming the record. Nothing of ``pytest.Class`` runs: :meth:`JobNode.collect` comes first, and the
    class's Python object is never asked for (``obj`` would raise AttributeError: there is no class)."""


def _file_node(parent: pytest.Collector, f: Path, *, given: bool, max_file: int) -> JobNode | None:
    """The node of one file: a SWE-agent ``*.traj`` is a job; a file a format module claims is a job ("single")
    or a :class:`ContainerNode` ("multi", from its name and first 4 KiB); a file given directly, or one whose name
    looks like a trajectory (``discovery.looks_like_trajectory``), is always a job (loading it says why it cannot
    be audited: never dropped silently); any other loose file is no job."""
    if f.name.endswith(".traj"):
        return JobNode.from_parent(parent, path=f, ref=bare_file(f))
    c = claim(f, max_file)
    if c is not None and c[0] == "multi":
        return ContainerNode.from_parent(parent, path=f, ref=JobRef(f.parent, f, RECORD), fmt=c[1])
    if c is not None or given or looks_like_trajectory(f.name):
        return JobNode.from_parent(parent, path=f, ref=bare_file(f))
    return None


@functools.lru_cache(maxsize=512)
def _marks(p: Principle) -> tuple[pytest.MarkDecorator, ...]:
    """A principle's markers (its code, cost tier and family), built once rather than once per job."""
    return tuple(getattr(pytest.mark, name) for name in (p.code, p.tier.lower(), p.family))


class PrincipleItem(pytest.Item):
    def __init__(self, *, principle: Principle, **kw: Any) -> None:
        super().__init__(**kw)
        self.principle = principle
        self.record: dict[str, Any] | None = None
        self.warn_msg: str | None = None
        # every attribute the item's run sets is given here, in the same order on every item, and later only
        # reassigned (never added or deleted): the items' __dict__s then share one key table (CPython's split
        # dicts, about 150 bytes each) instead of each holding its own (about 460), for the whole session
        self.na_msg: str | None = None
        self.report_keywords: Mapping[str, Any] | None = None  # adapter/outcomes.py: shared by the item's reports
        self._location: tuple[str, int | None, str] | None = None

    @property
    def job(self) -> JobNode:
        return self.parent  # type: ignore[return-value]

    @property
    def extra_keyword_matches(self) -> set[str]:
        """``Node.extra_keyword_matches``: further names ``-k`` matches, an empty set on every node that only
        selection reads. An item's empty set is dropped once collection is over (:func:`shed_empty`); asking for
        it again makes a new one, kept like pytest's."""
        own = self.__dict__.get("_extra_keyword_matches")
        if own is None:
            own = self.__dict__["_extra_keyword_matches"] = set()
        return own

    @extra_keyword_matches.setter
    def extra_keyword_matches(self, value: set[str]) -> None:
        self.__dict__["_extra_keyword_matches"] = value

    def _base_record(self) -> dict[str, Any]:
        p = self.principle
        return {"job": self.job.job_id, "code": p.code, "tier": p.tier, "family": p.family,
                "affects": p.affects_verdict, "key": p.key}

    def setup(self) -> None:
        if self.principle.judge:
            for ahead in self.job.prefetch:  # get the next jobs' judge requests in flight before this one waits
                if ahead.loads == 0:
                    try:
                        ahead.get_audit()
                    except Exception:  # that job's own item loads it again and reports the problem
                        pass
        audit = self.job.get_audit(self.principle.code)
        rec = self._base_record()
        rec["loads"] = self.job.loads
        if audit.error:
            rec.update(status="ERROR", error=audit.error, meta=audit.meta)
            self.record = rec
            # one error per unusable job, from its first selected item (the same item in every process, also when
            # xdist splits the job); its other items are skipped, pointing at it, and their records still make
            # the job ERROR
            first = self.job.selected[0] if self.job.selected else self.principle.code
            if self.principle.code == first:
                raise UnusableJob(audit.error)
            rec["reported_at"] = at = f"{self.job.nodeid}::{first}"
            raise pytest.skip.Exception(f"unusable input, reported at {at}", _use_item_location=True)
        res = audit.resolve(self.principle.code)
        if res is not None and res.judge:
            rec["judge"] = res.judge
        if res is None or res.internal_error:
            msg = res.internal_error if res else f"{self.principle.code} was not evaluated"
            rec.update(status="ERROR", evidence=msg)
            self.record = rec
            raise UnusableJob(msg)
        rec.update(status=res.status, evidence=res.evidence, data=res.data, events=res.events[:50])
        if not self.job.meta_sent:  # the roll-up keeps a job's meta from its first record: it crosses xdist once
            rec["meta"] = audit.meta
            self.job.meta_sent = True
        self.record = rec

    def runtest(self) -> None:
        _outcome(self, self.record or {}, f"{self.job.job_id}::{self.principle.code}", str(self.job.ref.dir))

    def repr_failure(self, excinfo, style=None):
        # one line, ``P1: <reason>``; the node id beside it names the job (adapter/terminal.py)
        if isinstance(excinfo.value, AuditFailure):
            return str(excinfo.value)
        if isinstance(excinfo.value, UnusableJob):
            return f"unusable input: {excinfo.value}"
        if isinstance(excinfo.value, TrajauditWarning):  # -W error::…TrajauditWarning (a gate)
            return f"WARN as error: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):
        # setup errors are rendered through this (not repr_failure): keep them to one line, no traceback
        if isinstance(excinfo.value, UnusableJob | AuditFailure | TrajauditWarning):
            return self.repr_failure(excinfo, style)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self):
        return printable(str(self.path)), 0, self.domain

    @property
    def domain(self) -> str:
        """The item's name in failure headers: ``<job node id> <code>``. Never a suffix of the node id: pytest's
        ``-v`` line would otherwise rewrite the dots of such a suffix (``output.jsonl`` → ``output::jsonl``)."""
        return f"{self.job.nodeid} {self.principle.code}"

    @property
    def location(self) -> tuple[str, int | None, str]:
        """What ``Item.location`` makes of :meth:`reportinfo`, computed once per item (its reports share the tuple),
        with the path made printable and relative once per job rather than once per item (the absolute-path step
        is a measurable share of an item's cost; every item of a job has the job's path)."""
        loc = self._location
        if loc is None:
            job = self.job
            rel = job.__dict__.get("_trajaudit_relpath")
            if rel is None:
                from ._compat import node_relpath

                rel = node_relpath(self.session, printable(str(self.path)))
                job.__dict__["_trajaudit_relpath"] = rel
            loc = self._location = (rel, 0, self.domain)
        return loc

    @property
    def ihook(self):
        """``Node.ihook``: the hook proxy for the item's path, which pytest asks for three times per item (its
        assertion and warnings wrappers, the protocol). Every item of a job has the job's path, and once
        collection is over no conftest can join, so the proxy is looked up once per job from then on."""
        job = self.parent
        proxy = job.__dict__.get("_trajaudit_ihook")
        if proxy is None:
            proxy = self.session.gethookproxy(self.path)
            if self.session.stash.get(COLLECTED_KEY, False):
                job.__dict__["_trajaudit_ihook"] = proxy
        return proxy


def shed_empty(items: list[pytest.Item]) -> None:
    """Once collection (and with it -k/-m selection) is over: drop each audit item's empty set of extra keyword
    matches. Every item lives until the session ends; an empty set is about 200 bytes of it."""
    for item in items:
        if isinstance(item, PrincipleItem) and not item.__dict__.get("_extra_keyword_matches", True):
            item.__dict__["_extra_keyword_matches"] = None  # (reassigned, not deleted: the key table stays shared)


class GroupError(Exception):
    """A group item cannot be evaluated (e.g. --trajaudit-trials coverage): reported as an error."""


class TaskGroupNode(pytest.Collector):
    """The trials of one task under an audit root (folders named ``<task>__<trial>``), anchored on its first
    trial's file: node id ``<trial file>::<task>``, items ``<trial file>::<task>::PASSK`` and ``…::SB-2``; its id in
    verdicts is ``<root name>::<task>``. Planned from folder names (stat-only); its items run after every job
    item."""

    def __init__(self, *, members: list[tuple[str, JobRef]], root: Path, **kw: Any) -> None:
        super().__init__(**kw)
        self.members = members
        self.root = root

    def collect(self):
        for code in self.config.stash[STATE_KEY].group_codes:
            item = GroupItem.from_parent(self, name=code)
            for m in (code, "c0", group_checks()[code].family):
                item.add_marker(m)
            yield item


class GroupItem(pytest.Item):
    """A task-group check (its ``GroupCheck``: pass^k, integrity-adjusted, or skill impact) of one task group."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.record: dict[str, Any] | None = None
        self.warn_msg: str | None = None
        self.recomputed = 0
        self.na_msg: str | None = None
        self.report_keywords: Mapping[str, Any] | None = None  # adapter/outcomes.py: shared by the item's reports

    @property
    def group(self) -> TaskGroupNode:
        return self.parent  # type: ignore[return-value]

    @functools.cached_property
    def group_id(self) -> str:
        return f"{self.group.root.name}::{self.group.name}"

    def setup(self) -> None:
        state = self.config.stash[STATE_KEY]
        records, self.recomputed = gather(self.group.members, state.store, state.compute_record)
        res = evaluate(group_checks()[self.name].key, records, strict=state.strict_pass_k, trials=state.trials)
        self.record = self._record(res, records)
        if res.status == "ERROR":
            raise GroupError(clean(res.evidence))

    def _record(self, res: GroupResult, records: list[GroupRecord]) -> dict[str, Any]:
        return {"group": self.group_id, "task": self.group.name, "code": self.name, "tier": "C0",
                "family": group_checks()[self.name].family, "status": res.status,
                "evidence": clean(res.evidence), "data": res.data, "members": [r["job"] for r in records]}

    def runtest(self) -> None:
        _outcome(self, self.record or {}, f"{self.group_id}::{self.name}", str(self.path))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, AuditFailure):
            return str(excinfo.value)
        if isinstance(excinfo.value, GroupError):
            return f"{self.name}: {excinfo.value}"
        if isinstance(excinfo.value, TrajauditWarning):
            return f"WARN as error: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):
        if isinstance(excinfo.value, AuditFailure | GroupError | TrajauditWarning):
            return self.repr_failure(excinfo, style)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"{self.group_id}::{self.name}"


def _outcome(item: Any, rec: dict[str, Any], where: str, location: str) -> None:
    """Map a record's status onto the item's outcome: FAIL raises, WARN warns (made xfailed at makereport),
    N/A is made skipped at makereport, PASS returns."""
    if (rec.get("waiver") or {}).get("applied"):
        return  # waived (adapter/outcomes.py decided at setup): skipped at makereport, neither failed nor warned
    status, evidence = rec.get("status"), clean(rec.get("evidence", ""))  # clean already: kept as a last guard
    code = rec.get("code", "")
    msg = f"{code}: {evidence}"
    if status == "FAIL":
        raise AuditFailure(msg)
    if status == "WARN":
        # the xfail reason: JUnit's <skipped message>, pytest-html and IDEs show it, so it names the status
        item.warn_msg = f"WARN: {msg}"
        warnings.warn_explicit(TrajauditWarning(f"{where.rsplit('::', 1)[0]}::{msg}"), TrajauditWarning, location, 0)
        return
    if status == "N/A":
        # made skipped at makereport (adapter/outcomes.py), located at the item like pytest.skip(_use_item_location=True),
        # without raising: no traceback to build for the most common outcome
        item.na_msg = f"N/A: {msg}"


def in_shard(config: pytest.Config, ref: JobRef) -> bool:
    """``ref`` is a job of this run's ``--trajaudit-shard`` (every job without one)."""
    shard = config.stash.get(SHARD_KEY, None)
    if shard is None:
        return True
    from ..discover import shard as sharding

    return sharding.in_shard(ref, config.stash[STATE_KEY].roots, shard)


# set by adapter/configure.py (kept here so nodes and the adapter share one key without a circular import)
STATE_KEY = pytest.StashKey["Any"]()
SHARD_KEY = pytest.StashKey["Any"]()  # shard.Shard of --trajaudit-shard, absent when not sharded
COLLECTED_KEY = pytest.StashKey[bool]()  # in Session.stash: collection is over (adapter/collect.py)
