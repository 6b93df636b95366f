"""Ingest orchestration: idempotent, incremental (only new bytes read), rewrites re-read, bytes archived."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from commons.core.learning.episode import SessionEpisode
from commons.ingest import ingester
from commons.ingest.archive import Archive, ArchiveError
from commons.ingest.claude_code import parse
from commons.ingest.ingester import archive_key, discover, ingest_paths
from commons.store import episodes as episode_store
from commons.store.db import Store

DEMO = Path(__file__).resolve().parents[1] / "commons" / "demo" / "sessions"
ADA_DAY_04 = DEMO / "ada" / "day-04-async-tests.jsonl"  # 2 errors, 1 correction


async def _stored_keys(store: Store) -> set[str]:
    return {s.key for s in await episode_store.load_episodes(store, include_archived=True)}


def _expected_keys(data: bytes) -> set[str]:
    return {episode_store.episode_key(e) for e in parse(data).episodes}


@pytest.fixture
async def node(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        yield store, Archive(tmp_path / "archive")


async def test_ingesting_twice_adds_nothing_and_reads_no_byte_again(node, tmp_path):
    store, archive = node
    paths = [shutil.copy(p, tmp_path / p.name) for p in sorted(DEMO.glob("ada/*.jsonl"))]
    first = await ingest_paths(store, archive, paths, now=1.0)
    second = await ingest_paths(store, archive, paths, now=2.0)
    assert first.episodes == {"session": 3, "error": 5, "correction": 2}
    assert first.bytes_read == sum(os.path.getsize(p) for p in paths)
    assert second.transcripts == 3
    assert second.episodes == {"session": 0, "error": 0, "correction": 0}
    assert second.bytes_read == 0


async def test_grown_transcript_yields_exactly_the_new_episodes_reading_only_new_bytes(node, tmp_path):
    store, archive = node
    data = ADA_DAY_04.read_bytes()
    cut = len(data) // 2  # mid-line: the partial line waits for the next read
    path = tmp_path / "session.jsonl"
    path.write_bytes(data[:cut])
    first = await ingest_paths(store, archive, [path], now=1.0)
    consumed = data[:cut].rfind(b"\n") + 1
    before = await _stored_keys(store)
    with open(path, "ab") as handle:
        handle.write(data[cut:])
    second = await ingest_paths(store, archive, [path], now=2.0)

    assert first.bytes_read == cut
    assert second.bytes_read == len(data) - consumed  # the unconsumed partial line, then the new bytes
    after = await _stored_keys(store)
    assert after == _expected_keys(data)
    new_surprises = {k for k in after - before if not k.startswith("session:")}
    assert second.episodes["error"] + second.episodes["correction"] == len(new_surprises) > 0
    assert first.episodes["session"] == 1 and second.episodes["session"] == 0
    (session,) = [s.episode for s in await episode_store.load_episodes(store) if isinstance(s.episode, SessionEpisode)]
    assert session == parse(data).session  # the session episode was rewritten as it grew
    assert archive.read(archive_key(path)) == data


async def test_transcript_rewritten_in_place_is_read_again_in_a_new_archive_generation(node, tmp_path):
    store, archive = node
    path = tmp_path / "session.jsonl"
    shutil.copy(ADA_DAY_04, path)
    await ingest_paths(store, archive, [path], now=1.0)
    other = (DEMO / "linus" / "day-08-lint-tooling.jsonl").read_bytes()
    path.write_bytes(other)  # same name, different first bytes
    report = await ingest_paths(store, archive, [path], now=2.0)
    assert report.rewritten == (str(path),)
    assert report.bytes_read == len(other)
    assert report.episodes == {"session": 1, "error": 3, "correction": 1}
    assert _expected_keys(other) <= await _stored_keys(store)
    (entry,) = archive.entries()
    assert entry.generations == 2 and archive.read(entry.key) == other
    assert archive.read(entry.key, generation=0) == ADA_DAY_04.read_bytes()


async def test_unreadable_file_is_reported_by_name_and_the_others_are_read(node, tmp_path):
    store, archive = node
    good = shutil.copy(ADA_DAY_04, tmp_path / "good.jsonl")
    gone = tmp_path / "gone.jsonl"
    gone.symlink_to(tmp_path / "deleted-by-the-agent.jsonl")
    report = await ingest_paths(store, archive, discover([tmp_path]), now=1.0)
    assert [u.path for u in report.unreadable] == [str(gone)]
    assert "No such file" in report.unreadable[0].reason
    assert report.transcripts == 1 and report.episodes["session"] == 1
    assert archive.read(archive_key(Path(good))) == ADA_DAY_04.read_bytes()


async def test_a_crash_between_archive_and_store_neither_loses_nor_doubles_bytes(node, tmp_path):
    store, archive = node
    path = tmp_path / "session.jsonl"
    shutil.copy(ADA_DAY_04, path)
    # The worker archived the transcript, then the process died before the store recorded it.
    ingester._read_transcript(path, archive_key(path), None, archive)
    report = await ingest_paths(store, archive, [path], now=1.0)
    assert report.episodes["error"] == 2
    assert archive.read(archive_key(path)) == ADA_DAY_04.read_bytes()


async def test_unreadable_saved_state_means_reading_again_from_scratch(node, tmp_path):
    store, archive = node
    path = shutil.copy(ADA_DAY_04, tmp_path / "s.jsonl")
    await ingest_paths(store, archive, [path], now=1.0)
    async with store.transaction():
        await store.execute("UPDATE transcripts SET state = 'not json'")
    report = await ingest_paths(store, archive, [path], now=2.0)
    assert report.rewritten == (str(path),) and report.bytes_read == ADA_DAY_04.stat().st_size
    assert report.episodes == {"session": 0, "error": 0, "correction": 0}


async def test_two_files_that_would_share_an_archive_key_get_their_own(node, tmp_path):
    store, archive = node
    a = tmp_path / "one" / "proj" / "s.jsonl"
    b = tmp_path / "two" / "proj" / "s.jsonl"
    for path, source in ((a, ADA_DAY_04), (b, DEMO / "grace" / "day-03-ci-install.jsonl")):
        path.parent.mkdir(parents=True)
        shutil.copy(source, path)
    await ingest_paths(store, archive, [a], now=1.0)
    await ingest_paths(store, archive, [b], now=2.0)
    entries = {e.original_path: e.key for e in archive.entries()}
    assert entries[str(a)] == "claude_code/proj/s.jsonl" and entries[str(b)] != entries[str(a)]
    assert archive.read(entries[str(b)]) == b.read_bytes()
    assert archive.read(entries[str(a)]) == a.read_bytes()


async def test_small_commit_batches_and_progress_cover_every_transcript(node, tmp_path, monkeypatch):
    store, archive = node
    monkeypatch.setattr(ingester, "BATCH_FILES", 2)
    monkeypatch.setattr(ingester, "BATCH_BYTES", 1)
    paths = discover([DEMO / node for node in ("ada", "grace", "linus")])  # not the peer-review extras
    seen: list[tuple[int, int]] = []
    report = await ingest_paths(store, archive, paths, now=1.0, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(n, 9) for n in range(1, 10)]
    assert report.episodes == {"session": 9, "error": 14, "correction": 6}


def test_discover_finds_nested_and_subagent_files_and_passes_over_missing_roots(tmp_path):
    session = tmp_path / "proj" / "abc.jsonl"
    agent = tmp_path / "proj" / "abc" / "subagents" / "agent-1.jsonl"
    for path in (session, agent):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"type":"user","sessionId":"abc","uuid":"u1","message":{"role":"user","content":"hi"}}\n')
    (tmp_path / "proj" / "notes.txt").write_text("x")
    found = discover([tmp_path, tmp_path / "missing", session])
    assert found == [agent, session]
    assert archive_key(session) == "claude_code/proj/abc.jsonl"
    assert archive_key(agent) == "claude_code/abc/subagents/agent-1.jsonl"


async def test_a_failing_archive_stops_the_run_instead_of_blaming_the_transcript(node, tmp_path, monkeypatch):
    store, archive = node
    path = shutil.copy(ADA_DAY_04, tmp_path / "s.jsonl")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive, "append", disk_full)
    with pytest.raises(ArchiveError, match="No space left"):
        await ingest_paths(store, archive, [path], now=1.0)
    assert await store.scalar("SELECT count(*) FROM transcripts") == 0


async def test_the_store_records_a_read_only_once_the_archive_holds_its_bytes(node, tmp_path, monkeypatch):
    import time

    from commons.store import transcripts as transcript_store

    store, archive = node
    paths = [shutil.copy(p, tmp_path / p.name) for p in sorted(DEMO.glob("ada/*.jsonl"))]
    real_append, real_put = archive.append, transcript_store.put_reads

    def slow_disk(*args, **kwargs):  # the writer thread lags behind the parse
        time.sleep(0.05)
        return real_append(*args, **kwargs)

    held_at_commit: list[tuple[int, int]] = []

    async def put_reads(store_, reads):
        held_at_commit.extend((archive.size(r.archive_key), r.size) for r in reads)
        await real_put(store_, reads)

    monkeypatch.setattr(archive, "append", slow_disk)
    monkeypatch.setattr(transcript_store, "put_reads", put_reads)
    await ingest_paths(store, archive, paths, now=1.0)
    assert len(held_at_commit) == len(paths)
    assert all(held == recorded for held, recorded in held_at_commit)
