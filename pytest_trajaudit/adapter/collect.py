"""Collection: audited directories become TreeNodes (never pytest's Dir/Package), plain pytest stays out of
``trajaudit_roots``, and the collected items are ordered job by job."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..scan.redact import printable
from . import rollup
from .configure import State, abspath, active, inside_roots
from .nodes import COLLECTED_KEY, STATE_KEY, GroupItem, PrincipleItem, TreeNode, shed_empty


def finish(session: pytest.Session) -> None:
    """Collection is over: mark it, and hand this collection's manifest to the roll-up (on a worker, through
    ``workeroutput``)."""
    session.stash[COLLECTED_KEY] = True  # no conftest joins after this: PrincipleItem.ihook is fixed per job
    state = session.config.stash.get(STATE_KEY, None)
    if state is not None:
        shed_empty(session.items)
        # which integrity items this collection will run, for the roll-up (completeness.py)
        from ..aggregate.completeness import manifest, session_integrity

        m = manifest(state.collected_jobs, session.items, [p.code for p in state.principles])
        if state.narrowed:  # the jobs a path or node id left out: every integrity principle deselected
            codes = session_integrity(state.declarations())
            for job_id in left_out(session.config, state, {j.job_id for j in state.collected_jobs}):
                m.setdefault(job_id, [list(codes), [], list(codes)])
        if hasattr(session.config, "workerinput"):
            session.config.workeroutput["trajaudit_coverage"] = m  # type: ignore[attr-defined]
        elif rollup.ROLLUP_KEY in session.config.stash:
            session.config.stash[rollup.ROLLUP_KEY].rollup.coverage.add(m)  # type: ignore[union-attr]  # RollupPlugin sets it when built


def left_out(config: pytest.Config, state: State, collected: set[str]) -> list[str]:
    """The ids of the jobs under the audit roots that the positional paths or node ids (``state.narrowed``) left
    out of collection, walked the way collection walks (stat-only, the session's cached view): a job directory
    that was not collected, and a loose run file (a multi-record file, a ``*.traj``) that no narrowing path
    covers whole. Jobs of another ``--trajaudit-shard`` are not this run's."""
    from ..discover.jobs import bare_file, loose_files
    from .nodes import in_shard

    sel = [(abspath(a.partition("::")[0]), bool(a.partition("::")[2])) for a in state.narrowed]
    roots = [r for r in state.roots if any(r == p or r in p.parents for p, _ in sel)]
    roots = [r for r in roots if not any(o != r and o in r.parents for o in roots)]  # nested roots: walked once
    out: list[str] = []
    for root in roots:
        stack = [root]
        while stack:
            d = stack.pop()
            ref = state.walk.classify(d)
            if ref is not None:
                if in_shard(config, ref) and state.job_id(ref) not in collected:
                    out.append(state.job_id(ref))
                continue
            for f in loose_files(d):
                whole = any(not parts and (p == f or p in f.parents) for p, parts in sel)
                if not whole and in_shard(config, bare_file(f)):
                    out.append(state.job_id(bare_file(f)))
            stack.extend(reversed(state.walk.subdirs(d)))
    return out


def directory(path: Path, parent: pytest.Collector) -> TreeNode | None:
    """An audited directory (or one leading to an audit root) as a TreeNode; anything else is pytest's."""
    state: State | None = parent.config.stash.get(STATE_KEY, None)
    if state is None:
        return None
    path = abspath(path)
    walk = state.under_root(path)
    bare = tuple(sorted(f for f in state.bare_files if f.parent == path))
    # A directory between rootdir and a deeper root must not stay pytest's Dir/Package: a Package imports
    # its __init__.py. It becomes a TreeNode that only leads towards the roots.
    leads = not walk and state.leads_to_root(path)
    if walk or bare or leads:
        return TreeNode.from_parent(parent, path=path, walk=walk, bare=bare)
    return None


def ignore(collection_path: Path, config: pytest.Config) -> bool | None:
    """Plain pytest (plugin inactive) never walks into the configured audit roots."""
    if active(config):
        return None
    roots = [abspath(p) for p in config.getini("trajaudit_roots")]
    if roots and inside_roots(collection_path, roots):
        return True
    return None


def plain_pytest_notice(session: pytest.Session, exitstatus: int) -> None:
    """Plain pytest with ``trajaudit_roots`` configured found nothing to run: say in one line that the audit
    needs ``--trajaudit`` and exit with pytest's usage-error code (4) instead of a silent 5 ("no tests
    collected"), which a CI step could read as "nothing to audit"."""
    config = session.config
    if active(config) or exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED or hasattr(config, "workerinput"):
        return
    roots = [str(p) for p in config.getini("trajaudit_roots")]
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if not roots or (tr is not None and tr.stats.get("deselected")):  # -k/-m deselected the project's own tests
        return
    shown = ", ".join(printable(os.path.relpath(r, config.invocation_params.dir)) for r in roots)
    line = (f"trajaudit: trajaudit_roots is set ({shown}) but plain pytest does not audit; "
            "run `pytest --trajaudit` (or `trajaudit`)")
    if tr is not None:
        tr.write_line("ERROR: " + line, red=True, bold=True)
    else:
        import sys

        print("ERROR: " + line, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.USAGE_ERROR


def order(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each job's items contiguous (undoes pytest-randomly's shuffle) and tell each job which of its
    principles are still selected, so it computes only those."""
    if STATE_KEY not in config.stash:
        return
    order: dict[int, int] = {}
    groups: dict[int, list[pytest.Item]] = {}
    others: list[pytest.Item] = []
    task_groups: list[pytest.Item] = []
    for it in items:
        if isinstance(it, PrincipleItem):
            key = id(it.parent)
            order.setdefault(key, len(order))
            groups.setdefault(key, []).append(it)
        elif isinstance(it, GroupItem):
            task_groups.append(it)
        else:
            others.append(it)
    regrouped = [it for key in sorted(groups, key=order.__getitem__) for it in groups[key]]
    for group in groups.values():
        group[0].parent.selected = [it.principle.code for it in group]  # type: ignore[attr-defined,union-attr]  # a job's PrincipleItems under their JobNode
    # group items last, in node-id order: they read what the jobs published (groups.py)
    # judge items (a judge principle with judges configured) last: their answers arrive while the rest runs. A job
    # keeps its other items together and only its small pending judge state until then (JobNode.release). Under
    # xdist, loadscope still sends a job as one unit, so there they end that unit.
    judged = [it for it in regrouped if getattr(it, "principle", None) is not None and it.principle.judge]  # type: ignore[attr-defined]  # PrincipleItems (getattr above)
    judge_cfg = getattr(config.stash[STATE_KEY].settings, "judge", None)
    if judged and judge_cfg is not None:
        regrouped = [it for it in regrouped if not (it.principle.judge)]  # type: ignore[attr-defined]
        # in-process, a judge item about to wait loads the next jobs with judge items first (their requests go
        # out meanwhile: a judge-only selection such as -m P3 still overlaps its calls). Not on an xdist worker:
        # there the controller decides what runs next.
        if not hasattr(config, "workerinput"):
            ahead = list(dict.fromkeys(it.parent for it in judged))
            for n, job in enumerate(ahead):
                job.prefetch = ahead[n + 1:n + 1 + judge_cfg.concurrency]  # type: ignore[union-attr]  # JobNodes
    else:
        judged = []
    items[:] = regrouped + others + sorted(task_groups, key=lambda it: it.nodeid) + judged
