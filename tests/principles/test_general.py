"""General family: P4, P6, P7, P8, P10, P14, P15 (the seed's audit-general.md), with the spec's own examples.

Only P8 has a literal mode (the seed's counters; precise mode's calibration is in test_p8_calibration.py): where
another principle's test runs in both modes it checks that ``--trajaudit-literal`` leaves it unchanged.
"""

from __future__ import annotations

import pytest

from pytest_trajaudit.model import AGENT, Event, Trajectory
from pytest_trajaudit.principles import registry
from pytest_trajaudit.principles.general import VERBATIM_LIMIT
from tests.principles.builders import MODES, acp_job, job, msg, read, run, sh, thought, tool, user, write

GENERAL = ("P4", "P6", "P7", "P8", "P10", "P14", "P15")


def test_general_family_registered_with_the_documented_tiers():
    reg = registry()
    assert {c for c, p in reg.items() if p.family == "general"} == set(GENERAL) | {"P3", "P5", "P9", "P11", "P12", "P13"}
    assert all(reg[c].tier == "C0" for c in GENERAL + ("P9", "P11"))
    assert {c: reg[c].tier for c in ("P3", "P5", "P12", "P13")} == {"P3": "C2", "P5": "C1", "P12": "C1", "P13": "C2"}
    assert [c for c in GENERAL if not reg[c].affects_verdict] == ["P15"]


# ================================================================================================ P4 floor


def _calls(n: int, *, with_read: bool) -> list[dict]:
    """n tool calls; the first is a read of input data when ``with_read``, the rest write/run a solver."""
    calls = [read("/root/traces.csv", "txn,key\n1,a")] if with_read else []
    while len(calls) < n:
        calls.append(write("/root/solve.py", "print(1)\n") if len(calls) % 2 else sh("python /root/solve.py", "1"))
    return calls[:n]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n", "with_read", "status", "verdict"), [
    (0, False, "FAIL", "below"),
    (1, False, "FAIL", "below"),
    (2, True, "FAIL", "below"),
    (3, True, "WARN", "borderline"),
    (4, True, "WARN", "borderline"),
    (5, True, "PASS", "above"),
    (10, True, "PASS", "above"),
    (5, False, "WARN", "borderline"),
    (8, False, "WARN", "borderline"),
])
def test_p4_floor_on_passing_runs(mode, n, with_read, status, verdict):
    f = run("P4", acp_job(*_calls(n, with_read=with_read), msg("Done."), reward=1.0), MODES[mode])
    assert f.status == status
    assert f.data["n_tool_calls"] == n
    assert f.data["verdict"] == verdict


def test_p4_zero_calls_names_the_oracle_and_borderline_names_the_missing_read():
    assert "only legitimate for the oracle" in run("P4", acp_job(msg("42"), reward=1.0)).evidence
    assert "agentic-suspect" in run("P4", acp_job(*_calls(1, with_read=False), reward=1.0)).evidence
    assert "none of them reads input data" in run("P4", acp_job(*_calls(6, with_read=False), reward=1.0)).evidence


@pytest.mark.parametrize("reward", [0.5, 0.0, None])
def test_p4_not_applicable_without_a_passing_reward(reward):
    f = run("P4", acp_job(*_calls(1, with_read=False), reward=reward))
    assert f.status == "N/A"
    assert f.data["verdict"] == "below"  # the shape is still recorded


# ============================================================================================ P6 memorization

SEED_THOUGHT = ("This is the classic TicToc unnecessary-abort problem from Yu et al. 2016. "
                "The known correct policy is...")


@pytest.mark.parametrize("mode", MODES)
def test_p6_seed_warn_example(mode):
    """Seed: the first thought names the paper, no reads of /root/traces, then Write /root/solve.py."""
    j = acp_job(thought(SEED_THOUGHT), write("/root/solve.py", "# the published algorithm\n"),
                sh("python /root/solve.py", "3216"))
    f = run("P6", j, MODES[mode])
    assert f.status == "WARN"
    assert f.data["names_published_work"] is True
    assert f.data["reads_before_first_write"] == 0
    assert f.data["first_write_event"] == 2
    assert f.events == [1, 2]
    assert "Yu et al" in f.evidence


