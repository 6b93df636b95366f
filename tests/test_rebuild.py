"""`commons rebuild`: a home whose episodes an older reader wrote (no fix mined, no sub-command
attributed) learns, from its archived transcripts, the lessons that name the fix; the person's veto
holds under the new wording, and a published lesson is superseded by a signed record."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from commons.core.records import Lesson as LessonRecord
from commons.core.records import LessonKind
from commons.core.records import day_of, verify
from commons.clock import parse_time
from commons.daemon.lock import acquire_lock
from commons.identity import load
from commons.ingest.archive import Archive
from commons.runtime import run
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store.db import Store
from tests.transcripts import cli, cli_json

FIXTURES = Path(__file__).parent / "fixtures" / "lessons"
PAIRS = ("push-upstream-spotter-gqc", "push-upstream-totals-panel", "pip-uv-httpx", "pip-uv-orjson",
         "npm-ci-ci-setup", "npm-ci-docs")
INGESTED, NIGHT, LATER = "2026-11-09T08:00Z", "2026-11-09T09:00Z", "2026-11-10T09:00Z"


def write_rows_the_old_way(database: Path) -> None:
    """What the reader before resolution mining stored: error rows without `resolution` or
    `command` (the store reads a missing field as its default), and two failures of a progress
    line an older failure-line rule took for an error, which the current reader does not find."""
    with sqlite3.connect(database) as db:
        db.execute("UPDATE episodes SET data = json_remove(data, '$.resolution', '$.command') WHERE kind = 'error'")
        sessions = db.execute("SELECT transcript, session, at FROM episodes WHERE kind = 'session' ORDER BY at LIMIT 2")
        for n, (transcript, session, at) in enumerate(sessions.fetchall(), 1):
            data = {"session": session, "uid": f"toolu_old_reader_{n}", "at": at + n, "tool": "Bash",
                    "target": "mix test", "failure": "Getting extensions in current project...", "exit_code": 1}
            db.execute("INSERT INTO episodes (key, kind, uid, session, at, data, transcript, ingested_at) "
                       "VALUES (?, 'error', ?, ?, ?, ?, ?, ?)",
                       (f"error:{data['uid']}", data["uid"], session, at + n, json.dumps(data), transcript, at))


def active(capsys, at: str = LATER) -> list[dict]:
    return cli_json(capsys, "lessons", "--status", "active", at=at)


def one(found: list[dict], start: str) -> dict:
    (lesson,) = [d for d in found if d["text"].startswith(start)]
    return lesson


@pytest.fixture
def old_home(home, capsys, tmp_path):
    """A home built by the older reader: lessons that name no fix, the npm one vetoed, the push one
    shared by the person and published."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for name in PAIRS:
        shutil.copy(FIXTURES / f"{name}.jsonl", folder)
    assert cli(capsys, "init")[0] == 0
    assert cli(capsys, "ingest", str(folder), at=INGESTED)[0] == 0
    write_rows_the_old_way(home.database)
    assert cli(capsys, "sleep", at=NIGHT)[0] == 0
    echoes = active(capsys, NIGHT)
    assert len(echoes) == 4 and not any("succeeded after" in d["text"] for d in echoes)
    assert cli(capsys, "forget", one(echoes, "`npm ci`")["id"], at=NIGHT)[0] == 0
    assert cli(capsys, "lessons", "scope", one(echoes, "`git push`")["id"], "shared", "--yes", at=NIGHT)[0] == 0
    assert len(cli_json(capsys, "publish", "on", at=NIGHT)["published"]) == 1
    return home


