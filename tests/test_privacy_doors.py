"""Privacy at every door, end to end: the corpus planted in real Claude Code transcripts, through
ingest, sleep, render, report, recall, the MCP tools and export, into one fresh home.

Each format of tests/privacy/corpus.py is planted three ways (a failed command's output, the
person's correction, the agent's statement) in sessions on two days, so sleep makes lessons of
them. No 8 characters of any planted value may reach a lesson, the memory folder, a report, a
recall or MCP answer, or an exported record.
"""

from __future__ import annotations

import json

import pytest

from commons.core.policy.scrubber import PLACEHOLDER, is_clean
from tests.privacy import doors
from tests.privacy.corpus import BENIGN, FORMATS
from tests.transcripts import cli, cli_json, session

NIGHT = doors.NIGHT


_run = doors.runner


@pytest.fixture
def planted_home(home, capsys, tmp_path):
    night = doors.planted_home(_run(capsys), tmp_path / "sessions")
    assert night["counts"]["lessons_learned"] >= len(FORMATS), night["counts"]
    return home


def test_no_planted_value_reaches_any_door(planted_home, capsys):
    texts = doors.door_texts(_run(capsys), planted_home)
    # export may be empty: none of these lessons need be shared (each holds a placeholder)
    assert set(texts) == set(doors.DOORS) and all(texts[d] for d in doors.DOORS if d != "export")
    leaked = {(door, fmt.name) for door, text in texts.items() for fmt in FORMATS if doors.leaks(fmt.secret, text)}
    assert leaked == set(), sorted(leaked)
    # The placeholders show the lessons still say what stood there.
    shown = set(PLACEHOLDER.findall(texts["lessons"]))
    assert len(shown) >= 5, shown


def test_every_exported_lesson_is_clean_and_carries_no_placeholder(planted_home, capsys):
    code, exported, _ = cli(capsys, "export", "--type", "lesson", at=NIGHT)
    records = [json.loads(line) for line in exported.splitlines() if line.strip()]
    for record in records:
        words = json.dumps(record, ensure_ascii=False)
        assert PLACEHOLDER.search(words) is None and "~/" not in words, words


def test_the_memory_folder_and_lessons_pass_the_privacy_check(planted_home, capsys):
    code, out, _ = cli(capsys, "store", "check", "--privacy", "--json", at=NIGHT)
    assert code == 0, out
    assert json.loads(out) == {"ok": True, "hits": []}


@pytest.mark.parametrize("output, value", [
    # The two formats a plain `commons publish on` once sent to peers.
    ("denied: requested access to the resource is denied: \"auth\": \"ZGVwbG95Ym90OmRDWFJBa2NjSjExSEt3\"",
     "ZGVwbG95Ym90OmRDWFJBa2NjSjExSEt3"),
    ("ERROR 1045 (28000): Access denied for user 'app'@'db' (using password My$qlR00tPw)", "My$qlR00tPw"),
], ids=["docker-auth", "mysql-using-password"])
def test_auto_publish_never_sends_a_lesson_made_from_a_secret(home, capsys, tmp_path, output, value):
    assert cli(capsys, "init")[0] == 0
    assert cli(capsys, "publish", "on")[0] == 0
    command = "docker push registry.acme.io/api:1.4.2" if "auth" in output else "mysql -u app -h db shop"
    for day in (2, 3):
        s = session(tmp_path / "sessions", day, "push")
        s.user("ship it")
        s.bash(command, "ship", output, exit_code=1)
        s.bash(command + " --debug", "ship again", "done", exit_code=0)
        s.write()
        assert cli(capsys, "ingest", str(s.path), at="2026-11-04T18:00Z")[0] == 0
    cli_json(capsys, "sleep", at=NIGHT)
    found = cli_json(capsys, "lessons", "--status", "all", at=NIGHT)
    made = [d for d in found if d["kind"] == "error"]
    assert made and all(d["scope"] == "local" for d in made), made
    assert all(value not in d["text"] for d in found)
    code, exported, _ = cli(capsys, "export", at=NIGHT)
    assert value[:doors.WINDOW] not in exported and '"lesson"' not in exported.replace('"lesson": null', "")


def test_benign_strings_planted_the_same_way_are_kept_in_the_lessons(home, capsys, tmp_path):
    assert cli(capsys, "init")[0] == 0
    kept = [b for b in BENIGN if b.startswith(("error:", "FileNotFoundError", "SyntaxError", "UnauthorizedError"))]
    for day in (2, 3):
        s = session(tmp_path / "sessions", day, "benign")
        s.user("run the tests")
        for i, line in enumerate(kept):
            s.bash(f"pytest tests/test_{i}.py", "tests", line, exit_code=1)
        s.write()
        assert cli(capsys, "ingest", str(s.path), at="2026-11-04T18:00Z")[0] == 0
    cli_json(capsys, "sleep", at=NIGHT)
    texts = " ".join(d["text"] for d in cli_json(capsys, "lessons", "--status", "all", at=NIGHT))
    assert "pathspec 'a1b2c3d'" in texts and "unexpected token: IDENTIFIER" in texts
    assert "UnauthorizedError: the request lacks valid authentication credentials" in texts
    assert all(is_clean(b) for b in kept)
    assert PLACEHOLDER.search(texts) is None and "~/" not in texts