@pytest.mark.parametrize("mode", MODES)
def test_p6_same_with_a_read_first_passes(mode):
    j = acp_job(thought(SEED_THOUGHT), read("/root/traces/aborts.csv", "txn,key,local_wts"),
                write("/root/solve.py", "print(1)\n"))
    f = run("P6", j, MODES[mode])
    assert f.status == "PASS"
    assert f.data["names_published_work"] is True
    assert f.data["reads_before_first_write"] == 1


def test_p6_shell_sampling_counts_as_a_read():
    j = acp_job(thought(SEED_THOUGHT), sh("head -5 /root/traces/aborts.csv", "txn,key"), write("/root/solve.py"))
    assert run("P6", j).status == "PASS"


def test_p6_no_published_work_named_passes():
    j = acp_job(thought("Let me write a solver for this."), write("/root/solve.py", "print(1)\n"))
    f = run("P6", j)
    assert f.status == "PASS"
    assert f.data["names_published_work"] is False


def test_p6_only_the_first_reasoning_counts():
    j = acp_job(thought("Let me start."), thought(SEED_THOUGHT), write("/root/solve.py"))
    assert run("P6", j).status == "PASS"


def test_p6_not_applicable_without_reasoning_or_tools():
    assert run("P6", acp_job()).status == "N/A"


@pytest.mark.parametrize("lines", [
    [thought(SEED_THOUGHT), write("/root/solve.py")],
    [thought(SEED_THOUGHT), sh("echo x > /root/out.txt")],
    [msg("Well-known algorithm; the known correct solution is trivial."), write("/root/a.py"), write("/root/b.py")],
    [thought(SEED_THOUGHT)],
    [],
])
def test_p6_never_fails(lines):
    assert run("P6", acp_job(*lines)).status in ("PASS", "WARN", "N/A")


# ============================================================================================ P7 breakdown

PR755 = [
    tool("other", "ToolSearch", raw_input={"query": "select:Skill"}, output="Skill"),
    tool("other", "Skill", raw_input={"skill": "tictoc-analysis"}, output="loaded"),
    tool("other", "Skill", raw_input={"skill": "json-output"}, output="loaded"),
    read("/root/traces/aborts.csv", "txn,key"),
    read("/root/traces/writes.csv", "txn,key"),
    read("/root/traces/schema.md", "# schema"),
    write("/root/solve.py", "print(1)\n"),
    sh("python /root/solve.py", "3216"),
    sh("wc -l /root/unnecessary_aborts.json", "1"),
    sh("head -c 200 /root/unnecessary_aborts.json", "[1, 2]"),
]


@pytest.mark.parametrize("mode", MODES)
def test_p7_pr755_breakdown_shape(mode):
    j = acp_job(*PR755, msg("Done."), n_tool_calls=10)
    f = run("P7", j, MODES[mode])
    assert f.status == "PASS"
    assert f.data["total"] == 10
    assert f.data["by_kind"] == {"read": 3, "execute": 3, "edit": 1, "other": 3}
    assert f.data["by_title"] == {"ToolSearch": 1, "Skill": 2, "Read File": 3, "Terminal": 3, "Write": 1}
    assert f.data["n_tool_calls_reported"] == 10


def test_p7_mismatch_with_reported_count_is_warn():
    f = run("P7", acp_job(*PR755, n_tool_calls=12))
    assert f.status == "WARN"
    assert "10 tool calls" in f.evidence and "n_tool_calls=12" in f.evidence
    assert f.data["total"] == 10


def test_p7_without_a_reported_count_passes():
    f = run("P7", acp_job(*PR755[:2]))
    assert f.status == "PASS"
    assert f.data["total"] == 2
    assert "n_tool_calls_reported" not in f.data


