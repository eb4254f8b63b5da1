"""Which privileged material is checked (the seed's advisor-audit.md): precedence flag > manifest > default layout,
the refusals without a flag, loading with the advisor's symlink rules and size limits, unreadable material."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_trajaudit.advisor.layout import (
    DEFAULT_LAYOUT,
    Layout,
    flag_layout,
    manifest_layout,
    resolve_layout,
)
from pytest_trajaudit.loaders.task import (
    MAX_PRIV_FILE,
    MAX_PRIV_TOTAL,
    PrivilegedUnreadable,
    load_privileged,
)
from pytest_trajaudit.model import UnusableInput
from tests.advisor.kit import make_task, unprivileged

MANIFEST = "advisor/task_material_manifest.json"


def _manifest(attempt: Path, doc: object) -> Path:
    p = attempt / MANIFEST
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


# --- precedence -------------------------------------------------------------------------------------------------

def test_default_layout_without_advisor_dir(tmp_path: Path) -> None:
    layout = resolve_layout(tmp_path)
    assert layout == DEFAULT_LAYOUT
    assert layout.privileged_roots == ("README.md", "solution", "tests") and layout.source == "default"


def test_default_layout_with_advisor_dir_but_no_manifest(tmp_path: Path) -> None:
    (tmp_path / "advisor").mkdir()
    assert resolve_layout(tmp_path).source == "default"


def test_manifest_layout_is_used(tmp_path: Path) -> None:
    _manifest(tmp_path, {"privileged_roots": ["solution", "hidden/tests"], "excluded_directory_names": ["data"],
                         "instruction_file": "ignored.md"})
    layout = resolve_layout(tmp_path)
    assert layout == Layout(("solution", "hidden/tests"), ("data",), "manifest")


def test_manifest_nested_layout_and_default_excluded_names(tmp_path: Path) -> None:
    _manifest(tmp_path, {"layout": {"privileged_roots": ["tests"]}})
    layout = resolve_layout(tmp_path)
    assert layout.privileged_roots == ("tests",) and layout.source == "manifest"
    assert layout.excluded_directory_names == DEFAULT_LAYOUT.excluded_directory_names


@pytest.mark.parametrize("doc", [{"texts": ["a"]}, {"privileged_roots": None}, {"layout": None},
                                 {"layout": {"privileged_roots": None}}])
def test_manifest_without_layout_gives_the_default(tmp_path: Path, doc: dict) -> None:
    """Material built with TaskMaterial.from_texts records no layout: the default Harbor layout applies."""
    _manifest(tmp_path, doc)
    assert resolve_layout(tmp_path) == DEFAULT_LAYOUT


def test_flag_overrides_the_manifest(tmp_path: Path) -> None:
    _manifest(tmp_path, {"privileged_roots": ["solution"]})
    layout = resolve_layout(tmp_path, ["tests/", "./extra"])
    assert layout == Layout(("tests", "extra"), DEFAULT_LAYOUT.excluded_directory_names, "flag")


def test_flag_overrides_even_an_unusable_advisor_dir(tmp_path: Path) -> None:
    (tmp_path / "advisor").symlink_to(tmp_path)
    assert resolve_layout(tmp_path, ["tests"]).source == "flag"
    with pytest.raises(UnusableInput, match="symlink"):
        resolve_layout(tmp_path)


@pytest.mark.parametrize("root", ["/etc", "../other", "a/../../b", "", "  ", "a\x00b", "C:\\x"])
def test_bad_flag_roots_are_unusable(root: str) -> None:
    with pytest.raises(UnusableInput):
        flag_layout([root])


# --- refusals without --privileged-root -------------------------------------------------------------------------

def test_advisor_symlink_is_unusable(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "att").mkdir()
    (tmp_path / "att" / "advisor").symlink_to(real)
    with pytest.raises(UnusableInput, match="advisor/ is a symlink"):
        resolve_layout(tmp_path / "att")


def test_advisor_not_a_directory_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "advisor").write_text("x")
    with pytest.raises(UnusableInput, match="advisor/ is not a directory"):
        resolve_layout(tmp_path)


def test_manifest_symlink_is_unusable(tmp_path: Path) -> None:
    other = tmp_path / "m.json"
    other.write_text(json.dumps({"privileged_roots": ["tests"]}))
    (tmp_path / "advisor").mkdir()
    (tmp_path / MANIFEST).symlink_to(other)
    with pytest.raises(UnusableInput, match="manifest is a symlink"):
        resolve_layout(tmp_path)


def test_manifest_directory_and_fifo_are_unusable(tmp_path: Path) -> None:
    (tmp_path / MANIFEST).mkdir(parents=True)
    with pytest.raises(UnusableInput, match="not a regular file"):
        resolve_layout(tmp_path)
    (tmp_path / MANIFEST).rmdir()
    os.mkfifo(tmp_path / MANIFEST)
    with pytest.raises(UnusableInput, match="not a regular file"):
        resolve_layout(tmp_path)  # never opened: a FIFO would block an open()


@pytest.mark.parametrize("doc", ["{not json", "[]", '"roots"', json.dumps({"privileged_roots": "tests"}),
                                 json.dumps({"privileged_roots": ["/abs"]}),
                                 json.dumps({"privileged_roots": ["../x"]}),
                                 json.dumps({"privileged_roots": [3]}),
                                 json.dumps({"layout": ["tests"]}),
                                 json.dumps({"privileged_roots": ["tests"], "excluded_directory_names": "x"}),
                                 json.dumps({"privileged_roots": ["tests"], "excluded_directory_names": ["a/b"]}),
                                 b"\xff\xfe\x00garbage"])
def test_manifest_that_is_no_layout_is_unusable(tmp_path: Path, doc: str | bytes) -> None:
    p = tmp_path / MANIFEST
    p.parent.mkdir(parents=True)
    p.write_bytes(doc if isinstance(doc, bytes) else doc.encode())
    with pytest.raises(UnusableInput, match="material manifest"):
        resolve_layout(tmp_path)


def test_manifest_layout_parses_directly() -> None:
    assert manifest_layout({"privileged_roots": []}).privileged_roots == ()
    with pytest.raises(UnusableInput):
        manifest_layout([])


def test_unreadable_manifest_and_advisor_dir_are_unusable(open_tmp: Path) -> None:
    att = open_tmp / "att"
    _manifest(att, {"privileged_roots": ["tests"]})
    os.chmod(att / MANIFEST, 0)

    def go() -> str:
        try:
            resolve_layout(att)
        except UnusableInput as exc:
            return exc.reason
        return "no error"

    assert "cannot read the material manifest" in unprivileged(go)
    os.chmod(att / MANIFEST, 0o644)
    assert unprivileged(lambda: resolve_layout(att).source) == "manifest"  # readable again: used
    os.chmod(att / "advisor", 0)
    assert "cannot read" in unprivileged(go)


# --- loading the material ---------------------------------------------------------------------------------------

def test_loads_the_default_roots(tmp_path: Path) -> None:
    task = make_task(tmp_path, extra={"environment/Dockerfile": "FROM x\n", "instruction2.md": "x\n"})
    mat = load_privileged(task, DEFAULT_LAYOUT.privileged_roots)
    assert [f.rel for f in mat.loaded] == ["README.md", "solution/solve.sh", "tests/test_outputs.py"]
    assert mat.total_bytes == sum(f.size for f in mat.loaded)


def test_missing_roots_load_nothing_and_say_so(tmp_path: Path) -> None:
    mat = load_privileged(tmp_path, ("nope", "tests"))
    assert mat.loaded == [] and "nope: not found" in mat.notes


def test_excluded_directory_names_are_not_entered(tmp_path: Path) -> None:
    task = make_task(tmp_path, tests={"a.py": "print('kept')\n", "data/big.py": "print('skipped')\n"})
    mat = load_privileged(task, ("tests",), ("data",))
    assert [f.rel for f in mat.loaded] == ["tests/a.py"]
    assert [f.rel for f in load_privileged(task, ("tests",), ()).loaded] == ["tests/a.py", "tests/data/big.py"]


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("outside the task\n")
    task = make_task(tmp_path)
    (task / "tests" / "link.py").symlink_to(secret)
    (task / "solution" / "linkdir").symlink_to(tmp_path)
    os.symlink(secret, task / "README2.md")
    mat = load_privileged(task, ("tests", "solution", "README2.md"))
    assert "tests/link.py" not in [f.rel for f in mat.files]
    assert any("tests/link.py: symlink not followed" in n for n in mat.notes)
    assert any("solution/linkdir: symlink not followed" in n for n in mat.notes)
    assert "README2.md: symlink not followed" in mat.notes


def test_symlinked_root_directory_is_not_followed(tmp_path: Path) -> None:
    real = make_task(tmp_path / "real")
    task = tmp_path / "task"
    task.mkdir()
    (task / "tests").symlink_to(real / "tests")
    mat = load_privileged(task, ("tests",))
    assert mat.loaded == [] and mat.notes == ["tests: symlink not followed"]


def test_fifo_is_never_opened(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    os.mkfifo(task / "tests" / "pipe.py")
    os.mkfifo(task / "README.md.fifo")
    mat = load_privileged(task, ("tests", "README.md.fifo"))  # would block forever if opened
    assert "tests/pipe.py: special file not opened" in mat.notes
    assert "README.md.fifo: special file not opened" in mat.notes
    assert [f.rel for f in mat.loaded] == ["tests/test_outputs.py"]


def test_per_file_limit(tmp_path: Path) -> None:
    task = make_task(tmp_path, tests={"big.txt": "x" * (MAX_PRIV_FILE + 1), "edge.txt": "y" * MAX_PRIV_FILE})
    mat = load_privileged(task, ("tests",))
    assert [f.rel for f in mat.loaded] == ["tests/edge.txt"]
    assert any(n.startswith("tests/big.txt: 1000001 bytes, over the 1000000-byte per-file limit") for n in mat.notes)


def test_total_limit(tmp_path: Path) -> None:
    files = {f"f{i}.txt": chr(ord("a") + i) * 900_000 for i in range(5)}
    task = make_task(tmp_path, tests=files)
    mat = load_privileged(task, ("tests",))
    assert [f.rel for f in mat.loaded] == [f"tests/f{i}.txt" for i in range(4)]
    assert mat.total_bytes == 3_600_000 <= MAX_PRIV_TOTAL
    assert any("tests/f4.txt: over the 4000000-byte total limit" in n for n in mat.notes)


def test_binary_and_undecodable_files_are_skipped(tmp_path: Path) -> None:
    task = make_task(tmp_path, tests={"blob.bin": b"\x00\x01\x02" * 10, "latin.txt": b"caf\xe9 au lait\n",
                                      "test_outputs.py": "assert True\n"}, solution={}, readme=None)
    mat = load_privileged(task, ("tests",))
    assert [f.rel for f in mat.loaded] == ["tests/test_outputs.py"]
    assert "tests/blob.bin: binary: not loaded" in mat.notes
    assert any(n.startswith("tests/latin.txt:") for n in mat.notes)
    only_binary = load_privileged(task, ("tests/blob.bin",))
    assert only_binary.loaded == []


def test_unreadable_privileged_file_and_directory_are_refused(open_tmp: Path) -> None:
    task = make_task(open_tmp)
    os.chmod(task / "tests" / "test_outputs.py", 0)
    os.chmod(task / "solution", 0)

    def go() -> list[str]:
        try:
            load_privileged(task, ("README.md", "solution", "tests"))
        except PrivilegedUnreadable as exc:
            return exc.paths
        return []

    assert unprivileged(go) == ["solution", "tests/test_outputs.py"]
    os.chmod(task / "tests" / "test_outputs.py", 0o644)
    os.chmod(task / "solution", 0o755)
    assert unprivileged(go) == []