def test_rebuild_rewords_old_echoes_to_name_the_fix_keeping_the_veto(old_home, capsys):
    before = {d["id"]: d for d in active(capsys)}
    code, out, err = cli(capsys, "rebuild", at=LATER)
    assert code == 0, err
    assert "reworded" in out
    found = active(capsys)
    push = one(found, "`git push`")
    assert push["text"] == ('`git push` failed with "fatal: The current branch <branch> has no upstream branch."; '
                            '`git push --set-upstream origin <branch>` succeeded after it (2 of 2 sessions).')
    assert one(found, "`pip install`")["text"].endswith("`uv add <package>` succeeded after it (2 of 2 sessions).")
    # The veto holds under the new wording: no npm lesson is active, rendered, or made again.
    assert not [d for d in found if d["text"].startswith("`npm ci`")]
    (vetoed,) = cli_json(capsys, "lessons", "--status", "vetoed", at=LATER)
    assert vetoed["text"].startswith("`npm ci`")
    memory = "\n".join(p.read_text() for p in (old_home.data_dir / "memory").glob("*.md"))
    assert "npm" not in memory and "--set-upstream" in memory
    # The progress-line "failures" the current reader does not find are gone, and so is their lesson.
    assert not [d for d in found if "Getting extensions" in d["text"]]
    # The same pitfalls keep their ids under their new words; the progress-line lesson is retired.
    assert {d["id"] for d in found} == {lid for lid, d in before.items() if "Getting extensions" not in d["text"]}
    assert cli_json(capsys, "sleep", at=LATER)["counts"]["lessons_learned"] == 0  # nothing made twice


def test_a_published_echo_is_superseded_by_a_signed_record_naming_the_fix(old_home, capsys):
    old = one(active(capsys), "`git push`")
    result = cli_json(capsys, "rebuild", "--json", at=LATER)
    (change,) = [c for c in result["lessons"]["changes"] if c["before"] and c["before"][0]["id"] == old["id"]]
    assert change["action"] == "reworded" and len(change["supersedes"]) == 1
    assert len(result["lessons"]["records_signed"]) == 1

    async def records() -> list:
        async with await Store.open(old_home.database) as store:
            return await record_store.all_records(store)

    held = {r.id.hex(): r for r in run(records)}
    new = [r for r in held.values() if isinstance(r.record, LessonRecord)
           and r.record.supersedes is not None and r.record.supersedes.hex() == change["supersedes"][0]]
    assert [r.id.hex() for r in new] == result["lessons"]["records_signed"]
    signed = new[0]
    assert "`git push --set-upstream origin <branch>` succeeded after it" in signed.record.text
    assert signed.record.author == load(old_home).author_public
    checked = verify(signed.body, signed.signature, network=signed.record.network,
                     today=day_of(parse_time(LATER)), claimed_id=signed.id)
    assert checked.id == signed.id
    # Publishing again signs no second record for it: the new record is what the lesson stands for.
    # (The pip lesson, shared now that it names `uv add`, is published: publishing is on.)
    again = cli_json(capsys, "publish", at=LATER)["published"]
    held = {r.id.hex(): r for r in run(records)}
    assert [held[rid].record.text.split(" ")[0] for rid in again] == ["`pip"]


def test_dry_run_shows_before_and_after_and_writes_nothing(old_home, capsys):
    before = active(capsys)
    code, out, err = cli(capsys, "rebuild", "--dry-run", at=LATER)
    assert code == 0, err
    assert "would change" in out and "nothing was written" in out
    assert '  before ' in out and "`git push --set-upstream origin <branch>` succeeded after it" in out
    planned = cli_json(capsys, "rebuild", "--dry-run", "--json", at=LATER)
    assert planned["dry_run"] is True
    assert planned["episodes"]["changed"]["error"] == 6 and planned["episodes"]["removed"]["error"] == 2
    assert planned["lessons"]["reworded"] == 2 and planned["lessons"]["suppressed"] == 1
    assert planned["lessons"]["retired"] == 1
    assert active(capsys) == before


def test_rebuilding_a_rebuilt_home_changes_nothing(old_home, capsys):
    assert cli(capsys, "rebuild", at=LATER)[0] == 0
    again = cli_json(capsys, "rebuild", "--json", at=LATER)
    assert again["episodes"]["changed"] == {"session": 0, "error": 0, "correction": 0}
    assert again["lessons"]["changes"] == [] and again["lessons"]["records_signed"] == []


def test_rebuild_without_an_archive_says_so(home, capsys):
    assert cli(capsys, "init")[0] == 0
    code, _, err = cli(capsys, "rebuild")
    assert code == 1 and "run `commons ingest` first" in err


