"""P8 and P14 as calibrated on the corpus's real runs (docs/detection-rates.md), and the write-path reading they
share (principles/_writes.py). Each fixture is modelled on a real transcript shape, named in its docstring;
``--trajaudit-literal`` keeps the seed's counters, so most tests check both modes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_trajaudit.principles._shell import write_targets
from pytest_trajaudit.principles._writes import command_write_targets, heredoc_write
from pytest_trajaudit.rulesfile import apply_rules_file, parse_rules
from pytest_trajaudit.settings import Settings
from tests.principles.builders import LITERAL, acp_job, msg, read, run, sh, tool, user, write

# A Rust check compiled from stdin, as agents on compiled-language tasks do between edits: the body's nested
# generic `HashMap<String, Vec<String>>,` leaves a `>>` followed by `,`, which a whole-text redirect scan reads as
# "append to the file ','".
RUSTC = ("rustc --edition 2021 -o /tmp/check - <<'EOF'\nuse std::collections::HashMap;\n"
         "fn count(m: &HashMap<String, Vec<String>>, k: &str) -> usize {{ m.get(k).map_or(0, |v| v.len()) }}\n"
         "fn main() {{ let m = HashMap::new(); println!(\"{{}}\", count(&m, \"{0}\")); }}\nEOF")
# The inline Node script of a real metacode run (labelled/ google-play-scraper): a regex literal after `=>`.
NODE_E = ("cd /app && node -e \"import fs from 'fs'; import scriptData from './lib/utils/scriptData.js'; "
          "const p = scriptData.parse(fs.readFileSync('/tmp/lazanda.html','utf8')); "
          "console.log(Object.keys(p).filter(x => /^ds:\\d+$/.test(x)))\"")


# ====================================================================================== write paths (_writes)


def test_heredoc_body_is_data_not_shell():
    """The path parsing bug behind a P8 WARN reading "rewrite #2 of ,": the whole-text scan takes `,` for a
    target; the shell reading sees no file written by a program fed on stdin."""
    cmd = RUSTC.format("a")
    assert write_targets(cmd)[0] == ","  # the anti-cheat scan stays whole-text (fail closed)
    assert command_write_targets(cmd) == []
    assert heredoc_write(cmd) is None


def test_inline_script_is_one_word():
    assert "/^ds:\\d+$/.test" in write_targets(NODE_E)
    assert command_write_targets(NODE_E) == []


@pytest.mark.parametrize(("cmd", "targets"), [
    ("bash -c \"echo '127.0.0.1 db' >> /etc/hosts\"", ["/etc/hosts"]),
    ("bash <<'EOF'\necho x > /etc/motd\nEOF", ["/etc/motd"]),
    ("python3 - <<'EOF'\nimport json\nrows = [r for r in data if r > 0, ]\n"
     "json.dump(rows, open('/app/out.json', 'w'))\nEOF", ["/app/out.json"]),
    ("python -c \"import json; json.dump({}, open('/tmp/o.json', 'w'))\"", ["/tmp/o.json"]),
    ("sed -i 's/a b/c d/' /app/lib/search.js", ["/app/lib/search.js"]),
    ("cp /tmp/test_search.js /app/test_search.js && cd /app && node test_search.js 2>&1", ["/app/test_search.js"]),
    ("cd /app && node test.js > /tmp/out.txt 2>&1", ["/tmp/out.txt"]),
    ("echo done >/dev/null", []),
], ids=["bash-c", "bash-heredoc", "python-heredoc-open", "python-c-open", "sed-i", "cp", "redirect", "dev-null"])
def test_shell_level_writes_are_still_seen(cmd, targets):
    """A script handed to a shell is shell; a program that opens a file for writing writes it."""
    assert command_write_targets(cmd) == targets


@pytest.mark.parametrize(("cmd", "target"), [
    ("cat > /root/solve.py <<'EOF'\nprint(1)\nEOF", "/root/solve.py"),
    ("cat <<EOF > /app/Main.java\nMap<String, List<Integer>>, x;\nEOF", "/app/Main.java"),
    ("tee /app/notes.txt <<EOF\nhi\nEOF", "/app/notes.txt"),
    ("cd /app && cat > a.py << 'PY'\nif x > 1: pass\nPY", "a.py"),
    ("python3 - <<'EOF'\nopen('/app/x', 'w')\nEOF", None),
    ("bash <<EOF\necho x > /etc/foo\nEOF", None),
], ids=["cat-gt", "cat-heredoc-gt", "tee", "relative", "python-stdin", "shell-fed"])
def test_heredoc_whole_file_write(cmd, target):
    assert heredoc_write(cmd) == target


def test_a_shift_inside_a_quoted_script_opens_no_heredoc():
    """`<< n` in a `python -c` script is a shift: the next lines are still shell, and their write is seen."""
    cmd = "python3 -c \"print(1 << n, 2)\"\necho done > /app/status.txt"
    assert command_write_targets(cmd) == ["/app/status.txt"]


def test_an_unterminated_heredoc_and_many_quotes_stay_linear():
    """A hostile command: an unterminated heredoc and 20,000 quoted words. Read once, nothing written."""
    cmd = "node - <<'EOF'\n" + " ".join(f'"a{i} b"' for i in range(20_000))
    assert command_write_targets(cmd) == []


# ============================================================================================== P8 precise


def _claude_code_run(n_reads: int, n_cycles: int) -> list[dict]:
    """A Claude Code SWE-style run (labelled/ claude-sonnet-4-6 trials): reads of distinct files, then
    edit / run-the-check cycles on the file it fixes, then a summary."""
    lines = [read(f"/app/lib/module{i}.js", "export default {}") for i in range(n_reads)]
    for i in range(n_cycles):
        lines += [tool("edit", "Edit", raw_input={"file_path": "/app/lib/search.js", "old_string": f"v{i}",
                                                  "new_string": f"v{i + 1}"}, locations=["/app/lib/search.js"]),
                  sh(f"cd /app && node --input-type=module -e \"import s from './lib/search.js'; s({i})\"", "[]")]
    return lines


def test_p8_long_run_with_a_few_distinct_reads_then_edits_passes():
    """40 calls: 6 distinct reads, then 17 edit/run cycles (the shape of the corpus's passing claude-code runs)."""
    j = acp_job(*_claude_code_run(6, 17), msg("Fixed search() and verified it."), reward=1.0)
    f = run("P8", j)
    assert f.status == "PASS", f.evidence
    assert f.data["exploration_loop"] == 6 and f.data["rereads"] == 0


def test_p8_six_reads_on_a_nine_call_run_is_exploration_not_struggle():
    """A real claude-code feature-task run (labelled/ v3): 6 reads, a Write, 2 checks. The seed's counter WARNs
    on it; precise mode sees 6 of 9 calls (67 %) spent reading first, below the 80 % share."""
    lines = [read(f"/app/lib/{n}.js") for n in ("index", "reviews", "app", "constants", "request", "utils")]
    lines += [write("/app/lib/reviewSync.js", "export default 1\n"), sh("cd /app && npm test", "8 passing"),
              sh("cd /app && node -e \"import('./index.js')\"")]
    j = acp_job(*lines, msg("All 8 tests pass."))
    assert run("P8", j).status == "PASS"
    lit = run("P8", j, LITERAL)
    assert lit.status == "WARN" and "6 reads before the first solve attempt" in lit.evidence


def test_p8_rereading_the_same_files_after_an_edit_without_progress_warns():
    """After one edit, 30 reads of the same 3 files and no further edit: the loop the seed's exploration counter
    means, caught after the first edit where the seed looks only before it."""
    lines = [read("/app/lib/search.js"), write("/app/lib/search.js", "v1\n")]
    lines += [read(f"/app/lib/{['search', 'utils', 'request'][i % 3]}.js") for i in range(30)]
    j = acp_job(*lines, msg("I could not find the problem."))
    f = run("P8", j)
    assert f.status == "WARN"
    assert f.data["rereads"] == 27
    assert "10 re-reads of 3 already-read target(s) since the last edit" in f.evidence
    assert run("P8", j, LITERAL).status == "PASS"  # the seed's counters miss it


def test_p8_rereads_reset_at_each_edit():
    """Read-edit cycles on the same file (the normal fix loop) never accumulate re-reads."""
    lines = [read("/app/lib/search.js")]
    for i in range(15):
        lines += [write("/app/lib/search.js", f"v{i}\n"), read("/app/lib/search.js")]
    f = run("P8", acp_job(*lines))
    assert f.data["rereads"] == 0 and "re-reads" not in f.evidence


def test_p8_paging_through_a_file_is_not_rereading():
    """opencode reads big files in pages (filePath, offset, limit): another offset is another read."""
    lines = [write("/app/lib/search.js", "v1\n")]
    lines += [tool("read", "read", raw_input={"filePath": "/app/README.md", "offset": 100 * i, "limit": 100},
                   locations=["/app/README.md"]) for i in range(20)]
    assert run("P8", acp_job(*lines)).data["rereads"] == 0


def test_p8_exploration_without_any_synthesis_warns():
    """A Codex rollout that only reads (34 shell reads, no edit, no solver run) on a task that wanted a fix."""
    lines = [sh(f"sed -n '1,200p' packages/services/src/file{i}.ts", "export const x = 1") for i in range(12)]
    f = run("P8", acp_job(*lines, msg("Here is what the services package does.")))
    assert f.status == "WARN"
    assert "12 distinct reads in 12 tool calls and no edit or solver run" in f.evidence


def test_p8_exploration_taking_most_of_the_run_warns():
    """labelled/ claude-code, broken-verifier job: 18 reads in the first 18 of 19 calls, one Write at the end."""
    lines = [read(f"/app/lib/f{i}.js") for i in range(18)] + [write("/app/lib/search.js")]
    f = run("P8", acp_job(*lines))
    assert f.status == "WARN"
    assert "18 distinct reads in the first 18 of 19 tool calls (94 %) before the first solve attempt" in f.evidence


def test_p8_reading_one_file_six_times_is_one_distinct_read():
    lines = [read("/app/lib/search.js") for _ in range(8)] + [write("/app/lib/search.js")]
    f = run("P8", acp_job(*lines))
    assert f.data["exploration_loop"] == 1 and f.status == "PASS"


def test_p8_scripts_sharing_a_preamble_are_not_repeats():
    """Real opencode/claude runs probe an API with many inline scripts that share their first 80 characters."""
    pre = "cd /app && node -e \"import fs from 'fs'; import scriptData from './lib/utils/scriptData.js'; "
    lines = [write("/app/probe.txt", "x")] + [sh(pre + f"console.log(p['ds:4'][0][{i}])\"", f"{i}") for i in range(3)]
    j = acp_job(*lines)
    assert run("P8", j).status == "PASS"
    assert run("P8", j, LITERAL).data["retries"] == 2


def test_p8_the_same_command_three_times_in_a_row_warns():
    lines = [write("/root/solve.py")] + [sh("python /root/solve.py --input /root/traces.csv", "Traceback") for _ in range(3)]
    f = run("P8", acp_job(*lines))
    assert f.status == "WARN" and "repeated command ×3 in a row" in f.evidence


def test_p8_run_edit_run_cycles_are_not_repeats():
    """SWE-agent (labelled/ swe-agent-LM-32B): `python reproduce.py`, edit, `python reproduce.py`, edit, ..."""
    lines = []
    for i in range(4):
        lines += [sh("python /testbed/reproduce.py", "Error" if i < 3 else "ok"),
                  tool("edit", "str_replace_editor", raw_input={"command": "str_replace", "path": "/testbed/a.py"},
                       locations=["/testbed/a.py"])]
    j = acp_job(*lines)
    assert run("P8", j).data["retries"] == 0
    assert run("P8", j, LITERAL).status == "WARN"  # the seed counts repeats across the edits


@pytest.mark.parametrize(("text", "precise"), [
    ("Let me check what Google Play actually returns for this query.", "PASS"),
    ("Ah, it's actually in `periodic.py`!", "PASS"),
    ("Actually, the test expects the exact-match app first. Let me restructure.", "WARN"),
    ("Wait, that regex drops the first cluster.", "WARN"),
    ("That approach won't work with the proxy.", "WARN"),
], ids=["adverb", "discovery", "actually-comma", "wait-comma", "approach"])
def test_p8_reversals_open_a_sentence(text, precise):
    """Agent messages after the first solve attempt from the corpus's claude-code and codecanvas runs (adverb
    uses) and the seed's reversal phrases."""
    j = acp_job(read("/app/a.js"), write("/app/a.js"), sh("cd /app && npm test", "ok"), msg(text))
    assert run("P8", j).status == precise
    assert run("P8", j, LITERAL).status == "WARN"


@pytest.mark.parametrize("mode", [Settings(), LITERAL], ids=["precise", "literal"])
def test_p8_rustc_heredocs_are_not_rewrites(mode):
    """Three stdin compiles of a Rust check: no file is rewritten (a whole-text scan would make it "rewrite #2 of ,")."""
    j = acp_job(write("/app/src/lib.rs", "pub fn f() {}\n"), *[sh(RUSTC.format(k), "0") for k in "abc"])
    f = run("P8", j, mode)
    assert f.data["rewrites"] == 0
    assert "rewrite #" not in f.evidence


def test_p8_thresholds_come_from_the_rules_file(tmp_path: Path):
    _, overrides = parse_rules("trajaudit:\n  exploration_share_pct: 50\n  reread_threshold: 3\n")
    assert overrides == {"exploration_share_pct": 50, "reread_threshold": 3}
    rules = tmp_path / "rules.yaml"
    rules.write_text("trajaudit: {exploration_share_pct: 50, reread_threshold: 3}\n")
    cfg = apply_rules_file(Settings(), rules)
    lines = [read(f"/app/lib/{i}.js") for i in range(6)] + [write("/app/x.js"), sh("node /app/x.js"),
                                                             sh("cd /app && npm test")]
    j = acp_job(*lines)
    assert run("P8", j).status == "PASS"
    assert "6 distinct reads in the first 6 of 9 tool calls" in run("P8", j, cfg).evidence
    loop = acp_job(write("/app/x.js"), *[read("/app/x.js") for _ in range(4)])
    assert run("P8", loop).status == "PASS"
    assert "3 re-reads of 1 already-read target(s)" in run("P8", loop, cfg).evidence


# ================================================================================================ P14 precise


@pytest.mark.parametrize("path", [
    "/logs/agent/sessions/plans/snappy-munching-quokka.md",
    "/logs/agent/sessions/todos/4f1c.json",
    "/home/agent/.claude/settings.json",
    "/root/.codex/config.toml",
], ids=["plan", "todos", "home-claude", "root-codex"])
def test_p14_the_harness_own_paths_are_not_pollution(path):
    """Claude Code under Harbor keeps its config dir in the agent log dir (plan mode writes its plan to
    /logs/agent/sessions/plans/); Claude Code and Codex keep state in ~/.claude/ and ~/.codex/."""
    j = acp_job(user("Fix search() in /app/lib/search.js."), write(path, "# plan\n"))
    assert run("P14", j).status == "PASS"


def test_p14_the_verifier_log_dir_is_not_the_harness_own():
    j = acp_job(user("Fix the bug."), sh("echo 1 > /logs/verifier/reward.txt"))
    f = run("P14", j)
    assert f.status == "WARN" and "/logs/verifier/reward.txt" in f.evidence


def test_p14_literal_mode_keeps_the_seed_rule_for_harness_paths():
    j = acp_job(user("Fix the bug."), write("/logs/agent/sessions/plans/p.md", "# plan\n"))
    assert run("P14", j, LITERAL).status == "WARN"


def _metacode_run(*extra: dict) -> list[dict]:
    """A metacode (opencode) ATIF run from labelled/: no recorded cwd, no instruction path, every shell command
    starting `cd /app && ...`, writes under /app."""
    return [read("/app/lib/search.js"), sh("cd /app && git log --oneline -20", "d65256e fix"),
            sh("cd /app && npm test 2>&1 | tail -5", "8 passing"),
            tool("edit", "write", raw_input={"filePath": "/app/lib/proxyPool.js", "content": "export {}"},
                 locations=["/app/lib/proxyPool.js"]), *extra]


def test_p14_the_agents_cd_directory_is_its_workspace():
    j = acp_job(*_metacode_run())
    assert run("P14", j).status == "PASS"
    assert "/app/" in run("P14", j).data["allowed_prefixes"]
    assert run("P14", j, LITERAL).status == "WARN"


def test_p14_a_single_cd_elsewhere_does_not_widen_the_workspace():
    """Only the most frequent leading cd counts: one `cd /srv/cache && ...` write is still outside."""
    j = acp_job(*_metacode_run(sh("cd /srv/cache && echo x > /srv/cache/state.json")))
    f = run("P14", j)
    assert f.status == "WARN" and "writes /srv/cache/state.json outside" in f.evidence


def test_p14_a_system_directory_is_never_the_workspace():
    j = acp_job(*[sh("cd /etc && ls") for _ in range(3)], sh("cd /etc && echo '1.2.3.4 x' >> /etc/hosts"))
    f = run("P14", j)
    assert f.status == "WARN" and "system directory" in f.evidence


def test_p14_inline_scripts_are_not_writes():
    """The metacode run's `node -e` probe: its regex literal is not a written path."""
    assert run("P14", acp_job(user("Fix search()."), sh(NODE_E, "['ds:4']"))).status == "PASS"
