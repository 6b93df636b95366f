"""Privacy beyond secrets, end to end: the personal-details corpus (tests/privacy/personal.py:
names in test output, postal addresses, national ids, bank details, bare internal hosts,
``user@host`` identities, passwords on command lines; in error output, fix commands and the
person's words) planted in real Claude Code transcripts, then ingest, a night with `commons
publish on`, render, report, recall, the MCP tools and export.

The bars (docs/privacy.md "Personal details"): no case reaches a published record or a memory
file; at most 2 reach any local door (a lesson, a report, a recall or MCP answer)."""

from __future__ import annotations

import pytest

from commons.core.policy import scrub
from tests.privacy import doors
from tests.privacy.personal import CASES, WHERE

LEAVE_THE_MACHINE = ("export",)
MEMORY = ("memory folder",)
AT_MOST_LOCAL = 2


_run = doors.runner


@pytest.fixture
def texts(home, capsys, tmp_path):
    night = doors.personal_home(_run(capsys), tmp_path / "sessions")
    assert night["counts"]["lessons_learned"] >= len(CASES) // 2, night["counts"]  # the corpus became lessons
    return doors.door_texts(_run(capsys), home, doors.personal_queries())


def test_the_corpus_is_big_and_realistic_enough():
    assert len(CASES) >= 60
    assert {c.where for c in CASES} == set(WHERE)
    assert len({c.kind for c in CASES}) >= 7
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_scrubber_replaces_each_case_with_its_placeholder(case):
    planted = f"{case.command}\n{case.text}"
    clean = scrub(planted)
    assert not doors.leaks(case.value, clean), clean
    assert case.kind.value in clean, clean


def test_no_personal_detail_reaches_a_published_record_or_a_memory_file_and_almost_none_a_local_door(texts):
    reached = {c.name: [d for d, t in texts.items() if doors.leaks(c.value, t)] for c in CASES}
    assert not [n for n, where in reached.items() if set(where) & {*LEAVE_THE_MACHINE, *MEMORY}]
    local = [n for n, where in reached.items() if where]
    assert len(local) <= AT_MOST_LOCAL, local