def test_rebuild_refuses_while_a_daemon_holds_the_home(old_home, capsys):
    fd = acquire_lock(old_home)  # as a running daemon does
    try:
        code, _, err = cli(capsys, "rebuild", at=LATER)
        assert code == 1 and "stop it, run `commons rebuild`" in err
        assert cli(capsys, "rebuild", "--dry-run", at=LATER)[0] == 0  # looking writes nothing
    finally:
        os.close(fd)
    assert cli(capsys, "rebuild", at=LATER)[0] == 0


def test_a_lesson_whose_episodes_decay_archived_is_left_alone(old_home, capsys):
    with sqlite3.connect(old_home.database) as db:  # decay archived every episode the reader still finds
        db.execute("UPDATE episodes SET archived_at = 1 WHERE uid NOT LIKE 'toolu_old_reader_%'")
    planned = cli_json(capsys, "rebuild", "--dry-run", "--json", at=LATER)["lessons"]
    # Nothing can be re-derived from archived episodes: only the lesson of the episodes the reader
    # no longer finds at all is retired.
    assert [(c["action"], c["before"][0]["text"][:10]) for c in planned["changes"]] == [("retired", "`mix test`")]


def test_a_transcript_of_a_reader_this_commons_lacks_is_named_and_the_rest_rebuilt(old_home, capsys):
    Archive(old_home.archive_dir).append("aider/2026/11/chat-1.jsonl", b'{"type":"session_meta"}\n', 0)
    code, out, err = cli(capsys, "rebuild", "--json", at=LATER)
    result = json.loads(out)
    assert code == 0 and "not read again: aider/2026/11/chat-1.jsonl: no reader for 'aider' transcripts" in err
    assert result["episodes"]["not_reread"] == [{"key": "aider/2026/11/chat-1.jsonl",
                                                 "reason": "no reader for 'aider' transcripts"}]
    assert result["episodes"]["transcripts"] == 6 and result["lessons"]["reworded"] == 2


def test_rebuild_reads_codex_and_gemini_transcripts_again(home, capsys):
    agents = Path(__file__).parent / "fixtures" / "agents"
    assert cli(capsys, "init")[0] == 0
    assert cli(capsys, "ingest", str(agents / "codex"), str(agents / "gemini"), at=INGESTED)[0] == 0
    code, out, err = cli(capsys, "rebuild", "--dry-run", "--json", at=LATER)
    result = json.loads(out)
    assert code == 0, err
    assert result["episodes"]["not_reread"] == []
    keys = {entry for entry in Archive(home.archive_dir).entries()}
    assert result["episodes"]["transcripts"] == len(keys) >= 2
    # Read again with the same readers, the episodes are the ones ingest stored.
    changes = result["episodes"]
    assert not any(changes["added"].values()) and not any(changes["removed"].values()), changes
    assert changes["unchanged"] > 0


def test_a_veto_of_the_same_words_under_another_id_suppresses_the_rebuilt_lesson(home, capsys, tmp_path):
    """The veto matches by content key too: the person's no holds for the same words, whatever id
    (an older reader's, another home's) it was given under, and whatever episodes it was made of."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for name in PAIRS:
        shutil.copy(FIXTURES / f"{name}.jsonl", folder)
    assert cli(capsys, "init")[0] == 0
    assert cli(capsys, "ingest", str(folder), at=INGESTED)[0] == 0  # no night yet: no lesson of its own
    planned = cli_json(capsys, "rebuild", "--dry-run", "--json", at=LATER)["lessons"]
    (npm,) = [c["after"] for c in planned["changes"] if c["action"] == "new" and c["after"]["text"].startswith("`npm ci`")]
    with sqlite3.connect(home.database) as db:
        db.execute("INSERT INTO vetoes (lesson_id, content_key, text, reason, at) VALUES (?, ?, ?, ?, ?)",
                   ("an-older-id", ls.content_key(LessonKind.ERROR, npm["text"]), npm["text"], "forget", 0.0))
    again = cli_json(capsys, "rebuild", "--dry-run", "--json", at=LATER)["lessons"]
    assert [c["action"] for c in again["changes"] if c["after"]["id"] == npm["id"]] == ["suppressed"]
    assert again["new"] == planned["new"] - 1 and again["suppressed"] == planned["suppressed"] + 1
    assert cli(capsys, "rebuild", at=LATER)[0] == 0
    assert not [d for d in active(capsys) if d["text"].startswith("`npm ci`")]
