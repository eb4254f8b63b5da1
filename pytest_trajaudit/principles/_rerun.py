"""P12's verifier re-run: the task's own verifier (trusted, from the task directory) in a subprocess on syntactic
perturbations of the agent's output artifact (data, copied to a private temp dir; never imported or executed).

task.toml::

    [trajaudit.p12]
    output = "/root/answer.json"                 # where the agent wrote its output (container path)
    command = ["python", "{tests_dir}/check.py", "{output}"]   # exit 0 = pass; run with cwd = a temp dir
    timeout = 60                                 # optional, seconds (default: Settings.verifier_timeout)

Placeholders: ``{output}`` (the perturbed artifact's path), ``{tests_dir}`` (a private copy of the task's
``tests/``), ``{task_dir}``, ``{python}`` (this interpreter). The same values are in the environment as
``TRAJAUDIT_OUTPUT``, ``TRAJAUDIT_TESTS_DIR``, ``TRAJAUDIT_TASK_DIR``. The artifact is looked up in the job at
``artifacts/<output path without the leading />`` then ``artifacts/<file name>``.

What may run (docs/trust.md): re-runs happen only with ``--trajaudit-rerun`` (``Settings.rerun``); otherwise P12 is
N/A. The command comes from the task directory (trusted). Nothing that comes from the job directory is ever
executed: the agent's artifact is data, copied (never linked) with mode 0600 to a private temporary directory, and
the re-run is refused (N/A) when

- the task directory, a command argument or the program found on ``PATH`` lies in the job directory (compared by
  real path, so a symlink pointing there counts);
- the command would run the artifact itself: ``{output}`` as the program, or as the script of an interpreter or
  shell (``bash {output}``, ``python -u {output}``, ``env X=1 sh {output}``);
- the artifact looks like code: a code file suffix (``CODE_SUFFIXES``, defence in depth), a ``#!`` line, or an
  executable binary's magic bytes (ELF, Mach-O, PE).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..model import Finding, Job, Task, UnusableInput
from ..safeio import Budget, file_kind, read_bytes
from ..scan import linre
from ..settings import Settings

CODE_SUFFIXES = {".py", ".pyc", ".pyw", ".pyz", ".pth", ".sh", ".bash", ".zsh", ".ksh", ".csh", ".tcsh", ".fish",
                 ".ps1", ".psm1", ".psd1", ".bat", ".cmd", ".vbs", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".pm",
                 ".so", ".dylib", ".dll", ".jar", ".class", ".wasm", ".exe", ".bin", ".ipynb", ".php", ".lua", ".r",
                 ".go", ".rs", ".c", ".cc", ".cpp", ".java", ".swift", ".kt", ".scala", ".tcl", ".awk", ".applescript"}
# Leading bytes of executables: ELF, Mach-O (both byte orders, 32/64 bit, universal), PE ("MZ").
BINARY_MAGIC = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                b"\xca\xfe\xba\xbe", b"MZ")
# Programs that run their first operand as code (a script, a command): ``{output}`` there executes the artifact.
INTERPRETERS = frozenset({
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "python", "python2", "python3",
    "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "luajit", "rscript", "r", "pwsh",
    "powershell", "osascript", "tclsh", "wish", "java", "awk", "gawk", "mawk", "source", "exec", "xargs", "nohup",
    "timeout", "nice", "stdbuf", "sudo", "chroot", "setsid", "env", "uv", "uvx", "npx", "pipx",
})
# Options after which the code is inline (or a module name) and later operands are data. In a shell only -c
# (``sh -e`` is errexit).
INLINE_CODE = frozenset({"-e", "-E", "--eval", "-p", "--print", "-r", "-Command", "-command"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox"})
MAX_CAPTURE = 4000


def _na(reason: str, **extra: Any) -> Finding:
    return Finding.na(reason, {"checked": False, "perturbations_passing": [], **extra})


def find_artifact(job: Job, output: str) -> str | None:
    for rel in (f"artifacts/{output.lstrip('/')}", f"artifacts/{Path(output).name}"):
        if ".." in Path(rel).parts:
            continue
        if file_kind(job.dir, rel) == "file":
            return rel
    return None


def perturbations(data: bytes) -> list[tuple[str, bytes]]:
    """Allowed syntactic perturbations (the seed's audit-general.md P12), each distinct from the original and each
    other."""
    out: list[tuple[str, bytes]] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return out
    doc: Any = None
    is_json = False
    try:
        doc = json.loads(text, parse_float=_Num.parse)
        is_json = True
    except ValueError:
        pass
    cands: list[tuple[str, str]] = []
    if is_json:
        # every variant is written by _dump, which keeps each number as the document spelled it unless the
        # variant is about number spellings: one change at a time. The number respellings also keep the trailing
        # newline.
        nl = "\n" if text.endswith("\n") else ""
        cands.append(("whitespace: compact JSON", _dump(doc, separators=(",", ":"))))
        cands.append(("whitespace: JSON with spaces", _dump(doc)))
        cands.append(("whitespace: indented JSON", _dump(doc, indent=2)))
        cands.append(("key order reversed", _dump(_reverse_keys(doc))))
        cands.append(("integral floats as ints", _dump(_floats_to_ints(doc)) + nl))
        cands.append(("ints as floats", _dump(_ints_to_floats(doc)) + nl))
        cands.append(("decimals in exponent notation", _dump(doc, spell=exponent) + nl))
        cands.append(("exponents as decimals", _dump(doc, spell=lambda x: positional(x) if _Num.has_exponent(x)
                                                      else _Num.text_of(x)) + nl))
    else:
        lines = [" ".join(ln.split()) for ln in text.splitlines()]
        cands.append(("whitespace normalized", "\n".join(lines) + ("\n" if text.endswith("\n") else "")))
        cands.append(("integral floats as ints", _respell(text, lambda x: str(int(x)) if x.is_integer() else None)))
        cands.append(("decimals in exponent notation", _respell(text, exponent, decimals_only=True)))
        cands.append(("exponents as decimals", _respell(text, positional, exponents_only=True)))
    if text.endswith("\n"):
        cands.append(("trailing newline removed", text.rstrip("\n")))
    else:
        cands.append(("trailing newline added", text + "\n"))
    seen = {text}
    for name, t in cands:
        if t not in seen:
            seen.add(t)
            out.append((name, t.encode("utf-8")))
    return out


# Number spellings (the seed's audit-general.md P12: ``1.0 ↔ 1``, ``0.5 ↔ 5e-1``). In text outputs only tokens that
# are decimals or exponent numbers are respelled (``0.5``, ``5e-1``): integers are often ids (``0042``), and
# tokens with more dots are versions (``v1.5.2``).
_TEXT_TOKEN = linre.compile(r"[^\s,;:=\[\](){}\"']+")
_DECIMAL = linre.compile(r"-?\d+\.\d+")
_EXP_NUMBER = linre.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")


def exponent(x: float) -> str:
    """The shortest exponent spelling: 0.5 → ``5e-1``, 123.25 → ``1.2325e2``, -0.001 → ``-1e-3``, 1.0 → ``1e0``."""
    d = Decimal(repr(x)).normalize()
    sign, digits, exp = d.as_tuple()
    if not isinstance(exp, int):  # nan / infinity have no other spelling
        return repr(x)
    mant = "".join(map(str, digits))
    e = exp + len(mant) - 1
    body = mant[0] + ("." + mant[1:] if len(mant) > 1 else "")
    return ("-" if sign else "") + f"{body}e{e}"


def positional(x: float) -> str:
    """The decimal spelling without an exponent: 1e-05 → ``0.00001``, 1e20 → ``100000000000000000000.0``."""
    if x != x or x in (float("inf"), float("-inf")):
        return repr(x)
    t = format(Decimal(repr(x)), "f")
    return t if "." in t else t + ".0"


class _Num(float):
    """A JSON float that remembers how the document spelled it (``5e-1``, ``0.50``)."""

    __slots__ = ("text",)
    text: str

    @classmethod
    def parse(cls, text: str) -> _Num:
        x = cls(text)
        x.text = text
        return x

    @staticmethod
    def text_of(x: float) -> str:
        return x.text if isinstance(x, _Num) else json.dumps(x)

    @staticmethod
    def has_exponent(x: float) -> bool:
        return isinstance(x, _Num) and ("e" in x.text or "E" in x.text)


def _dump(v: Any, spell: Any = _Num.text_of, indent: int | None = None,
          separators: tuple[str, str] | None = None, level: int = 0) -> str:
    """JSON in json.dumps' layout (``indent``, ``separators`` as json.dumps takes them) with every float spelled
    by ``spell`` (by default as the document spelled it)."""
    item_sep, key_sep = separators or ((",", ": ") if indent is not None else (", ", ": "))
    if isinstance(v, float):
        return spell(v) if math.isfinite(v) else json.dumps(float(v))
    if not isinstance(v, dict | list) or not v:
        return json.dumps(v, ensure_ascii=False)
    parts = ([f"{json.dumps(k, ensure_ascii=False)}{key_sep}{_dump(x, spell, indent, separators, level + 1)}"
              for k, x in v.items()] if isinstance(v, dict)
             else [_dump(x, spell, indent, separators, level + 1) for x in v])
    open_, close = "{}" if isinstance(v, dict) else "[]"
    if indent is None:
        return open_ + item_sep.join(parts) + close
    pad, inner = "\n" + " " * (indent * level), "\n" + " " * (indent * (level + 1))
    return open_ + inner + (item_sep + inner).join(parts) + pad + close


def _respell(text: str, spell: Any, *, decimals_only: bool = False, exponents_only: bool = False) -> str:
    """``text`` with each number token respelled by ``spell`` (a token ``spell`` returns None for is kept)."""
    def one(m: Any) -> str:
        tok: str = m.group(0)
        is_exp = _EXP_NUMBER.fullmatch(tok) is not None
        if not (is_exp or _DECIMAL.fullmatch(tok)) or (decimals_only and is_exp) or (exponents_only and not is_exp):
            return tok
        try:
            x = float(tok)
        except (ValueError, OverflowError):
            return tok
        got: str | None = spell(x)
        return tok if got is None else got

    return _TEXT_TOKEN.sub(one, text)


def _reverse_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _reverse_keys(v[k]) for k in reversed(list(v))}
    if isinstance(v, list):
        return [_reverse_keys(x) for x in v]
    return v


def _floats_to_ints(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, dict):
        return {k: _floats_to_ints(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_floats_to_ints(x) for x in v]
    return v


def _ints_to_floats(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**53:
        return float(v)
    if isinstance(v, dict):
        return {k: _ints_to_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_ints_to_floats(x) for x in v]
    return v


def _copy_tests(task: Task, dest: Path) -> None:
    """Copy the task's tests/ (regular files only, no symlinks) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in task.privileged:
        if not f.rel.startswith("tests/"):
            continue
        target = dest / f.rel[len("tests/"):]
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            target.write_bytes(read_bytes(task.dir, f.rel, Budget(64 * 2**20, 64 * 2**20)))
        except UnusableInput:
            continue


def kill_group(p: subprocess.Popen[Any]) -> None:
    """Kill a process started with ``start_new_session=True`` together with every process of its group, then
    reap it (a shell's hung child would otherwise outlive the shell)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        p.kill()
    p.wait()


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[str, int | None, str]:
    """Run the verifier in its own session; on timeout kill the whole process group (a ``bash test.sh`` that
    started a hung ``python`` would otherwise leave it running after the shell is killed)."""
    try:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        return "error", None, f"{type(exc).__name__}: {exc}"
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        if p.stdout is not None:
            p.stdout.close()
        return "timeout", None, ""
    tail = out[-MAX_CAPTURE:].decode("utf-8", "replace")
    return ("pass" if p.returncode == 0 else "fail"), p.returncode, tail


def _real(p: str | Path) -> Path:
    return Path(os.path.realpath(p))


def _within(p: Path, top: Path) -> bool:
    return p == top or top in p.parents


def _program_name(arg: str) -> str:
    """``/usr/bin/python3.11`` → ``python``; ``{python}`` (this interpreter) → ``python``; else the lower-case
    base name."""
    if arg == "{python}":
        return "python"
    name = Path(arg).name.lower()
    if name.endswith(".exe"):
        name = name[:-4]
    base = name.rstrip("0123456789.")
    return base if base in INTERPRETERS else name


_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?")


def _runs_output(command: list[str]) -> bool:
    """``{output}`` is the program, or the code operand of an interpreter or launcher (``bash {output}``,
    ``env X=1 timeout 5 python -u {output}``). Operands after inline code (``-c``, ``-e``) or a module (``-m``)
    are data."""
    args = list(command)
    while args:
        if "{output}" in args[0]:
            return True
        name = _program_name(args[0])
        if name not in INTERPRETERS:
            return False
        rest = args[1:]
        i = 0
        # skip options, VAR=value assignments (env) and timeout's duration, up to the operand that is run
        while i < len(rest) and (rest[i].startswith("-") or ("=" in rest[i] and "{" not in rest[i].split("=")[0])
                                 or (name == "timeout" and _DURATION.fullmatch(rest[i]))):
            if rest[i] in ("-c", "-m") or (name not in SHELLS and rest[i] in INLINE_CODE):
                return False
            i += 1
        args = rest[i:]
    return False


def _looks_like_code(name: str, data: bytes) -> str | None:
    if Path(name).suffix.lower() in CODE_SUFFIXES:
        return "code"
    if data.startswith(b"#!"):
        return "a script (it starts with #!)"
    if data.startswith(BINARY_MAGIC):
        return "an executable binary"
    return None


def job_code_reason(command: list[str], job_dir: Path, task_dir: Path, env_path: str) -> str | None:
    """Why running ``command`` (placeholders not yet filled) could execute something from the job directory,
    or None. Paths are compared by real path: a symlink into the job counts as the job."""
    job = _real(job_dir)
    if _within(_real(task_dir), job):
        return f"the task directory {task_dir} lies inside the job directory"
    if _runs_output(command):
        return "the command would execute the agent's output artifact"
    for arg in command:
        for part in (arg, *arg.split("=", 1)[1:]):
            if os.path.isabs(part) and "{" not in part and _within(_real(part), job):
                return f"the command names {part}, which lies in the job directory"
    program = command[0]
    if "{" not in program:
        found = shutil.which(program, path=env_path)
        if found and _within(_real(found), job):
            return f"the program {program} resolves to {found}, in the job directory"
    return None


def rerun_perturbations(job: Job, task: Task, cfg: Settings) -> Finding:
    conf = task.trajaudit_config().get("p12")
    if not isinstance(conf, dict) or not conf.get("command") or not conf.get("output"):
        return _na("the task declares no verifier re-run ([trajaudit.p12] command + output in task.toml)")
    if not cfg.rerun:
        return _na("re-runs are off: pass --trajaudit-rerun (runs the task's verifier command, see docs/trust.md)")
    output = str(conf["output"])
    command = conf["command"]
    if isinstance(command, str):
        command = command.split()
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        return _na("[trajaudit.p12] command must be a list of strings")
    if Path(output).suffix.lower() in CODE_SUFFIXES:
        return _na(f"the output {output} is code: re-running the verifier on it would execute agent-written code")
    env_path = os.pathsep.join(d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                               if d and os.path.isabs(d) and not _within(_real(d), _real(job.dir)))
    refused = job_code_reason(command, job.dir, task.dir, env_path)
    if refused:
        return _na(f"re-run refused: {refused}; nothing from the job directory is ever executed")
    rel = find_artifact(job, output)
    if rel is None:
        return _na(f"the agent's output artifact is not in the job (looked for artifacts/{output.lstrip('/')} and "
                   f"artifacts/{Path(output).name})")
    original = read_bytes(job.dir, rel, Budget(cfg.max_file_bytes, cfg.max_file_bytes))
    code = _looks_like_code(rel, original)
    if code:
        return _na(f"the output artifact {rel} is {code}: re-running the verifier on it could execute agent-written "
                   "code")
    timeout = float(conf.get("timeout") or cfg.verifier_timeout)
    with tempfile.TemporaryDirectory(prefix="trajaudit-p12-") as tmp:
        root = Path(tmp)
        tests_dir = root / "tests"
        _copy_tests(task, tests_dir)
        work = root / "work"
        work.mkdir()
        out_path = root / "output" / Path(output).name
        out_path.parent.mkdir()
        subst = {"output": str(out_path), "tests_dir": str(tests_dir), "task_dir": str(task.dir),
                 "python": sys.executable}
        try:
            cmd = [c.format(**subst) for c in command]
        except (KeyError, IndexError, ValueError) as exc:
            return _na(f"[trajaudit.p12] command has an unknown placeholder: {exc}")
        env = {"PATH": env_path, "HOME": str(work), "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1", "TRAJAUDIT_OUTPUT": str(out_path),
               "TRAJAUDIT_TESTS_DIR": str(tests_dir), "TRAJAUDIT_TASK_DIR": str(task.dir)}
        runs: list[dict[str, Any]] = []

        def attempt(name: str, data: bytes) -> str:
            # a fresh, owner-only, never executable copy (0600): the artifact is data
            out_path.unlink(missing_ok=True)
            fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            outcome, rc, tail = _run(cmd, work, env, timeout)
            runs.append({"perturbation": name, "outcome": outcome, "returncode": rc})
            if outcome == "error":
                runs[-1]["error"] = tail
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            return outcome

        first = attempt("original", original)
        if first == "error":
            return _na(f"the verifier could not be started: {runs[0].get('error', '')}", runs=runs)
        if first == "timeout":
            return _na(f"the verifier re-run timed out after {timeout:g}s on the original output", runs=runs)
        if first == "pass":
            return _na(f"the re-run passes the original output although the recorded reward is {job.reward:g}: the "
                       "re-run does not reproduce the verdict, so perturbations would prove nothing", runs=runs)
        variants = perturbations(original)
        if not variants:
            return _na("the output is not UTF-8 text: no syntactic perturbation applies", runs=runs)
        passing = [name for name, data in variants if attempt(name, data) == "pass"]
    unsettled = [f"{r['perturbation']} ({r['outcome']})" for r in runs[1:] if r["outcome"] in ("timeout", "error")]
    note = f"; {len(unsettled)} re-run(s) gave no verdict: {', '.join(unsettled[:5])}" if unsettled else ""
    data = {"checked": True, "perturbations_passing": passing, "runs": runs, "artifact": rel,
            "perturbations_unsettled": unsettled}
    if passing:
        return Finding.warn(f"tests_too_tight: the verifier accepts the output after {', '.join(passing)} (it rejects "
                            f"the original): flag the task for outcome_verified{note}", data)
    if len(unsettled) == len(variants):  # nothing was re-verified: no evidence either way
        return _na(f"no perturbation got a verdict ({', '.join(unsettled[:5])}; timeout {timeout:g}s)", runs=runs)
    return Finding.ok(f"{len(variants) - len(unsettled)} syntactic perturbation(s) re-verified; none passes{note}",
                      data)