def test_p7_no_tool_calls():
    f = run("P7", acp_job(msg("42"), n_tool_calls=0))
    assert f.status == "PASS"
    assert f.data == {"total": 0, "by_kind": {}, "by_title": {}, "n_tool_calls_reported": 0}


# ============================================================================================== P8 struggle


@pytest.mark.parametrize("mode", MODES)
def test_p8_seed_struggle_example(mode):
    """Seed: Write /root/solve.py v1, v2 (rewrite #1), v3 (rewrite #2 → threshold), plus a reversal."""
    j = acp_job(read("/root/traces.csv", "a,b"),
                write("/root/solve.py", "v1\n"), sh("python /root/solve.py", "wrong"),
                write("/root/solve.py", "v2\n"), sh("python /root/solve.py", "still wrong"),
                msg("actually let me try a different approach"),
                write("/root/solve.py", "v3\n"), sh("python /root/solve.py", "3216"))
    f = run("P8", j, MODES[mode])
    assert f.status == "WARN"
    assert f.data["rewrites"] == 2
    assert f.data["reversals"] == 1
    assert f.data["verdict"] == "struggle"
    assert "rewrite #2 of /root/solve.py" in f.data["evidence"]
    assert "reversal 'actually'" in f.data["evidence"]


def test_p8_one_rewrite_alone_is_below_threshold():
    j = acp_job(write("/root/solve.py", "v1\n"), sh("python /root/solve.py"), write("/root/solve.py", "v2\n"))
    f = run("P8", j)
    assert f.status == "PASS"
    assert f.data["rewrites"] == 1


def test_p8_heredoc_rewrites_count_too():
    heredoc = "cat > /root/solve.py <<'EOF'\nprint({})\nEOF"
    j = acp_job(*[sh(heredoc.format(i)) for i in range(3)])
    f = run("P8", j)
    assert f.status == "WARN"
    assert f.data["rewrites"] == 2


def test_p8_repeated_identical_commands():
    j = acp_job(write("/root/solve.py"), *[sh("python /root/solve.py --input /root/traces.csv", "Traceback") for _ in range(3)])
    f = run("P8", j)
    assert f.status == "WARN"
    assert f.data["retries"] == 2
    assert "repeated command ×3" in f.data["evidence"]


def test_p8_repeats_compare_the_first_80_characters_in_literal_mode():
    """The seed compares 80-character prefixes; precise mode compares whole commands (test_p8_calibration.py)."""
    head = "python /root/solve.py " + "x" * 80
    j = acp_job(sh(head + " --a"), sh(head + " --b"), sh(head + " --c"))
    assert run("P8", j, MODES["literal"]).data["retries"] == 2
    assert run("P8", j).data["retries"] == 0
    j = acp_job(sh("python /root/solve.py --a"), sh("python /root/solve.py --b"), sh("python /root/solve.py --c"))
    assert run("P8", j, MODES["literal"]).data["retries"] == 0


def test_p8_one_repeat_is_below_threshold():
    f = run("P8", acp_job(sh("python /root/solve.py"), sh("python /root/solve.py")))
    assert f.status == "PASS"
    assert f.data["retries"] == 1


@pytest.mark.parametrize(("n_reads", "status"), [(6, "WARN"), (9, "WARN"), (5, "PASS")])
def test_p8_exploration_loop_literal(n_reads, status):
    """The seed's counter (literal mode): reads before the first solve attempt, ≥6. Precise mode's calibrated
    loop is tested in test_p8_calibration.py."""
    j = acp_job(*[read(f"/root/data/part{i}.csv", "a,b") for i in range(n_reads)],
                write("/root/solve.py"), sh("python /root/solve.py", "ok"))
    f = run("P8", j, MODES["literal"])
    assert f.status == status
    assert f.data["exploration_loop"] == n_reads
    if status == "WARN":
        assert f"{n_reads} reads before the first solve attempt" in f.data["evidence"]


def test_p8_reversal_before_the_first_solve_does_not_count():
    j = acp_job(msg("Actually, let me first look at the data."), read("/root/a.csv"), write("/root/solve.py"),
                sh("python /root/solve.py", "ok"), msg("Done."))
    f = run("P8", j)
    assert f.status == "PASS"
    assert f.data["reversals"] == 0


