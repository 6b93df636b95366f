"""A home written before every door scrubbed: `commons store check --privacy` lists what is left
(where and kind, never the value), `commons store scrub` cleans it and says how much, and the
first sleep after an upgrade does the same once by itself."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.transcripts import cli, cli_json, pip_fails, session

NIGHT = "2026-11-05T03:00Z"
TOKEN = "ghp_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA"
PASSWORD = "Wint3rIsC0ming!"


@pytest.fixture
def old_home(home, capsys, tmp_path):
    """A home with lessons, episodes, a night and a report, then the raw words older versions kept."""
    assert cli(capsys, "init")[0] == 0
    for day in (2, 3):
        s = session(tmp_path / "sessions", day, "pip")
        s.user("add httpx")
        pip_fails(s, "httpx")
        s.bash("uv add httpx", "add with uv", "Resolved 3 packages", exit_code=0)
        s.write()
        assert cli(capsys, "ingest", str(s.path), at="2026-11-04T18:00Z")[0] == 0
    cli_json(capsys, "sleep", at="2026-11-04T19:00Z")
    raw = f" (DB_PASSWORD={PASSWORD}, token {TOKEN}, in /home/okonkwo/src)"
    with sqlite3.connect(home.database) as db:
        db.execute("UPDATE lessons SET text = text || ?, outcome = outcome || ?", (raw, raw))
        db.execute("UPDATE predictions SET outcome = outcome || ?", (raw,))
        (key, data), *_ = db.execute("SELECT key, data FROM episodes WHERE kind = 'error'").fetchall()
        body = json.loads(data)
        body["failure"] += raw
        db.execute("UPDATE episodes SET data = ? WHERE key = ?", (json.dumps(body), key))
        (rid, events), *_ = db.execute("SELECT id, events FROM sleep_runs").fetchall()
        events = json.loads(events)
        events[0]["text"] += raw
        db.execute("UPDATE sleep_runs SET events = ? WHERE id = ?", (json.dumps(events), rid))
        db.execute("DELETE FROM settings WHERE name = 'privacy_scrubbed'")
    for path in [*(home.data_dir / "memory").glob("commons-*.md"), *home.reports_dir.glob("*.md")]:
        path.write_text(path.read_text(encoding="utf-8") + raw + "\n", encoding="utf-8")
    index = home.data_dir / "memory" / "MEMORY.md"
    text = index.read_text(encoding="utf-8").replace("<!-- commons:end own -->", f"- {raw}\n<!-- commons:end own -->")
    index.write_text(PERSONS_LINE + text, encoding="utf-8")
    return home


# The person's own line in MEMORY.md is theirs: never rewritten, never listed.
PERSONS_LINE = "My staging box is 10.20.31.47.\n"


def _everything(home) -> str:
    files = [*(home.data_dir / "memory").glob("*.md"), *home.reports_dir.glob("*.md")]
    with sqlite3.connect(home.database) as db:
        rows = [str(r) for t in ("lessons", "predictions", "episodes", "sleep_runs") for r in db.execute(f"SELECT * FROM {t}")]
    return "\n".join([*rows, *(p.read_text(encoding="utf-8") for p in files)])


def test_check_lists_where_and_kind_never_the_value_and_exits_1(old_home, capsys):
    code, out, _ = cli(capsys, "store", "check", "--privacy", at=NIGHT)
    assert code == 1
    assert TOKEN not in out and PASSWORD not in out and "okonkwo" not in out
    for where in ("lessons:", "predictions:", "episodes:error:", "sleep_runs:", "MEMORY.md", "commons-", "reports"):
        assert where in out, where
    data = json.loads(cli(capsys, "store", "check", "--privacy", "--json", at=NIGHT)[1])
    assert {h["kind"] for h in data["hits"]} >= {"github_token", "password", "home"}
    assert "ip" not in {h["kind"] for h in data["hits"]}


def test_scrub_cleans_every_place_says_how_many_and_a_second_run_changes_nothing(old_home, capsys):
    assert TOKEN in _everything(old_home)
    result = cli_json(capsys, "store", "scrub", at=NIGHT)
    changed = result["changed"]
    assert changed["lessons"] >= 1 and changed["predictions"] >= 1 and changed["episodes"] == 1
    assert changed["sleep_runs"] == 1 and changed["reports"] >= 1 and changed["memory_files"] >= 2
    everything = _everything(old_home)
    assert TOKEN not in everything and PASSWORD not in everything and "/home/okonkwo" not in everything
    assert "<github-token>" in everything and "DB_PASSWORD=<password>" in everything
    assert cli(capsys, "store", "check", "--privacy", at=NIGHT)[0] == 0
    assert (old_home.data_dir / "memory" / "MEMORY.md").read_text(encoding="utf-8").startswith(PERSONS_LINE)
    assert cli_json(capsys, "store", "scrub", at=NIGHT)["total"] == 0


def test_the_first_sleep_after_an_upgrade_scrubs_the_home_once(old_home, capsys):
    night = cli_json(capsys, "sleep", at=NIGHT)
    assert night["privacy_scrubbed"]["total"] >= 5
    assert TOKEN not in _everything(old_home)
    assert "privacy_scrubbed" not in cli_json(capsys, "sleep", at="2026-11-06T03:00Z")
