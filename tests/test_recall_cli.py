"""`commons recall` through the store: scoring parts, touching what it returns, episodes."""

from __future__ import annotations

import pytest

from tests.test_organism import day2_pip_twice_and_a_correction, ingest
from tests.transcripts import cli, cli_json


@pytest.fixture
def learned(home, capsys, tmp_path):
    assert cli(capsys, "init")[0] == 0
    ingest(capsys, day2_pip_twice_and_a_correction(tmp_path / "sessions"), "2026-11-02T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-03T03:00Z")
    return home


def test_recall_puts_the_matching_lesson_first_with_its_score_parts(learned, capsys):
    hits = cli_json(capsys, "recall", "pip install externally managed", "-k", "2", at="2026-11-20T12:00Z")
    assert len(hits) == 2 and hits[0]["text"].startswith("`pip install` failed")
    top = hits[0]
    assert set(top) >= {"id", "text", "score", "relevance", "recency", "strength"}
    assert top["score"] == pytest.approx(0.60 * top["relevance"] + 0.25 * top["recency"]
                                         + 0.15 * top["strength_normalised"], abs=2e-3)
    assert hits[0]["score"] >= hits[1]["score"]


def test_recall_touches_what_it_returns(learned, capsys):
    later = "2026-12-20T12:00Z"
    first = cli_json(capsys, "recall", "pip install externally managed", "-k", "1", at=later)[0]
    assert first["recency"] < 0.5  # last used on the night it was learned, 47 days before
    again = cli_json(capsys, "recall", "pip install externally managed", "-k", "1", at=later)[0]
    assert again["id"] == first["id"] and again["recency"] == 1.0


def test_recall_can_search_episodes_too(learned, capsys):
    hits = cli_json(capsys, "recall", "uv add httpx", "-k", "10", "--episodes", at="2026-11-03T12:00Z")
    assert {"lesson", "episode"} <= {h["type"] for h in hits}


def test_an_empty_query_is_a_usage_error(learned, capsys):
    assert cli(capsys, "recall", "  ")[0] == 2
