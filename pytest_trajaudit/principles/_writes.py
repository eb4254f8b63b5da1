"""Files a tool call writes, read the way a shell reads the command: for the principles whose WARNs must explain
themselves (P8's rewrite counter, P14's pollution check).

``_shell.write_targets`` scans the whole command text with the writer patterns, which is what the anti-cheat
principles want (a ``>`` or an ``open(..., 'w')`` anywhere may be a write to a lethal path: fail closed). Applied to
a command that carries a program, it also reads the program as shell: ``node -e "xs.filter(x => /^ds:\\d+$/.test(x))"``
"writes" ``/^ds:\\d+$/.test``, and a heredoc of Java or TypeScript (``Map<String, Integer>, ...``) "writes" ``,``.
Here the command is split first:

- a heredoc body is the data of the command it feeds (``cat > f <<EOF``, ``python - <<EOF``), not shell, unless that
  command is a shell (``bash <<EOF``);
- a quoted argument that holds code or prose (whitespace, brackets, commas, ...) is one opaque word, unless it is
  the script of ``bash -c`` / ``sh -c``;
- the shell writer patterns run on what is left; the program writer patterns (``open(p, 'w')``,
  ``Path(p).write_text``) run on the whole text, since a program can write a file too;
- a target must look like a file path (word characters, ``/``, ``.``, ``~``, ``-``, ``+``, ``@``, ``:``, ``$``,
  ``{}``, with at least one letter or digit), which drops the ``=``, ``,`` and ``0`` a comparison leaves behind.
"""

from __future__ import annotations

import re

from ..model import EDIT, EXECUTE, Event
from ..scan import linre
from ._shell import _MEMO_MAX, CMD_WRITES, write_targets

_HEREDOC = re.compile(r"(?<!<)<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
_QUOTED = linre.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_SHELL_C = linre.compile(r"(?:^|[\s;&|(])(?:sudo\s+)?(?:/\S*/)?(?:ba|z|da|k)?sh\s+(?:-\w+\s+)*-\w*c\w*\s*$")
_SHELL_FEEDER = linre.compile(r"(?:^|[\s;&|(])(?:sudo\s+)?(?:/\S*/)?(?:ba|z|da|k)?sh(?:\s+-\w+)*\s*(?:<<|$)")
_OPAQUE = linre.compile(r"[\s(){}\[\],;=<>!?*`]")
_PROGRAM_WRITERS = (
    re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wax]"),
    re.compile(r"Path\(\s*['\"]([^'\"]+)['\"]\s*\)\.write_(?:text|bytes)"),
)
_PATH_LIKE = linre.compile(r"[\w./~+@:${}%-]+")
_PLACEHOLDER = "_q_"
_WINDOW = 200  # characters before a quote or heredoc looked at for `bash -c` / `bash <<`: linear in the command


def split_heredocs(command: str) -> tuple[str, list[str]]:
    """(the shell text, the heredoc bodies fed to programs). A body fed to a shell stays in the shell text."""
    lines = command.split("\n")
    shell: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        shell.append(line)
        i += 1
        # a `<<` inside a quoted script (`python -c "print(1 << n)"`) opens no heredoc
        masked = _QUOTED.sub(lambda q: _PLACEHOLDER if _OPAQUE.search(q.group(0)[1:-1]) else q.group(0), line)
        for m in _HEREDOC.finditer(masked):
            word = m.group(2)
            end = i
            while end < len(lines) and lines[end].strip() != word:
                end += 1
            body = lines[i:end]
            if _SHELL_FEEDER.search(masked[max(0, m.start() - _WINDOW): m.start()] + "<<"):
                shell.extend(body)
            else:
                bodies.append("\n".join(body))
            if end < len(lines):
                shell.append(lines[end])
            i = end + 1
    return "\n".join(shell), bodies


def opaque_quotes(text: str) -> str:
    """Quoted arguments that hold code or prose become one placeholder word; a ``bash -c`` script is kept (its
    quotes dropped, so its redirects are seen); a quoted single word (a path, a sed script) is kept as it is."""
    out: list[str] = []
    last = 0
    for m in _QUOTED.finditer(text):
        out.append(text[last:m.start()])
        inner = m.group(0)[1:-1]
        if _SHELL_C.search(text[max(0, m.start() - _WINDOW): m.start()]):
            out.append(f" {inner} ")
        elif _OPAQUE.search(inner):
            out.append(_PLACEHOLDER)
        else:
            out.append(m.group(0))
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def path_like(target: str) -> bool:
    return (bool(_PATH_LIKE.fullmatch(target)) and any(c.isalnum() for c in target) and not target.isdigit()
            and target != _PLACEHOLDER)


def command_write_targets(command: str) -> list[str]:
    """Paths a shell command writes, with heredoc bodies and quoted code read as data (see the module doc)."""
    if not command:
        return []
    known = CMD_WRITES.get(command)  # remembered for the job being audited (_shell.forget)
    if known is None:
        shell, bodies = split_heredocs(command)
        out = [t for t in write_targets(opaque_quotes(shell)) if path_like(t)]
        for text in (shell, *bodies):
            for rx in _PROGRAM_WRITERS:
                out += [m.group(1) for m in rx.finditer(text) if path_like(m.group(1))]
        known = tuple(dict.fromkeys(out))
        if len(CMD_WRITES) >= _MEMO_MAX:
            CMD_WRITES.clear()
        CMD_WRITES[command] = known
    return list(known)


def call_write_targets(e: Event) -> list[str]:
    """The paths a tool call writes: an edit tool's paths, or what its shell command writes."""
    if e.kind == EDIT:
        return list(e.paths)
    if e.kind == EXECUTE:
        return command_write_targets(e.command)
    return []


def heredoc_write(command: str) -> str | None:
    """The file a heredoc command writes whole (``cat > f <<EOF``, ``cat <<EOF > f``, ``tee f <<EOF``): the first
    shell-level target of a command that has a heredoc, or None."""
    if "<<" not in command:
        return None
    shell, _ = split_heredocs(command)
    for line in shell.split("\n"):  # the line that opens the heredoc names the file; a shell-fed body does not
        if _HEREDOC.search(opaque_quotes(line)):
            targets = [t for t in write_targets(opaque_quotes(line)) if path_like(t)]
            if targets:
                return targets[0]
    return None
