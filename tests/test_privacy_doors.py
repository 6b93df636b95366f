"""Privacy at every door, end to end: the corpus planted in real Claude Code transcripts, through
ingest, sleep, render, report, recall, the MCP tools and export, into one fresh home.

Each format of tests/privacy/corpus.py is planted three ways (a failed command's output, the
person's correction, the agent's statement) in sessions on two days, so sleep makes lessons of
them. No 8 characters of any planted value may reach a lesson, the memory folder, a report, a
recall or MCP answer, or an exported record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from commons.core.scrub import PLACEHOLDER, is_clean
from tests.privacy.corpus import BENIGN, FORMATS, Format, cases
from tests.transcripts import cli, cli_json, session

WINDOW = 8
NIGHT = "2026-11-05T03:00Z"
PER_SESSION = 5


def _leaks(secret: str, text: str) -> list[str]:
    if len(secret) <= WINDOW:
        return [secret] if secret in text else []
    return [secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1) if secret[i:i + WINDOW] in text]


def _command(fmt: Format) -> str:
    first = fmt.error.splitlines()[0]
    return first[2:].format(s=fmt.secret) if first.startswith("$ ") else f"make {fmt.name}"


def _plant(folder: Path) -> list[Path]:
    """Every format, in sessions of a few formats each, on two days (a lesson needs a repeat)."""
    by_format = {c.format.name: {} for c in cases()}
    for c in cases():
        by_format[c.format.name][c.context] = c.text
    paths = []
    for day in (2, 3):
        for n in range(0, len(FORMATS), PER_SESSION):
            s = session(folder, day, f"planted-{n}", hour=9 + n // PER_SESSION)
            s.user("get the deploy pipeline green again")
            for fmt in FORMATS[n:n + PER_SESSION]:
                texts = by_format[fmt.name]
                command = _command(fmt)
                s.bash(command, f"run the {fmt.name} step", texts["error"], exit_code=1)
                s.bash(f"{command} --verbose", f"rerun the {fmt.name} step", "ok", exit_code=0)
                s.say(("text", texts["statement"]))
                s.user(texts["correction"])
            s.write()
            paths.append(s.path)
    return paths


def _doors(home, capsys) -> dict[str, str]:
    """The text each door produced, by door."""
    out = {"lessons": json.dumps(cli_json(capsys, "lessons", "--status", "all", at=NIGHT), ensure_ascii=False)}
    memory = home.data_dir / "memory"
    out["memory folder"] = "\n".join(p.read_text(encoding="utf-8") for p in sorted(memory.glob("*.md")))
    reports = sorted((home.data_dir / "reports").glob("*.md"))
    out["report"] = "\n".join(p.read_text(encoding="utf-8") for p in reports)
    out["report"] += json.dumps(cli_json(capsys, "report", "--since", "2026-11-01T00:00Z", at=NIGHT))
    answers = []
    for fmt in FORMATS:
        query = " ".join(fmt.error.splitlines()[1:3]).replace("{s}", "") or fmt.name
        answers.append(json.dumps(cli_json(capsys, "recall", query, "-k", "5", at=NIGHT), ensure_ascii=False))
    out["recall"] = "\n".join(answers)
    code, exported, err = cli(capsys, "export", at=NIGHT)
    assert code == 0, err
    out["export"] = exported
    return out


@pytest.fixture
def planted_home(home, capsys, tmp_path):
    assert cli(capsys, "init")[0] == 0
    assert cli(capsys, "publish", "on")[0] == 0
    for path in _plant(tmp_path / "sessions"):
        assert cli(capsys, "ingest", str(path), at="2026-11-04T18:00Z")[0] == 0
    night = cli_json(capsys, "sleep", at=NIGHT)
    assert night["counts"]["lessons_learned"] >= len(FORMATS), night["counts"]
    return home


def test_no_planted_value_reaches_any_door(planted_home, capsys):
    doors = _doors(planted_home, capsys)
    assert doors["memory folder"] and doors["report"] and doors["recall"]
    leaked = {(door, fmt.name) for door, text in doors.items() for fmt in FORMATS if _leaks(fmt.secret, text)}
    assert leaked == set(), sorted(leaked)
    # The placeholders show the lessons still say what stood there.
    shown = set(PLACEHOLDER.findall(doors["lessons"]))
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
    assert value[:WINDOW] not in exported and '"lesson"' not in exported.replace('"lesson": null', "")


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