@pytest.mark.parametrize("mode", MODES)
def test_p8_clean_run_is_wrong_answer(mode):
    j = acp_job(read("/root/traces.csv", "a,b"), write("/root/solve.py", "print(1)\n"),
                sh("python /root/solve.py", "3216"), msg("Output written to /root/out.json."))
    f = run("P8", j, MODES[mode])
    assert f.status == "PASS"
    # precise mode's fifth counter (re-read loop) and the run-length figures of its exploration loop
    precise = {"rereads": 0, "exploration_calls": 1, "tool_calls": 3} if mode == "precise" else {}
    assert f.data == {"retries": 0, "rewrites": 0, "reversals": 0, "exploration_loop": 1, **precise,
                      "verdict": "wrong_answer", "evidence": "all counters below threshold"}


def test_p8_not_applicable_without_tools_or_messages():
    assert run("P8", acp_job(thought("hmm"))).status == "N/A"


# ============================================================================================= P10 verbatim

FINAL = ("Output written to /root/unnecessary_aborts.json with 3216 unnecessarily-aborted transaction ids.\n\n"
         "Summary of the detection policy:\nFor a TicToc abort entry (txn, key, local_wts, current_wts, commit_ts, "
         "ats_at_abort): ...")


@pytest.mark.parametrize("mode", MODES)
def test_p10_last_agent_message_beats_a_later_thought(mode):
    j = acp_job(msg("I'll read the traces first."), sh("ls /root", "traces"), msg(FINAL),
                thought("Let me double-check nothing is left."), sh("ls /root", "out.json"))
    f = run("P10", j, MODES[mode])
    assert f.status == "PASS"
    assert f.data["verbatim_final"] == FINAL  # verbatim: line breaks kept
    assert f.data["event"] == 3


def test_p10_thought_when_no_message():
    j = acp_job(thought("first idea"), sh("python /root/solve.py", "3216"), thought("The policy is ats-based.\nDone."))
    f = run("P10", j)
    assert f.data["verbatim_final"] == "The policy is ats-based.\nDone."
    assert f.data["event"] == 3


def test_p10_last_execute_with_stdout_when_neither():
    j = acp_job(sh("ls /root", "traces"), read("/root/x.csv", "a"), sh("python /root/solve.py", "3216 ids\nwritten"),
                read("/root/out.json", "[1]"))
    f = run("P10", j)
    assert f.data["verbatim_final"] == "$ python /root/solve.py\n3216 ids\nwritten"
    assert f.data["event"] == 3


def test_p10_empty_messages_are_skipped():
    j = acp_job(msg("the real final"), msg("   "), thought(""))
    assert run("P10", j).data["verbatim_final"] == "the real final"


def test_p10_secrets_redacted_rest_verbatim():
    text = "Done.\nI exported OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345\nand wrote /root/out.json"
    f = run("P10", acp_job(msg(text)))
    v = f.data["verbatim_final"]
    assert "sk-proj-" not in v and "abcdefghijklmnopqrstuvwxyz012345" not in v
    assert "<REDACTED>" in v
    assert v.startswith("Done.\nI exported OPENAI_API_KEY=") and v.endswith("\nand wrote /root/out.json")
    assert "sk-proj" not in f.evidence


def test_p10_long_statement_clipped_with_a_note():
    # built directly: the loaders clip a message to 20,000 characters already
    t = Trajectory("acp-jsonl", "t.jsonl", [Event(0, AGENT, text="y" * (VERBATIM_LIMIT + 500))])
    f = run("P10", job(t))
    v = f.data["verbatim_final"]
    assert v.startswith("y" * VERBATIM_LIMIT)
    assert v.endswith("[... 500 characters clipped]")


def test_p10_not_applicable_without_any_statement():
    assert run("P10", acp_job(read("/root/a.csv", "a"), write("/root/b.py"))).status == "N/A"


