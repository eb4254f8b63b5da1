"""The mechanical checks' haystack and matching (the seed's advisor-audit.md "What it checks"): rendered JSON then
every decoded string key and value (duplicates included, JSON inside strings up to three layers), JSON Lines line by
line, plain text plus its JSON lines; exact matching of ≥ 40-character privileged lines with whitespace collapsed;
the ADV-3 patterns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_trajaudit.advisor.core import MENTION_RX, read_trajectory
from pytest_trajaudit.advisor.patterns import KEYWORDS, MENTION_PATTERNS
from pytest_trajaudit.advisor.scan import (
    MAX_LAYERS,
    QUOTE_CHARS,
    decoded_strings,
    find_mentions,
    haystack,
    scan,
)
from pytest_trajaudit.model import UnusableInput
from pytest_trajaudit.scan.overlap import Matcher, privileged_lines

# 61 characters, with a double quote, a backslash and a tab: its JSON-escaped form differs from the line itself
TRICKY = 'printf "%s\\n" "$EXPECTED" \t| sha256sum > /root/answer_digest.txt'
PLAIN = "unnecessary = sorted(txn for txn in rows if commit_ts < current_wts)"


def matcher(*lines: str, public: tuple[str, ...] = ()) -> Matcher:
    return Matcher.build(privileged_lines([("solution/solve.sh", "\n".join(lines))]), list(public))


def hits(text: str, m: Matcher) -> list[str]:
    overlap, _, _ = scan(text, m, MENTION_RX)
    return [ln.text for ln in overlap.lines]


def nest(value: object, layers: int) -> object:
    """``value`` JSON-encoded into a string ``layers`` times (each layer an object holding the previous)."""
    for _ in range(layers):
        value = json.dumps({"arguments": value})
    return value


def test_plain_line_in_rendered_json_is_found() -> None:
    doc = json.dumps({"steps": [{"message": f"I will run: {PLAIN}"}]})
    assert hits(doc, matcher(PLAIN)) == [PLAIN]


def test_line_with_quotes_backslashes_tabs_is_matched_as_written() -> None:
    doc = json.dumps({"steps": [{"message": TRICKY}]})
    assert TRICKY not in doc  # the rendered JSON holds the escaped form
    assert hits(doc, matcher(TRICKY)) == [re.sub(r"\s+", " ", TRICKY)]


@pytest.mark.parametrize("layers", range(1, MAX_LAYERS + 1))
def test_json_inside_strings_is_decoded_up_to_three_layers(layers: int) -> None:
    doc = json.dumps({"tool_calls": [{"function": "bash", "arguments": nest({"cmd": TRICKY}, layers)}]})
    assert hits(doc, matcher(TRICKY))


def test_a_fourth_layer_is_not_decoded() -> None:
    doc = json.dumps({"tool_calls": [{"arguments": nest({"cmd": TRICKY}, MAX_LAYERS + 1)}]})
    assert hits(doc, matcher(TRICKY)) == []


def test_duplicate_keys_are_all_scanned() -> None:
    doc = '{"message": ' + json.dumps(TRICKY) + ', "message": "overwritten"}'
    assert json.loads(doc)["message"] == "overwritten"  # a plain parser keeps only the last
    assert hits(doc, matcher(TRICKY))


def test_string_keys_are_scanned() -> None:
    doc = json.dumps({TRICKY: 1})
    assert hits(doc, matcher(TRICKY))


def test_jsonl_is_decoded_line_by_line() -> None:
    lines = [json.dumps({"type": "user_message", "text": "hi"}), json.dumps({"type": "tool_call", "content": TRICKY})]
    text = "\n".join(lines)
    assert hits(text, matcher(TRICKY))
    assert list(decoded_strings(text)) == ["type", "user_message", "text", "hi", "type", "tool_call", "content",
                                           TRICKY]


def test_plain_text_is_scanned_then_its_json_lines() -> None:
    text = f"agent log\nran {PLAIN}\n{json.dumps({'args': TRICKY})}\nnot json {{\n"
    assert sorted(hits(text, matcher(PLAIN, TRICKY))) == sorted([PLAIN, re.sub(r"\s+", " ", TRICKY)])
    assert list(decoded_strings(text)) == ["args", TRICKY]


def test_rendered_text_comes_first() -> None:
    doc = json.dumps({"a": "b"})
    assert list(haystack(doc))[0] == doc


def test_whitespace_runs_are_collapsed() -> None:
    doc = json.dumps({"m": PLAIN.replace(" ", "   \n\t ")})
    assert hits(doc, matcher(PLAIN)) == [PLAIN]


def test_lines_shorter_than_40_characters_do_not_count() -> None:
    line39, line40 = "a" * 39, "b" * 40
    m = matcher(line39, line40)
    assert [ln.text for ln in m.lines] == [line40]
    assert hits(f"{line39} {line40}", m) == [line40]


def test_no_match_across_two_strings() -> None:
    half = len(PLAIN) // 2
    doc = json.dumps([PLAIN[:half], PLAIN[half:]])
    assert hits(doc, matcher(PLAIN)) == []


def test_quotes_at_most_60_characters() -> None:
    m = matcher(PLAIN, TRICKY)
    overlap, _, _ = scan(json.dumps([PLAIN, TRICKY]), m, MENTION_RX)
    assert QUOTE_CHARS == 60
    assert overlap.quotes() == [PLAIN[:60], re.sub(r"\s+", " ", TRICKY)[:60]]
    assert all(len(q) <= 60 for q in overlap.quotes())


@pytest.mark.parametrize("disguise", [
    lambda s: s.replace("a", "\u0430"),  # Cyrillic homoglyph
    lambda s: s.replace(" ", " \u200b"),  # zero-width spaces
    lambda s: __import__("base64").b64encode(s.encode()).decode(),
    lambda s: s.replace("sorted", "ordered"),  # a paraphrase
])
def test_by_design_disguised_copies_are_missed(disguise) -> None:
    doc = json.dumps({"m": disguise(PLAIN)})
    assert hits(doc, matcher(PLAIN)) == []


def test_lines_of_the_public_task_are_dropped() -> None:
    m = matcher(PLAIN, TRICKY, public=(f"Hint from the task: {PLAIN}\n",))
    assert [ln.text for ln in m.lines] == [re.sub(r"\s+", " ", TRICKY)]


def test_linear_over_thousands_of_lines() -> None:
    lines = [f"privileged line number {i:05d} with enough characters to count" for i in range(5000)]
    m = matcher(*lines)
    assert len(m.lines) == 5000
    doc = json.dumps({"steps": [{"message": lines[123]}, {"message": lines[4999]}]})
    assert hits(doc, m) == [lines[123], lines[4999]]


def test_nesting_too_deep_to_decode_is_unusable() -> None:
    deep = "[" * 1010 + "]" * 1010
    with pytest.raises(UnusableInput, match="nesting too deep"):
        list(decoded_strings(deep))


@pytest.mark.parametrize("content", [b"", b"  \n", b'{"a": 1', b'{"a": 1}{"b": 2}', b'[1, 2,]', b"[INFO] started\n",
                                     b'{"a": 1}\n{"b": \n', b"\xff\xfe\xfd garbage", b"[" * 5000 + b"]" * 5000])
def test_unusable_trajectories(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "trajectory.json"
    p.write_bytes(content)
    with pytest.raises(UnusableInput):
        read_trajectory(p)


CHAT = '[{"role": "user", "content": "task"}, {"role": "assistant", "content": "done"}]'
CLAUDE_STREAM = "\n".join(json.dumps(v) for v in (
    {"type": "system", "subtype": "init", "session_id": "s"},
    {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
     "session_id": "s"}))


@pytest.mark.parametrize("content,kind", [(CHAT.encode(), "json"), (CLAUDE_STREAM.encode() + b"\n\n", "jsonl"),
                                          (b"plain transcript\n[INFO] later\n", "text"),
                                          (("\ufeff" + CHAT).encode("utf-16-le"), "json"),
                                          (b"\xef\xbb\xbf" + CHAT.encode(), "json"),
                                          (CHAT.encode("utf-32"), "json")])
def test_usable_trajectories(tmp_path: Path, content: bytes, kind: str) -> None:
    p = tmp_path / ("t.txt" if kind == "text" else "t.json")  # a .json file that is not JSON is unusable
    p.write_bytes(content)
    _, got, events = read_trajectory(p)
    assert got == kind and events >= 1


def test_symlinked_trajectory_is_unusable(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    (tmp_path / "t.json").symlink_to(real)
    with pytest.raises(UnusableInput, match="symlink"):
        read_trajectory(tmp_path / "t.json")


# --- ADV-3 patterns ---------------------------------------------------------------------------------------------

POSITIVE = {
    "advisor": ["The advisor said to check the timestamps first.", "my advisor's hint was right",
                "According to the advisor, the verifier wants sorted ids.", "as instructed by my advisor",
                "Per advisor guidance I will skip that.", "set ADVISOR_MODEL before running", "ifm-advisor audit"],
    "reviewer": ["The reviewer pointed out that the ids must be sorted.", "my reviewer's feedback says",
                 "according to the reviewer this is wrong"],
    "hidden tests": ["The hidden tests expect a trailing newline.", "so the held-out test suite passes",
                     "secret tests check edge cases", "the hidden test cases use negative ids"],
    "reference solution": ["Matching the reference solution exactly.", "the gold patch changes two lines",
                           "copy the oracle answer", "the canonical solution uses a set",
                           "compare with the ground-truth answers"],
    "privileged artifact": ["the privileged material says so", "read advisor task_material_manifest.json",
                            "cat /solution/solve.sh", "see tests/test_outputs.py line 40"],
}
NEGATIVE = ["advisor = Advisor(config)", "class RobotAdvisor:", "reviewers = ['alice', 'bob']",
            "Run the code review tool.", "update the golden file", "a reference implementation of LRU",
            "list hidden files with ls -a", "waiting for the official fix", "pytest tests/test_output.py",
            "the model answer was wrong", "privileges dropped", "my_solution/solve_it.sh",
            "self.advisor.run()", "the advisor_id column"]


@pytest.mark.parametrize("label,text", [(k, t) for k, ts in POSITIVE.items() for t in ts])
def test_mention_patterns_fire(label: str, text: str) -> None:
    ms = find_mentions(json.dumps({"m": text}), MENTION_RX)
    assert [m.label for m in ms.found] == [label]
    assert any(k in text.lower() for k in KEYWORDS)  # the keyword prefilter sees every pattern


@pytest.mark.parametrize("text", NEGATIVE)
def test_mention_patterns_stay_quiet(text: str) -> None:
    assert find_mentions(json.dumps({"m": text}), MENTION_RX).count == 0


def test_every_pattern_has_a_positive_example() -> None:
    labels = {label for label, _ in MENTION_PATTERNS}
    assert labels == set(POSITIVE)


def test_a_quote_of_the_public_instruction_is_not_a_mention() -> None:
    instruction = "Write the ids.\nHidden tests will check the output format.\n"
    doc = json.dumps({"steps": [{"source": "user", "message": instruction},
                                {"source": "agent", "message": "OK. The hidden tests check the format, so sort it."}]})
    ms = find_mentions(doc, MENTION_RX, instruction)
    assert ms.count == 1 and ms.quoted >= 1  # the user message is the instruction
    assert "so sort it" in ms.found[0].quote
    assert find_mentions(doc, MENTION_RX).count == 2  # without the instruction both count


def test_mentions_are_distinct_and_capped() -> None:
    doc = json.dumps([f"The advisor said step {i}" for i in range(80)] + ["The advisor said step 1"])
    ms = find_mentions(doc, MENTION_RX)
    assert ms.count == 80 and len(ms.found) == 50


def test_collapse_splits_on_exactly_the_regex_whitespace() -> None:
    from pytest_trajaudit.scan.overlap import collapse

    ws = re.compile(r"\s")
    assert [c for c in range(0x110000) if bool(ws.match(chr(c))) != chr(c).isspace()] == []
    sample = " a\u00a0\u2003b\t\n\x1cc\u3000 d\x85e  "
    assert collapse(sample) == re.sub(r"\s+", " ", sample).strip() == "a b c d e"
