"""`commons lessons scope ID shared` shows the exact words that would leave, and asks first."""

from __future__ import annotations

import io

import pytest

from tests.transcripts import cli, cli_json

AT = "2026-11-03T03:00Z"
TEXT = "`uv sync` rebuilt the venv after Python 3.13 landed on the CI machine."


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def lesson(home, capsys) -> str:
    assert cli(capsys, "init")[0] == 0
    added = cli_json(capsys, "lessons", "add", TEXT, "--scope", "local", at=AT)
    return added["id"]


def _scope(capsys, lesson: str) -> str:
    return cli_json(capsys, "lessons", "--status", "all", at=AT)[0]["scope"]


def test_without_a_terminal_and_without_yes_it_refuses_in_one_line_and_changes_nothing(lesson, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = cli(capsys, "lessons", "scope", lesson[:8], "shared", at=AT)
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--yes" in err and "Traceback" not in err
    assert _scope(capsys, lesson) == "local"


def test_on_a_terminal_it_prints_the_words_that_would_be_published_and_asks(lesson, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    code, _, err = cli(capsys, "lessons", "scope", lesson[:8], "shared", at=AT)
    assert code == 1 and TEXT in err and "Make it shared? [y/N]" in err
    assert _scope(capsys, lesson) == "local"
    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    code, out, err = cli(capsys, "lessons", "scope", lesson[:8], "shared", at=AT)
    assert code == 0 and "is now shared" in out
    assert _scope(capsys, lesson) == "shared"


def test_yes_makes_it_shared_and_the_json_carries_the_exact_published_words(lesson, capsys):
    data = cli_json(capsys, "lessons", "scope", lesson[:8], "shared", "--yes", at=AT)
    assert data["scope"] == "shared"
    assert data["published_words"]["text"] == TEXT
    assert set(data["published_words"]["prediction"]) == {"situation", "outcome"}


def test_a_token_pasted_into_a_hand_written_lesson_is_scrubbed_before_anything_shows_it(home, capsys):
    assert cli(capsys, "init")[0] == 0
    token = "ghp_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA"
    added = cli_json(capsys, "lessons", "add", f"`gh auth login` failed with the token {token}.", at=AT)
    assert token not in added["text"] and "<github-token>" in added["text"]
    assert added["scope"] == "local"
    data = cli_json(capsys, "lessons", "scope", added["id"][:8], "shared", "--yes", at=AT)
    assert token not in str(data)