# ========================================================================================= P14 pollution


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", [
    sh("echo '127.0.0.1 db.local' >> /etc/hosts"),
    write("/etc/hosts", "127.0.0.1 db.local\n"),
    sh("cp /root/tool /usr/local/bin/tool"),
    sh("mkdir -p /opt/cache"),
], ids=["append-etc-hosts", "write-etc-hosts", "cp-usr", "mkdir-opt"])
def test_p14_system_directory_write_is_warn(mode, call):
    f = run("P14", acp_job(call), MODES[mode])
    assert f.status == "WARN"
    assert "system directory" in f.evidence
    assert f.events == [1]


@pytest.mark.parametrize("mode", MODES)
def test_p14_scratch_writes_pass(mode):
    j = acp_job(write("/root/solve.py", "print(1)\n"), sh("python /root/solve.py > /tmp/out.txt 2>&1"),
                sh("mkdir -p /tmp/work && cp /tmp/out.txt /root/result.txt"), sh("python /root/solve.py > /dev/null"))
    f = run("P14", j, MODES[mode])
    assert f.status == "PASS"


def test_p14_path_named_by_the_instruction_passes():
    j = acp_job(user("Write the answer as JSON to /app/out.json."), write("/app/out.json", "[]"))
    assert run("P14", j).status == "PASS"


def test_p14_job_instruction_is_used_when_present():
    j = acp_job(user("Solve it."), write("/app/out.json", "[]"), instruction="Save the result in /app/out.json.")
    assert run("P14", j).status == "PASS"


def test_p14_unnamed_path_outside_scratch_is_warn():
    j = acp_job(user("Write the answer to /root/out.json."), write("/app/out.json", "[]"))
    f = run("P14", j)
    assert f.status == "WARN"
    assert "writes /app/out.json outside" in f.evidence


def test_p14_pip_install_outside_a_venv_is_warn():
    f = run("P14", acp_job(sh("pip install numpy", "Successfully installed numpy")))
    assert f.status == "WARN"
    assert "pip install outside a virtualenv" in f.evidence


@pytest.mark.parametrize("lines", [
    [sh("python -m venv .venv && . .venv/bin/activate && pip install numpy")],
    [sh("python -m venv /root/.venv"), sh(". /root/.venv/bin/activate && pip install numpy")],
], ids=["one-command", "venv-earlier"])
def test_p14_pip_install_inside_a_venv_passes(lines):
    assert run("P14", acp_job(*lines)).status == "PASS"


def test_p14_system_package_install_is_warn():
    f = run("P14", acp_job(sh("apt-get install -y jq")))
    assert f.status == "WARN"
    assert "system package install" in f.evidence


def test_p14_failed_calls_are_ignored():
    assert run("P14", acp_job(sh("echo x >> /etc/hosts", "Permission denied", status="failed"))).status == "PASS"


# ============================================================================================= P15 self-doubt


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("final", [
    "I wrote /root/out.json, but I'm not sure this is right.",
    "Here is the result; this might be wrong for multi-row transactions.",
    "Out of time, submitting what I have.",
])
def test_p15_doubt_in_final_message_is_warn(mode, final):
    j = acp_job(sh("python /root/solve.py", "3216"), msg(final))
    f = run("P15", j, MODES[mode])
    assert f.status == "WARN"
    assert f.data["status"] == "present"
    assert f.events == [2]


def test_p15_is_information_only():
    assert registry()["P15"].affects_verdict is False


@pytest.mark.parametrize("mode", MODES)
def test_p15_confident_final_passes(mode):
    j = acp_job(msg("I'm not sure yet what format they want; let me check."), sh("cat /root/README.md", "JSON"),
                msg("Output written to /root/out.json with 3216 ids."))
    f = run("P15", j, MODES[mode])
    assert f.status == "PASS"  # only the final message counts
    assert f.data["status"] == "none"


def test_p15_not_applicable_without_an_agent_message():
    f = run("P15", acp_job(sh("python /root/solve.py", "done"), read("/root/out.json", "[]")))
    assert f.status == "N/A"
