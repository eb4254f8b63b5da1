"""The maintainer's properties of the tree: a principle is declared once (no code outside the registry modules
names it, help texts and the published schemas aside, and its declared role alone decides what it does to a
verdict), docs that follow the code, no module over 700 lines, and no project history in code, tests, docs or
benchmarks."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_trajaudit.principles import group_checks, registry

from .jobfactory import CURL_ANSWERS as CURL
from .jobfactory import make_job

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "pytest_trajaudit"
TEMPLATE = REPO / "conftest_templates" / "custom_principle" / "trajaudit_network.py"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PAGES = [*DOCS, REPO / "conftest_templates" / "README.md", REPO / "benchmarks" / "README.md"]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")

# a principle code, or a code prefix used to match codes ("TG-", "ADV-")
CODE = re.compile(r"(?<![\w-])(?:P\d{1,2}[a-z]?|(?:SB|ADV|TG)-(?:\d+[a-z]?)?|PASSK)(?!\w)")

# Package modules outside principles/ whose string literals may name codes, and why. Each such code must be a
# registered one (test_allowed_code_texts_name_registered_codes).
CODE_TEXTS_ALLOWED = {
    # the option help texts: documentation printed by every `pytest --help`; rendering them from the registry
    # would import every principle module in every pytest run (tests/test_cli.py pins the CLI's copy)
    "plugin.py": "option help",
    "cli/main.py": "the trajaudit command's --help text",
    # the published JSON schemas (pytest_trajaudit/schemas/): their enums and descriptions are a contract; the
    # advisor-leakage audit's output keys its checks by code (the seed's advisor-audit.md format)
    "report/schema.py": "published schema enums and descriptions",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _code_literals(path: Path) -> list[tuple[int, str]]:
    """(line, literal) of every string constant naming a code, docstrings aside (they document)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
            and CODE.search(n.value)]


def _outside_registry() -> dict[str, list[tuple[int, str]]]:
    return {rel: hits for f in sorted(PACKAGE.rglob("*.py"))
            if (rel := f.relative_to(PACKAGE).as_posix()).split("/")[0] != "principles"
            and (hits := _code_literals(f))}


def test_no_principle_code_is_written_outside_the_registry_modules() -> None:
    """Aggregation, groups, reports, nodes and judges find a principle by its declared key, family or role
    (``principles.code_for``, ``family_codes``, ``group_checks``), never by writing its code."""
    bad = [f"pytest_trajaudit/{rel}:{line}: {text[:80]!r}" for rel, hits in _outside_registry().items()
           if rel not in CODE_TEXTS_ALLOWED for line, text in hits]
    assert bad == [], "a principle code outside pytest_trajaudit/principles/ (read the registry instead):\n" + \
        "\n".join(bad)


def test_allowed_code_texts_name_registered_codes() -> None:
    """The allowed texts name only codes the registry declares (a renamed code fails here), and each allowance
    is still needed."""
    known = {*registry(), *group_checks()}
    hits = _outside_registry()
    for rel in CODE_TEXTS_ALLOWED:
        assert hits.get(rel), f"{rel} names no code any more: drop it from CODE_TEXTS_ALLOWED"
        named = {c for _, text in hits[rel] for c in CODE.findall(text)}
        assert named - known == set(), (rel, sorted(named - known))


def test_the_schema_enums_are_the_registry_s() -> None:
    from pytest_trajaudit.principles import family_codes
    from pytest_trajaudit.principles.advisor import CHECKS
    from pytest_trajaudit.report import schema

    assert family_codes("advisor") == tuple(CHECKS)
    assert set(schema.GroupSummary.model_fields["code"].annotation.__args__) == set(group_checks())
    advisor_checks = schema.AdvisorAudit.model_fields["checks"].annotation.__args__[0].__args__
    assert advisor_checks == family_codes("advisor")


# --- a principle's role alone decides its effect on the verdict ---------------------------------------------------

