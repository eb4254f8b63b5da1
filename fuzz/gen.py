"""Input generators for the fuzz campaign (plain ``random.Random``: reproducible from a seed, no hypothesis).

Every generator returns ``bytes``. Shapes: arbitrary bytes, mutated seed files (byte-level and structural),
random JSON / JSON Lines built from the formats' own keys and values, other encodings (UTF-16/32, BOMs),
huge and deeply nested values, pathological repetitive strings (regex back-tracking), and zip archives.
"""

from __future__ import annotations

import copy
import io
import json
import random
import zipfile
from collections.abc import Callable
from typing import Any

# Keys and values the loaders look at (so random documents reach past the first shape check).
KEYS = (
    "type", "kind", "title", "status", "content", "text", "message", "role", "tool_calls", "function", "arguments",
    "name", "input", "id", "tool_use_id", "tool_call_id", "is_error", "steps", "step_id", "source", "observation",
    "results", "source_call_id", "payload", "item", "events", "event", "samples", "sample", "epoch", "messages",
    "runs", "tasks", "task", "tool", "tool_name", "args", "session_id", "sessionId", "history", "action", "cause",
    "extras", "info", "trajectory", "state", "instance_id", "metadata", "eval", "version", "schema_version",
    "agent", "model", "model_name", "command", "cmd", "file_path", "path", "output", "result", "error", "ok",
    "run_id", "exit_code", "call_id", "output", "subtype", "parent_tool_use_id", "isSidechain", "toolUseResult",
    "uuid", "cwd", "skills", "tools", "reasoning_content", "tool_result_is_error", "extra", "rawInput", "rawOutput",
    "locations", "diff", "span_id", "attachments", "scores", "value", "exit_status", "submission", "environment",
    "thought", "response", "trajectory_format", "instruction", "test_result", "task_name", "trial_name",
    "rollout_name", "rewards", "reward", "verifier_result", "n_tool_calls", "config", "exception_info",
    "agent_execution", "started_at", "finished_at", "summary", "tests", "failed", "passed", "thinking",
    "tool_call_metadata", "function_name", "content_blocks", "aggregated_output", "usage", "choices", "ts",
)
STRINGS = (
    "tool_call", "user_message", "agent_message", "agent_thought", "agent_timeout", "assistant", "user", "system",
    "tool", "result", "init", "success", "tool_use", "tool_result", "text", "thinking", "session_meta",
    "turn_context", "response_item", "event_msg", "function_call", "function_call_output", "custom_tool_call",
    "local_shell_call", "exec_command_end", "item.completed", "item.started", "command_execution", "file_change",
    "thread.started", "turn.started", "turn.completed", "agent", "run", "read", "edit", "write", "execute",
    "search", "other", "skill", "completed", "failed", "pending", "in_progress", "cancelled", "Bash", "Read", "Edit",
    "Write", "Skill", "Task", "Glob", "Grep", "shell", "apply_patch", "str_replace_editor", "execute_bash",
    "Terminal", "Read File", "PreToolUse", "PostToolUse", "sample_init", "model", "span_begin", "span_end",
    "sandbox", "score", "ATIF-v1.2", "ATIF-v1.7", "mini-swe-agent-1", "main", "swe_main", "submitted", "Submitted",
    "/oracle/solve.sh", "/verifier/test.sh", "/logs/verifier/reward.txt", "tests/conftest.py",
    "cat /app/tests/test_outputs.py", "pip install pytest ", "sys.exit(0)", "Launching skill: pdf",
    "Read SKILL.md", "/root/.codex/skills/x/SKILL.md", "attachment://0123456789abcdef", "null", "",
    "*** Begin Patch\n*** Update File: a.py\n@@\n-a\n+b\n*** End Patch", "Exit code 1", "<returncode>0</returncode>",
    "```bash\nls\n```", "THOUGHT: x", "\u2028", "\ud7ff\ue000", "\x1b[31m", "\u202e", "C", "I",
)
INTERESTING_BYTES = b'{}[]",:\\\n\r\t\x00\xff\xfe\xef\xbb\xbf0-e.tfn '
TOKENS = (b"null", b"true", b"false", b"[]", b"{}", b'""', b"1e999", b"-0", b'"\\ud800"', b"NaN", b"Infinity",
          b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\n", b"\r\n", b",", b"]]]]", b"[[[[", b'"\\u0000"',
          b"18446744073709551616", b"-9223372036854775809", b"1" * 5000, b'"' + b"a" * 100 + b'"')
REPEAT_UNITS = ("a-", "a_", "-", " ", "\t", "/", "\\", "a/", "./", "a.", "x=", "key=", ":", "sk-", "a ", "`",
                "```", "$ ", "\\n", "\n", "'", '"', "(", ")", "&&", "|", ";", "-----BEGIN ", "bearer ", "api_key",
                "token ", "Read ", "cat ", "/verifier/", "conftest.py", "pip install ", "@@", "*** ", "<", "<<",
                "attachment://", "\u00e9", "\U0001f600")
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")

MAX_LEN = 8 * 1024 * 1024


def rand_bytes(r: random.Random) -> bytes:
    n = r.choice((0, 1, 2, 3, 4, 8, 16, 64, 256, 4096))
    return r.randbytes(r.randint(0, n))


def rand_string(r: random.Random, depth: int = 0) -> str:
    c = r.random()
    if c < 0.45:
        return r.choice(STRINGS)
    if c < 0.6:
        return "".join(chr(r.choice((r.randint(0, 0x7f), r.randint(0, 0xffff), r.randint(0x10000, 0x10ffff))))
                       for _ in range(r.randint(0, 12))).encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if c < 0.75:
        return r.choice(STRINGS) + " " + r.choice(STRINGS)
    if c < 0.85 and depth < 3:  # JSON inside a string (tool arguments, Codex outputs)
        return json.dumps(rand_json(r, depth + 1, 3))
    if c < 0.92:
        return repeated(r, r.choice((10, 100, 1000)))
    return str(r.randint(-10, 10 ** 6))


def rand_scalar(r: random.Random, depth: int = 0) -> Any:
    c = r.random()
    if c < 0.5:
        return rand_string(r, depth)
    if c < 0.65:
        return r.choice((0, 1, -1, 2, 3, 0.5, 1.0, 0.0, 1e308, -0.0, 2 ** 63, -(2 ** 63) - 1, 10 ** 30))
    if c < 0.8:
        return r.choice((True, False))
    return None


def rand_json(r: random.Random, depth: int = 0, max_depth: int = 6) -> Any:
    if depth >= max_depth or r.random() < 0.3:
        return rand_scalar(r, depth)
    if r.random() < 0.55:
        return {r.choice(KEYS) if r.random() < 0.9 else rand_string(r, depth): rand_json(r, depth + 1, max_depth)
                for _ in range(r.randint(0, 6))}
    return [rand_json(r, depth + 1, max_depth) for _ in range(r.randint(0, 5))]


def rand_line_doc(r: random.Random) -> Any:
    """A JSON Lines value shaped like one format's line: a dict with a recognised "type" (usually)."""
    d = rand_json(r, 1, 5)
    if not isinstance(d, dict):
        d = {"value": d}
    if r.random() < 0.8:
        d["type"] = r.choice(STRINGS)
    return d


def encode(r: random.Random, text: str) -> bytes:
    enc = r.choice(ENCODINGS) if r.random() < 0.25 else "utf-8"
    return text.encode(enc, "surrogatepass")


def dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:  # the mutator nested deeper than json can write: keep the depth, as raw brackets
        return "[" * 5000 + "]" * 5000


def gen_json(r: random.Random) -> bytes:
    return encode(r, dumps(rand_json(r)))


def gen_jsonl(r: random.Random) -> bytes:
    lines = [dumps(rand_line_doc(r)) for _ in range(r.randint(1, 12))]
    sep = r.choice(("\n", "\n", "\r\n", "\n\n"))
    return encode(r, sep.join(lines) + r.choice(("", "\n")))


def repeated(r: random.Random, n: int) -> str:
    unit = r.choice(REPEAT_UNITS)
    if r.random() < 0.3:
        unit += r.choice(REPEAT_UNITS)
    return unit * n


def gen_redos(r: random.Random) -> bytes:
    """A valid document of a random format whose strings are long repetitions (catastrophic regex back-tracking,
    quadratic scans)."""
    n = r.choice((2_000, 20_000, 100_000))
    s = repeated(r, n // 2)
    return _put_string(r, r.choice(SEED_BYTES_CACHE or [b'{"type":"user_message","text":"x"}']), s)


def gen_huge(r: random.Random) -> bytes:
    c = r.randrange(6)
    if c == 0:  # deep nesting, balanced or not
        d = r.choice((500, 1000, 1025, 5000, 100_000, 1_000_000))
        o, cl = r.choice(((b"[", b"]"), (b'{"a":', b"}"), (b'{"content":[', b"]}")))
        return o * d + (b"1" + cl * d if r.random() < 0.5 else b"")
    if c == 1:  # many lines
        n = r.choice((10_000, 100_000, 1_000_000))
        line = r.choice((b'{"type":"agent_message","text":"x"}', b"x", b"{}", b"[1]", b'{"type":"tool_call"}'))
        return b"\n".join([line] * n)
    if c == 2:  # one huge string value
        n = r.choice((1 << 16, 1 << 20, 4 << 20))
        return b'{"type":"agent_message","text":"' + b"x" * n + b'"}\n{"type":"user_message","text":"y"}'
    if c == 3:  # a long line without newline
        return b"a" * r.choice((1 << 16, 1 << 20, 4 << 20))
    if c == 4:  # many keys / wide list
        n = r.choice((10_000, 100_000))
        return b"[" + b",".join(b'{"role":"user","content":"x"}' for _ in range(n)) + b"]"
    # deep nesting inside a plausible trajectory line
    d = r.choice((900, 1023, 1024, 2000))
    return (b'{"type":"user_message","text":"x"}\n{"type":"tool_call","kind":"execute","content":'
            + b"[" * d + b"]" * d + b"}\n")


def mutate_bytes(r: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(r.choice((1, 1, 2, 4, 8, 16))):
        op = r.randrange(9)
        pos = r.randint(0, len(b))
        if op == 0 and b:
            i = r.randrange(len(b))
            b[i] ^= 1 << r.randrange(8)
        elif op == 1 and b:
            b[r.randrange(len(b))] = r.choice(INTERESTING_BYTES)
        elif op == 2:
            b[pos:pos] = r.randbytes(r.randint(1, 8))
        elif op == 3 and b:
            n = r.randint(1, max(1, min(len(b), 64)))
            del b[pos:pos + n]
        elif op == 4 and b:
            i = r.randrange(len(b))
            n = r.randint(1, min(len(b) - i, 256))
            b[pos:pos] = b[i:i + n] * r.choice((1, 2, 10))
        elif op == 5:
            b[pos:pos] = r.choice(TOKENS)
        elif op == 6:
            del b[pos:]
        elif op == 7 and SEED_BYTES_CACHE:  # splice with another seed
            other = r.choice(SEED_BYTES_CACHE)
            j = r.randint(0, len(other))
            b = b[:pos] + bytearray(other[j:])
        elif op == 8:  # swap two lines
            lines = bytes(b).split(b"\n")
            if len(lines) > 1:
                i, j = r.randrange(len(lines)), r.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
                b = bytearray(b"\n".join(lines))
        if len(b) > MAX_LEN:
            del b[MAX_LEN:]
    return bytes(b)


def _walk(value: Any, out: list[tuple[Any, Any]]) -> None:
    """Every (container, key) slot of a JSON value (iterative: mutated trees can be thousands deep)."""
    stack = [value]
    while stack and len(out) < 100_000:
        v = stack.pop()
        if isinstance(v, dict):
            for k in list(v):
                out.append((v, k))
                stack.append(v[k])
        elif isinstance(v, list):
            for i in range(len(v)):
                out.append((v, i))
                stack.append(v[i])


def _approx_size(value: Any, cap: int) -> int:
    """Roughly the JSON size of ``value``, counting stops at ``cap`` (iterative, cheap)."""
    total, stack = 0, [value]
    while stack and total < cap:
        v = stack.pop()
        if isinstance(v, str):
            total += len(v) + 2
        elif isinstance(v, dict):
            total += 2 + 4 * len(v) + sum(len(k) for k in v)
            stack.extend(v.values())
        elif isinstance(v, list):
            total += 2 + len(v)
            stack.extend(v)
        else:
            total += 8
    return total


def mutate_tree(r: random.Random, value: Any) -> Any:
    for _ in range(r.choice((1, 1, 2, 3, 6))):
        slots: list[tuple[Any, Any]] = []
        _walk(value, slots)
        if not slots:
            return rand_json(r)
        parent, key = r.choice(slots)
        op = r.randrange(7)
        if op == 0:  # type confusion
            parent[key] = rand_json(r, 3, 5)
        elif op == 1:
            parent[key] = rand_scalar(r)
        elif op == 2:
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent.pop(key)
        elif op == 3 and isinstance(parent[key], list) and parent[key]:  # many copies of an element
            factor = r.choice((2, 10, 200))
            if _approx_size(parent[key], 1 << 20) * factor <= 4 << 20:  # keep documents within a few MiB
                try:  # real copies: a later mutation of a shared element would multiply with every reference
                    parent[key] = copy.deepcopy(parent[key] * factor)
                except RecursionError:
                    pass
        elif op == 4:  # wrap in nesting
            v = parent[key]
            for _ in range(r.choice((2, 10, 100, 990))):
                v = [v] if r.random() < 0.5 else {"content": v}
            parent[key] = v
        elif op == 5 and isinstance(parent, dict):  # add a random known key
            parent[r.choice(KEYS)] = rand_json(r, 2, 4)
        else:
            parent[key] = repeated(r, r.choice((10, 1000, 20_000)))
    return value


def mutate_structure(r: random.Random, data: bytes) -> bytes:
    """Parse a JSON / JSON Lines seed, mutate values in the tree, serialise it again (at most MAX_LEN bytes)."""
    return _mutate_structure(r, data)[:MAX_LEN]


def _mutate_structure(r: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
        return encode(r, dumps(mutate_tree(r, doc)))
    except (ValueError, RecursionError):
        pass
    out = text.split("\n")
    for i in r.sample(range(len(out)), min(len(out), r.choice((1, 2, 4)))):  # a few lines, each a few MiB at most
        try:
            out[i] = dumps(mutate_tree(r, json.loads(out[i])))
        except (ValueError, RecursionError):
            continue
    if r.random() < 0.2 and out:  # duplicate or drop lines
        i = r.randrange(len(out))
        if r.random() < 0.5:
            out.insert(i, out[i])
        else:
            out.pop(i)
    return encode(r, "\n".join(out))


def _put_string(r: random.Random, data: bytes, s: str) -> bytes:
    text = data.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        lines = text.split("\n")
        i = r.randrange(len(lines))
        try:
            v = json.loads(lines[i])
        except (ValueError, RecursionError):
            lines[i] = s
            return "\n".join(lines).encode("utf-8", "surrogatepass")
        lines[i] = dumps(_replace_a_string(r, v, s))
        return "\n".join(lines).encode("utf-8", "surrogatepass")
    return dumps(_replace_a_string(r, doc, s)).encode("utf-8", "surrogatepass")


def _replace_a_string(r: random.Random, doc: Any, s: str) -> Any:
    slots: list[tuple[Any, Any]] = []
    _walk(doc, slots)
    strs = [(p, k) for p, k in slots if isinstance(p[k], str)]
    if not strs:
        return s
    for p, k in r.sample(strs, min(len(strs), r.choice((1, 1, 3)))):
        p[k] = s
    return doc


def make_zip(r: random.Random, members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", r.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED))) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def gen_zip(r: random.Random) -> bytes:
    """An Inspect ``.eval``-like archive with random or mutated members (and, sometimes, hostile names)."""
    members: dict[str, bytes] = {}
    members["header.json"] = gen_json(r) if r.random() < 0.5 else b'{"version":2,"eval":{"task":"t"},"status":"success"}'
    for i in range(r.randint(0, 3)):
        name = f"samples/{i}_epoch_1.json"
        if r.random() < 0.1:
            name = r.choice(("../evil.json", "/abs.json", "samples/x.eval", "samples/\x00.json", "samples/a/../b.json"))
        base = r.choice(SEED_BYTES_CACHE) if SEED_BYTES_CACHE and r.random() < 0.5 else gen_json(r)
        members[name] = mutate_bytes(r, base) if r.random() < 0.5 else base
    data = make_zip(r, members)
    return mutate_bytes(r, data) if r.random() < 0.3 else data


SEED_BYTES_CACHE: list[bytes] = []


def set_seeds(seeds: list[bytes]) -> None:
    SEED_BYTES_CACHE[:] = seeds


def gen_seed_mutation(r: random.Random) -> bytes:
    base = r.choice(SEED_BYTES_CACHE) if SEED_BYTES_CACHE else gen_json(r)
    c = r.random()
    if c < 0.45:
        return mutate_bytes(r, base)
    if c < 0.85:
        return mutate_structure(r, base)
    return mutate_bytes(r, mutate_structure(r, base))


def gen_reencoded(r: random.Random) -> bytes:
    base = r.choice(SEED_BYTES_CACHE) if SEED_BYTES_CACHE else gen_json(r)
    text = base.decode("utf-8", "replace")
    enc = r.choice(ENCODINGS)
    data = text.encode(enc, "surrogatepass")
    return mutate_bytes(r, data) if r.random() < 0.3 else data


GENERATORS: dict[str, tuple[float, Callable[[random.Random], bytes]]] = {
    "bytes": (0.08, rand_bytes),
    "json": (0.12, gen_json),
    "jsonl": (0.14, gen_jsonl),
    "seed-mutation": (0.40, gen_seed_mutation),
    "reencoded": (0.06, gen_reencoded),
    "zip": (0.06, gen_zip),
    "redos": (0.08, gen_redos),
    "huge": (0.06, gen_huge),
}


def generate(r: random.Random) -> tuple[str, bytes]:
    x = r.random() * sum(w for w, _ in GENERATORS.values())
    for name, (w, fn) in GENERATORS.items():
        x -= w
        if x <= 0:
            return name, fn(r)
    name, (_, fn) = next(iter(GENERATORS.items()))
    return name, fn(r)
