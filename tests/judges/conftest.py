"""Fixtures of the judge tests: the real OpenAI-compatible server and the litellm guard (tests/judgeserver.py)."""

from tests.judgeserver import dead_url, judge_server, litellm  # noqa: F401 (fixtures)