def _template_with_role(pytester: pytest.Pytester, role: str) -> None:
    """conftest_templates/custom_principle copied with ``role=`` changed in its declaration, and nothing else."""
    text = TEMPLATE.read_text(encoding="utf-8")
    edited = text.replace('key="org_no_network", role="integrity")', f'key="org_no_network", role="{role}")')
    changed = [(a, b) for a, b in zip(text.splitlines(), edited.splitlines(), strict=True) if a != b]
    assert len(changed) == (role != "integrity") and all("ORG_1 = Principle(" not in a for a, _ in changed)
    (pytester.path / "plugins").mkdir()
    (pytester.path / "plugins" / "trajaudit_network.py").write_text(edited, encoding="utf-8")
    pytester.syspathinsert(pytester.path / "plugins")
    make_job(pytester.path / "runs", "quiet")
    make_job(pytester.path / "runs", "netty", lines=CURL)


def _audit(pytester: pytest.Pytester) -> pytest.RunResult:
    # the integrity principles and ORG-1 (every integrity check runs: the PR verdict is never INCOMPLETE)
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "trajaudit_network", "--trajaudit=runs",
                              "--trajaudit-report=out", "--trajaudit-principles=P1,P2,P11,P16,ORG-1")


def test_the_template_principle_declared_integrity_invalidates_its_job(pytester: pytest.Pytester) -> None:
    _template_with_role(pytester, "integrity")
    result = _audit(pytester)
    result.stdout.fnmatch_lines(["2 job(s): 1 CLEAN, 1 INVALID", "PR verdict: REJECT — INVALID job: runs/netty",
                                 "INVALID runs/netty/result.json: ORG-1 FAIL: #1 Bash: curl*"])
    assert result.ret == 1


def test_the_template_principle_declared_quality_makes_its_job_warn(pytester: pytest.Pytester) -> None:
    _template_with_role(pytester, "quality")
    result = _audit(pytester)
    result.stdout.fnmatch_lines(["2 job(s): 1 CLEAN, 1 WARN", "PR verdict: *",
                                 "WARN    runs/netty/result.json: ORG-1 FAIL: #1 Bash: curl*"])
    assert "INVALID" not in result.stdout.str() and "REJECT" not in result.stdout.str()


def test_the_template_principle_declared_info_leaves_the_verdict_alone(pytester: pytest.Pytester) -> None:
    _template_with_role(pytester, "info")
    result = _audit(pytester)
    result.stdout.fnmatch_lines(["2 job(s): 2 CLEAN"])


# --- docs/extending.md, followed literally ---------------------------------------------------------------------

