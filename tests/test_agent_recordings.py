"""Sessions the real CLIs wrote (Claude Code 2.1.197, Codex 0.171.0, Gemini CLI 0.61.0, recorded
against the fake model by `tests/agents/record.py`) are read as their agent's, with the failed call,
what fixed it and the person's correction; no reader takes another agent's file; a file no agent
wrote is not read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from commons.core.learning import CorrectionEpisode, ErrorEpisode, SessionEpisode
from commons.ingest.archive import Archive
from commons.ingest.ingester import READERS, discover, ingest_paths, reader_for
from commons.ingest.readers import SNIFF_BYTES, agent_of_key
from commons.store import episodes as episode_store
from commons.store import transcripts as transcript_store
from commons.store.db import Store

AGENTS = Path(__file__).parent / "fixtures" / "agents"
READER_OF = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini"}
RECORDED = sorted(
    p for folder in AGENTS.iterdir() if folder.is_dir() and "-" in folder.name and folder.name[-1].isdigit()
    for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")
)  # fmt: skip
BUILT = sorted(p for agent in ("codex", "gemini") for p in (AGENTS / agent).rglob("*") if p.suffix in (".json", ".jsonl"))
# The sessions proper: Gemini's third run only restates the chat, and a checkpoint copies it.
SESSIONS = [p for p in RECORDED if not p.name.startswith("checkpoint-") and "session-2026-12-01T22-18" not in p.name]


def agent_of(path: Path) -> str:
    folder = path.relative_to(AGENTS).parts[0]
    return READER_OF[folder.rsplit("-", 1)[0]] if "-" in folder else READER_OF[folder]


def episodes_of(path: Path):
    reader = reader_for(path)
    assert reader is not None, f"{path.name} was not recognised"
    return reader.parse(path.read_bytes(), session_hint=path.stem, file_time=path.stat().st_mtime).episodes


def test_every_version_recorded_is_here():
    assert {p.relative_to(AGENTS).parts[0] for p in RECORDED} == {"claude-code-2.1.197", "codex-0.171.0", "gemini-0.61.0"}
    assert len(SESSIONS) == 4  # Claude Code, Codex in code mode and with direct tools, Gemini


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.relative_to(AGENTS).parts[0] + "/" + p.name[:24])
def test_a_recorded_session_is_read_as_its_agents_with_the_error_the_fix_and_the_correction(path):
    assert reader_for(path).name == agent_of(path)
    episodes = episodes_of(path)
    errors = [e for e in episodes if isinstance(e, ErrorEpisode)]
    corrections = [e for e in episodes if isinstance(e, CorrectionEpisode)]
    sessions = [e for e in episodes if isinstance(e, SessionEpisode)]
    assert [e.failure for e in errors] == ["error: config.ini not found: the checks read [checks] mode from it"]
    error = errors[0]
    assert (error.tool, error.target, error.exit_code) == ("Bash", "python3 check.py", 1)
    # The fix is the config.ini the error names, proven by the check run again and passing.
    assert error.resolution is not None and error.resolution.retry == "python3 check.py"
    assert error.resolution.evidence.value == "changed-before-retry" and error.resolution.command.endswith("config.ini")
    assert [c.said for c in corrections] == ["no, that is wrong: use uv instead of pip in this project"]
    assert "pip install" in corrections[0].preceding and corrections[0].command == "Bash python3 check.py"
    assert len(sessions) == 1 and sessions[0].project == "/home/ada/code/tidepool"
    assert sessions[0].asked == ("run the checks in this project", "no, that is wrong: use uv instead of pip in this project")


def test_a_gemini_checkpoint_is_read_as_the_conversation_it_saved():
    checkpoint = next(p for p in RECORDED if p.name.startswith("checkpoint-"))
    assert reader_for(checkpoint).name == "gemini"
    episodes = episodes_of(checkpoint)
    assert [e.failure for e in episodes if isinstance(e, ErrorEpisode)] == [
        "error: config.ini not found: the checks read [checks] mode from it"]
    assert [e.said for e in episodes if isinstance(e, CorrectionEpisode)] == [
        "no, that is wrong: use uv instead of pip in this project"]
    assert not discover([checkpoint.parent])[0].name.startswith("checkpoint-")  # the chat is read instead


def test_a_gemini_chat_that_only_restates_a_resumed_one_adds_no_session():
    restated = next(p for p in RECORDED if "session-2026-12-01T22-18" in p.name)
    assert reader_for(restated).name == "gemini"
    assert episodes_of(restated) == ()


@pytest.mark.parametrize("path", RECORDED + BUILT, ids=lambda p: "/".join(p.relative_to(AGENTS).parts[:1] + (p.name[:24],)))
def test_no_reader_accepts_another_agents_file(path):
    head = path.read_bytes()[:SNIFF_BYTES]
    accepting = {reader.name for reader in READERS if reader.recognises(path, head)}
    assert accepting == {agent_of(path)}


def test_a_claude_code_reader_refuses_a_gemini_jsonl_chat_even_in_claude_codes_folder(tmp_path):
    gemini_chat = next(p for p in SESSIONS if agent_of(p) == "gemini")
    moved = tmp_path / ".claude" / "projects" / "-home-ada-code-tidepool" / "1d043606.jsonl"
    moved.parent.mkdir(parents=True)
    shutil.copy(gemini_chat, moved)
    assert reader_for(moved).name == "gemini"


async def test_ingest_reads_every_recorded_session_as_its_agents(aio, tmp_path):
    for path in RECORDED:
        target = tmp_path / path.relative_to(AGENTS)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    found = discover([tmp_path])
    assert len(found) == len(RECORDED) - 1  # the checkpoint is not discovered
    async with await Store.open(tmp_path / "db.sqlite") as store:
        report = await ingest_paths(store, Archive(tmp_path / "archive"), found, now=1.0)
        rows = await transcript_store.known(store, [str(p) for p in found])
        counts = await episode_store.counts_by_kind(store)
    assert report.unknown == () and report.unreadable == ()
    assert sorted(agent_of_key(row.archive_key) for row in rows.values()) == sorted(agent_of(p) for p in RECORDED
                                                                                  if not p.name.startswith("checkpoint-"))
    assert (counts["error"], counts["correction"], counts["session"]) == (4, 4, 4)


async def test_ingest_of_a_file_no_agent_wrote_says_so_and_archives_nothing(aio, tmp_path):
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    stray = tmp_path / "notes.jsonl"
    stray.write_text('{"level": "info", "msg": "not a session"}\n')
    archive = Archive(tmp_path / "archive")
    async with await Store.open(tmp_path / "db.sqlite") as store:
        report = await ingest_paths(store, archive, [passwd, stray], now=1.0)
        assert await transcript_store.known(store, [str(passwd), str(stray)]) == {}
    assert report.unknown == (str(passwd), str(stray)) and report.transcripts == 0
    assert archive.entries() == []
