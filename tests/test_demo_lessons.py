"""The demo's bundled sessions carry what fixed each failure, so each node's lessons name it.

Each node's month (`commons/demo/sessions/<node>/`) goes through the reader and one night of the
core's sleep, as `commons demo` does per node; the lessons are checked by their text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commons.core.records import LessonKind
from commons.ingest.lessons_report import measure

DEMO = Path(__file__).resolve().parents[1] / "commons" / "demo" / "sessions"
NAMES_FIX = re.compile(r"; (?:`[^`]+` succeeded after it|it (?:succeeded|passed) after `[^`]+`)")

# Every error lesson a node learns, by the command that failed, and what its sessions show fixed it.
EXPECTED = {
    "ada": {"pip install": "`uv add <package>` succeeded after it (2 of 2 sessions).",
            "pytest": "it passed after `Edit pyproject.toml: asyncio_mode = 'auto'` (1 session)."},
    "grace": {"npm ci": "`npm install` succeeded after it (1 of 2 sessions)."},
    # The push is tried again after the rebase in both sessions: the rebase is the step before it.
    "linus": {"git push": "it passed after `git pull --rebase origin main` (2 of 2 sessions)."},
}


@pytest.mark.parametrize("node", sorted(EXPECTED))
def test_every_error_lesson_of_a_demo_node_names_what_fixed_it(node):
    report = measure(sorted((DEMO / node).glob("day-*.jsonl")))
    errors = {re.match(r"`([^`]+)`", l.text).group(1): l.text for l in report.lessons if l.kind is LessonKind.ERROR}
    assert set(errors) == set(EXPECTED[node])
    for command, fix in EXPECTED[node].items():
        assert NAMES_FIX.search(errors[command]) and errors[command].endswith(fix), errors[command]
    assert report.bare_echoes.hits == 0


def test_demo_corrections_state_the_persons_claim_and_the_command_it_corrected():
    report = measure(sorted((DEMO / "linus").glob("day-*.jsonl")))
    corrections = [l.text for l in report.lessons if l.kind is LessonKind.CORRECTION]
    assert ("The person corrected the agent's `git push --force origin main`: "
            "\"never force-push main. pull --rebase and push again\".") in corrections