def _python_blocks(page: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", page, re.M | re.S)


def test_the_extending_walkthrough_works_as_written(pytester: pytest.Pytester) -> None:
    """The one-file principle and its fixture test of docs/extending.md, saved under the names the page gives
    and run with the command it gives: the fixture test passes."""
    page = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    plugin, test = _python_blocks(page)[:2]
    assert "`trajaudit_todo.py`:" in page and "`test_trajaudit_todo.py`:" in page
    assert "    PYTHONPATH=. pytest -p trajaudit_todo --trajaudit=runs/ -m ORG-2" in page
    assert "\n    PYTHONPATH=. pytest test_trajaudit_todo.py\n" in page
    (pytester.path / "trajaudit_todo.py").write_text(plugin, encoding="utf-8")
    (pytester.path / "test_trajaudit_todo.py").write_text(test, encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_trajaudit_todo.py")
    result.assert_outcomes(passed=1)
    # the hook and the declaration it documents are the ones the package defines
    from pytest_trajaudit import hookspecs
    from pytest_trajaudit.principles import Principle, principle

    assert hasattr(hookspecs, "pytest_trajaudit_principles")
    assert "principle(code, title, *, tier, family, key, role=\"quality\", judge=False, na_warns=False)" in page
    import inspect

    assert str(inspect.signature(principle)) == ("(code: 'str', title: 'str', *, tier: 'str', family: 'str', "
                                                 "key: 'str', role: 'str' = 'quality', judge: 'bool' = False, "
                                                 "na_warns: 'bool' = False) -> 'Callable[[Check], Check]'")
    assert [f for f in Principle.__dataclass_fields__][:6] == ["code", "title", "tier", "family", "func", "key"]


# --- the README and the option docs ------------------------------------------------------------------------------

def _expand(cell: str) -> set[str]:
    """``SB-1, SB-3a, SB-3c``, ``TG-1 … TG-5`` and ``P3–P10`` as the codes they name."""
    codes: set[str] = set()
    for part in cell.split(","):
        m = re.fullmatch(r"\s*([A-Z]+-?)(\d+)\s*[…–]\s*\1(\d+)\s*", part)
        if m:
            codes |= {f"{m.group(1)}{i}" for i in range(int(m.group(2)), int(m.group(3)) + 1)}
        else:
            codes.add(part.strip())
    return codes


def test_the_readme_lists_every_principle_and_what_a_newcomer_needs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Principles", 1)[1].split("\n## ", 1)[0]
    listed = set().union(*(_expand(row.split("|")[1]) for row in table.splitlines()
                           if row.startswith("| ") and not row.startswith("| code")))
    assert listed == {*registry(), *group_checks()}
    for section in ("## Quick start", "What you should see", "## Main options", "## Principles", "## CI",
                    "## Documentation"):
        assert section in readme, section
    assert "-W error::pytest_trajaudit.TrajauditWarning" in readme
    import pytest_trajaudit

    assert pytest_trajaudit.TrajauditWarning.__module__ == "pytest_trajaudit"


def test_the_role_lists_of_the_docs_are_the_registry_s() -> None:
    from pytest_trajaudit.principles import integrity_codes

    roles = {r: {c for c, p in registry().items() if p.role == r} for r in ("integrity", "quality", "info")}
    verdicts = (REPO / "docs" / "verdicts.md").read_text(encoding="utf-8")
    for role, codes in roles.items():
        row = next(ln for ln in verdicts.splitlines() if ln.startswith(f"| `{role}` |"))
        assert _expand(row.rstrip(" |").rsplit("|", 1)[1]) == codes, role
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"The integrity principles ({', '.join(integrity_codes(registry()))}) decide" in readme


def test_every_option_and_ini_key_is_documented_in_usage(pytester: pytest.Pytester) -> None:
    usage = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    help_text = "\n".join(pytester.runpytest("--help").outlines)
    options = set(re.findall(r"--trajaudit(?:-[a-z-]+[a-z])?", help_text))
    inis = set(re.findall(r"^  (trajaudit_[a-z_]+)\b", help_text, re.M))
    assert len(options) > 20 and len(inis) > 20
    undocumented = sorted(o for o in options if not re.search(rf"`{re.escape(o)}[`=\[ ]", usage))
    undocumented += sorted(i for i in inis if f"`{i}`" not in usage)
    assert undocumented == []
    # and no page names an option or ini key the plugin does not have
    stale = sorted({f"{page.relative_to(REPO)}: {o}" for page in DOCS
                    for o in re.findall(r"(?<![\w-])--trajaudit(?:-[a-z-]+[a-z])?", page.read_text(encoding="utf-8"))
                    if o not in options})
    stale += sorted({f"{page.relative_to(REPO)}: {i}" for page in DOCS
                     for i in re.findall(r"`(trajaudit_[a-z_]+)`", page.read_text(encoding="utf-8")) if i not in inis})
    assert stale == []


# --- docs: every path they cite exists; the specification is cited as the seed's --------------------------------

# backticked paths into the repository: a top-level folder of it, or a package folder cited from the package
REPO_PATH = re.compile(r"`((?:pytest_trajaudit|benchmarks|tests|conftest_templates|examples|docs|fuzz|\.ci|adapter|"
                       r"aggregate|advisor|cli|discover|judges|loaders|principles|report|scan|schemas)/[\w./*-]*)"
                       r"(?:::[\w\[\]-]+)?`")
# a task's own tests folder, as Harbor lays a task out (tests/test_outputs.py, tests/fixtures/...), not this one's
# and a job's advisor folder (advisor/task_material_manifest.json)
NOT_OURS = ("tests/test_outputs.py", "tests/fixtures/", "advisor/task_material_manifest.json", "advisor/audit.json")
SPEC_DOCS = ("DESIGN.md", "RULES.md", "PYTEST-NOTES.md", "audit-general.md", "audit-skillsbench.md",
             "advisor-audit.md", "trace-grader.md")


def _resolves(page: Path, target: str) -> bool:
    target = target.rstrip("/")
    bases = [REPO, PACKAGE, page.parent]
    if "*" in target:
        return any(list(b.glob(target)) for b in bases)
    return any((b / target).exists() for b in bases)


def test_every_repository_path_the_docs_cite_exists() -> None:
    """README.md, docs/, and the READMEs of conftest_templates/ and benchmarks/: backticked paths and links."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
        for target in REPO_PATH.findall(page.read_text(encoding="utf-8")):
            if not target.startswith(NOT_OURS) and not _resolves(page, target):
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert broken == []


def test_the_docs_cite_the_specification_as_the_seed_s_never_as_a_file() -> None:
    """The specification documents are not shipped: the docs name one as "the seed's <name>" (what it says is
    described where it matters; docs/spec-differences.md lists them), never as a link or a path."""
    bad = []
    name = "|".join(re.escape(d) for d in SPEC_DOCS)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(rf"(?<![\w/.-])({name})(?![\w-])", text):
            before = text[max(0, m.start() - 20):m.start()]
            if m.group(1) == "trace-grader.md" and (before.endswith(("](", "docs/")) or text[m.end():m.end() + 1]
                                                    in (")", "#")):
                continue  # docs/trace-grader.md, this repository's page
            if not re.search(r"(?:the seed's|seed|specification's)\s$|\*\*$", before):  # **name**: its entry
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{page.relative_to(REPO)}:{line}: …{before}{m.group(1)}")
        bad += [f"{page.relative_to(REPO)}: {m.group(0)}" for m in re.finditer(r"\.\./shared/spec\b", text)]
    assert bad == []


# --- module size and history ---------------------------------------------------------------------------------

def test_no_module_is_over_700_lines() -> None:
    big = {f.relative_to(REPO).as_posix(): n for f in PACKAGE.rglob("*.py")
           if (n := len(f.read_text(encoding="utf-8").splitlines())) > 700}
    assert big == {}


HISTORY = re.compile(
    r"\b(?:sessions?|issues?|waves?|sprints?|iterations?|milestones?|rounds?) #?\d+\b"
    r"|\bpreviously\b|\bno longer\b(?!\s+(?:has|have|had|maps?|satisf\w*|appl\w*|changes?|shaped|match\w*)\b)"
    r"|\bused to (?:be|crash|fail|hang|take|raise|return|give|make|show|print|run)\b"
    r"|\b(?:was|were|got|has been|have been) (?:changed|fixed|renamed|moved|rewritten|refactored|sped up)\b"
    r"|\bnow fixed\b|\bformerly\b|(?<![\w-])(?:down|up) from \d|\btook \d[\d.,]* ?(?:s|ms|µs|min|seconds|minutes)\b"
    r"|\bbefore (?:this|the) (?:change|fix|commit|refactor)|\bafter (?:this|the) (?:change|fix|commit|refactor)"
    r"|\bwhat the campaign found\b|\bcampaign seed \d",
    re.I)
# the loader's module docstring names the project's old name, as its upstream documents it
HISTORY_ALLOWED = {("pytest_trajaudit/loaders/openhands.py", "formerly")}


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    keep = (".py", ".md", ".ini", ".toml", ".yaml", ".yml", ".cfg", ".txt", ".sh", "")
    return [REPO / p for p in out.decode().split("\0") if p
            and p.split("/")[0] in ("pytest_trajaudit", "tests", "docs", "benchmarks", "conftest_templates",
                                     "examples", "fuzz", ".ci", "README.md", "pyproject.toml")
            and not p.startswith("examples/runs/") and Path(p).suffix in keep]


def test_no_project_history_in_the_tree() -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    hits = []
    for f in _tracked_text_files():
        if not f.is_file():
            continue
        rel = f.relative_to(REPO).as_posix()
        text = f.read_text(encoding="utf-8", errors="replace")
        for m in HISTORY.finditer(text):
            if (rel, m.group(0).lower()) in HISTORY_ALLOWED or rel == "tests/test_maintainability.py":
                continue
            hits.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}")
    assert hits == []


def test_the_history_patterns_catch_history() -> None:
    # the numbered samples are built from their parts, so this file holds no such phrase itself
    numbered = tuple(f"{before}{word} {sign}{n}{after}" for before, word, sign, n, after in (
        ("measured in ", "session", "", 3, ""), ("see ", "issue", "#", 12, ""), ("", "wave", "", 2, " moved it")))
    for text in (*numbered, "this was previously slow",
                 "it no longer crashes", "a name used to crash the report", "the check was changed",
                 "the scan took 20 s", "replays what the campaign found"):
        assert HISTORY.search(text), text
    for text in ("GitHub issues", "a session transcript", "the step 4 edit", "the previous event",
                 "a part that no longer has the key's shape", "the -n 2 speed-up from 1.2x"):
        assert not HISTORY.search(text), text



def test_code_comments_cite_the_specification_as_the_seed_s() -> None:
    """The same convention in code, tests and benchmarks: a line naming a specification document says whose."""
    name = re.compile(r"(?<![\w/.-])(?:" + "|".join(re.escape(d) for d in SPEC_DOCS) + r")(?![\w-])")
    bad = []
    for folder in ("pytest_trajaudit", "tests", "benchmarks", "fuzz", "conftest_templates"):
        for f in sorted((REPO / folder).rglob("*.py")):
            # report/schema.py: its docstrings are the published JSON schemas' descriptions, kept as shipped
            if f.name == "test_maintainability.py" or f == PACKAGE / "report" / "schema.py":
                continue
            lines = f.read_text(encoding="utf-8").splitlines()
            for i, line in enumerate(lines, 1):
                said = line if i == 1 else lines[i - 2][-20:] + " " + line  # "the seed's" may end the line above
                if name.search(line) and not re.search(r"\b[Ss]eed's\b", said):
                    bad.append(f"{f.relative_to(REPO)}:{i}: {line.strip()[:100]}")
    assert bad == []


def test_every_principle_s_module_has_its_fixtures() -> None:
    """The maintainer's tour (docs/principles.md → a principle's module → its fixtures): each family module that
    declares a principle has its tests where docs/principles.md says, and they name each of its codes."""
    missing = []
    for code, p in registry().items():
        module = p.func.__module__.rsplit(".", 1)[-1]
        tests = [REPO / "tests" / "principles" / f"test_{module}.py"]
        if module == "advisor":
            tests = sorted((REPO / "tests" / "advisor").glob("test_*.py"))
        text = "".join(t.read_text(encoding="utf-8") for t in tests if t.is_file())
        if not re.search(rf"(?<![\w-]){re.escape(code)}(?![\w])", text):
            missing.append(f"{code}: {module}.py")
    assert missing == []


# where verdicts and reports are built: aggregation, task groups, the summary and audit JSON, the nodes
DESCRIBED_NOT_CODED = ("aggregate/completeness.py", "aggregate/groups.py", "aggregate/verdicts.py",
                       "report/summary.py", "report/audit.py", "adapter/nodes.py")


def test_aggregation_reports_and_nodes_describe_principles_by_what_they_check() -> None:
    """Their comments and docstrings say "the skill-invocation status", never "SB-1 status"; a code appears only
    inside a ``literal`` example of an output line or a node id."""
    import io
    import tokenize

    bad = []
    for rel in DESCRIBED_NOT_CODED:
        path = PACKAGE / rel
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        docs = _docstrings(tree)
        texts = [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) in docs]
        texts += [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                  if tok.type == tokenize.COMMENT]
        for line, text in texts:
            prose = re.sub(r"``.*?``", "", text, flags=re.S)
            bad += [f"pytest_trajaudit/{rel}:{line}: {m.group(0)}" for m in CODE.finditer(prose)]
    assert bad == []
