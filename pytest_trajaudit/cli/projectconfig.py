"""The caller's own pytest configuration, for the ``trajaudit`` command (pytest-free).

The command gives pytest a trusted, empty config (``-c safe.ini``) so that no config file inside an audited tree
takes effect; without more, the ``trajaudit_*`` settings of the project the user runs it from would be ignored
too. :func:`find` reads them from the file pytest itself would pick for the working directory (the same names, in
the same order, walking up from the working directory: ``pytest.toml``, ``.pytest.toml``, ``pytest.ini``,
``.pytest.ini``, ``pyproject.toml`` with ``[tool.pytest]`` or ``[tool.pytest.ini_options]``, ``tox.ini``
``[pytest]``, ``setup.cfg`` ``[tool:pytest]``) and :func:`override_args` hands them to pytest as ``-o`` options,
path values made absolute against that file's directory (pytest resolves ``paths`` ini values against the ini
file; the audit runs elsewhere). Only the ``trajaudit_*`` keys are taken: the project's other settings
(``addopts``, ``testpaths``, ``markers`` …) are for its own tests, not for an audit.

The file is the user's, outside the audited trees: the command checks that before using it and ignores it,
saying so on stderr, when it lies inside an audited tree (auditing ``.``) or inside any job directory (the command
typed inside a job), see ``cli._project_config``.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PREFIX = "trajaudit_"
# ini keys of type "paths" (a list, each relative to the config file) and of single paths resolved the same way
PATH_LISTS = frozenset({"trajaudit_roots", "trajaudit_tasks"})
PATHS = frozenset({"trajaudit_rules", "trajaudit_report", "trajaudit_judge_cache", "trajaudit_waivers"})
LINE_LISTS = frozenset({"trajaudit_judge", "trajaudit_privileged_roots"})
CONFIG_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


class ConfigError(Exception):
    """The project's config file cannot be read (named in the message)."""


@dataclass
class ProjectConfig:
    path: Path  # the config file
    values: dict[str, Any] = field(default_factory=dict)  # trajaudit_* keys, as the file gives them

    @property
    def dir(self) -> Path:
        return self.path.parent

    def roots(self) -> list[str]:
        """``trajaudit_roots``, absolute."""
        return [self._absolute(p) for p in _as_list(self.values.get("trajaudit_roots"), split=True)]

    def _absolute(self, value: str) -> str:
        value = os.path.expanduser(value)
        return value if os.path.isabs(value) else os.path.normpath(os.path.join(self.dir, value))

    def override_args(self) -> list[str]:
        """``-o key=value`` for every ``trajaudit_*`` key, in the file's order."""
        out: list[str] = []
        for key, raw in self.values.items():
            if key in PATH_LISTS:
                value = shlex.join(self._absolute(p) for p in _as_list(raw, split=True))
            elif key in LINE_LISTS:
                value = "\n".join(_as_list(raw, split=False))
            elif key in PATHS:
                text = _scalar(raw).strip()
                value = text if not text or text == "off" else self._absolute(text)
            else:
                value = _scalar(raw)
            out += ["-o", f"{key}={value}"]
        return out


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _as_list(value: Any, split: bool) -> list[str]:
    """A TOML list as is; an ini string split like pytest: shell words (``paths``) or non-empty lines."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value)
    return shlex.split(text) if split else [ln.strip() for ln in text.splitlines() if ln.strip()]


MAX_CONFIG_BYTES = 4 << 20  # a pytest config larger than this is refused unread


def _load(path: Path) -> dict[str, Any] | None:
    """The pytest section of ``path`` (None when the file has none), as pytest's loaders read it."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: cannot be read: {size} bytes, over {MAX_CONFIG_BYTES}")
    if path.suffix == ".toml":
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: cannot be read: {exc}") from None
        except RecursionError:
            raise ConfigError(f"{path}: cannot be read: nested too deeply") from None
        if path.name == "pyproject.toml":
            tool = doc.get("tool", {}).get("pytest")
            if not isinstance(tool, dict):
                return None
            ini = tool.get("ini_options")
            native = {k: v for k, v in tool.items() if k != "ini_options"}
            return {**native, **ini} if isinstance(ini, dict) else native
        section = doc.get("pytest")
        return section if isinstance(section, dict) else None
    import iniconfig  # pytest's own ini parser (a pytest dependency): the same reading of continuation lines

    try:
        cfg = iniconfig.IniConfig(str(path))
    except (OSError, UnicodeDecodeError, iniconfig.ParseError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    name = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if name not in cfg:
        return {} if path.name in ("pytest.ini", ".pytest.ini") else None  # pytest.ini counts even when empty
    return dict(cfg[name].items())


def find(start: Path, untrusted: Callable[[Path], bool] | None = None) -> tuple[ProjectConfig | None, Path | None]:
    """(the config file pytest would read for ``start`` — the first directory from ``start`` upwards holding one of
    :data:`CONFIG_NAMES` with a pytest section — with its ``trajaudit_*`` keys, or None; the config-named file of
    an ``untrusted`` directory met first, never opened, or None). A directory for which ``untrusted(dir)`` holds (a
    job, an audited tree: an agent may have written its files) ends the search unread: its files are not opened,
    not even to see whether they hold a pytest section."""
    start = Path(os.path.abspath(start))
    for base in (start, *start.parents):
        distrusted = untrusted is not None and untrusted(base)
        for name in CONFIG_NAMES:
            path = base / name
            if distrusted:
                if os.path.lexists(path):
                    return None, path
                continue
            if not path.is_file():
                continue
            section = _load(path)
            if section is not None:
                return ProjectConfig(path, {k: v for k, v in section.items() if k.startswith(PREFIX)}), None
    return None, None
