"""The raw-stream archive: byte-exact, content-addressed, only new bytes stored, corruption named."""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commons.ingest.archive import (
    CHUNK_MAX,
    MERGE_BELOW,
    Archive,
    ArchiveCorruptError,
    ArchiveGapError,
    decompress_chunk,
)
from blake3 import blake3

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
if not SHARED.is_dir() and os.environ.get("COMMONS_SHARED_DIR"):
    SHARED = Path(os.environ["COMMONS_SHARED_DIR"]) / "transcripts"
DEMO = Path(__file__).resolve().parents[1] / "commons" / "demo" / "sessions"


def _transcripts() -> list[Path]:
    found = sorted(DEMO.glob("*/day-*.jsonl"))
    if SHARED.is_dir():
        found += sorted(SHARED.glob("*.jsonl"))
    return found


def _chunk_files(folder: Path) -> set[Path]:
    return set((folder / "chunks").glob("*/*.zst"))


def test_every_transcript_round_trips_byte_exact(tmp_path):
    archive = Archive(tmp_path)
    paths = _transcripts()
    for path in paths:
        archive.append(str(path.name), path.read_bytes(), 0, original_path=str(path))
    for path in paths:
        assert archive.read(path.name) == path.read_bytes()
    entries = {e.key: e for e in archive.entries()}
    assert set(entries) == {p.name for p in paths}
    big = entries["marot__spotter__agent-a2898e3.jsonl"] if SHARED.is_dir() else entries[paths[0].name]
    assert big.stored_size < big.size / 3  # transcripts compress well
    assert big.original_path.endswith(big.key)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_growing_transcript_appended_in_pieces_reads_back_exactly(tmp_path_factory, data):
    raw = b"".join(p.read_bytes() for p in _transcripts()[:4])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=10)))
    archive = Archive(tmp_path_factory.mktemp("archive"))
    for start, end in zip([0, *cuts], [*cuts, len(raw)]):
        assert archive.append("t", raw[start:end], start) == end
    assert archive.read("t") == raw
    assert archive.size("t") == len(raw)


def test_growth_stores_only_the_new_bytes(tmp_path):
    archive = Archive(tmp_path)
    first = os.urandom(MERGE_BELOW) + b"x" * (2 * MERGE_BELOW)  # larger than MERGE_BELOW: never rewritten
    archive.append("t", first, 0)
    before = _chunk_files(tmp_path)
    archive.append("t", b"second line\n", len(first))
    after = _chunk_files(tmp_path)
    assert before < after and len(after - before) == 1
    (entry,) = archive.entries()
    assert [c.size for c in entry.chunks] == [len(first), len(b"second line\n")]


def test_small_tail_chunks_merge_and_gc_removes_what_they_replaced(tmp_path):
    archive = Archive(tmp_path)
    offset = 0
    for i in range(50):
        line = f'{{"line": {i}}}\n'.encode()
        archive.append("t", line, offset)
        offset += len(line)
    (entry,) = archive.entries()
    assert len(entry.chunks) == 1 and entry.size == offset
    assert archive.gc() == 49
    assert archive.read("t") == b"".join(f'{{"line": {i}}}\n'.encode() for i in range(50))


def test_large_append_is_split_into_bounded_chunks(tmp_path):
    archive = Archive(tmp_path)
    data = os.urandom(1024) * (CHUNK_MAX // 1024 * 2 + 3)
    archive.append("t", data, 0)
    (entry,) = archive.entries()
    assert all(c.size <= CHUNK_MAX for c in entry.chunks) and len(entry.chunks) == 3
    assert archive.read("t") == data


def test_reappending_archived_bytes_is_harmless_and_overlap_keeps_only_the_tail(tmp_path):
    archive = Archive(tmp_path)
    archive.append("t", b"abc\n", 0)
    assert archive.append("t", b"abc\n", 0) == 4  # a retry after a crash
    assert archive.append("t", b"c\ndef\n", 2) == 8
    assert archive.read("t") == b"abc\ndef\n"


def test_appending_past_the_end_is_a_misuse(tmp_path):
    archive = Archive(tmp_path)
    archive.append("t", b"abc\n", 0)
    with pytest.raises(ArchiveGapError, match="only 4 bytes are archived"):
        archive.append("t", b"xyz\n", 10)


def test_identical_content_is_stored_once(tmp_path):
    archive = Archive(tmp_path)
    body = b'{"same": true}\n' * 1000
    archive.append("a", body, 0)
    archive.append("b", body, 0)
    assert len(_chunk_files(tmp_path)) == 1
    assert archive.read("a") == archive.read("b") == body


def test_corrupt_chunk_is_an_error_that_names_it(tmp_path):
    archive = Archive(tmp_path)
    archive.append("t", b"hello\n" * 100, 0)
    (chunk,) = _chunk_files(tmp_path)
    other = Archive(tmp_path / "other")
    other.append("t", b"tampered\n" * 100, 0)
    (forged,) = _chunk_files(tmp_path / "other")
    chunk.write_bytes(forged.read_bytes())  # valid zstd, wrong content
    name = chunk.name.removesuffix(".zst")
    with pytest.raises(ArchiveCorruptError, match=name):
        archive.read("t")
    chunk.write_bytes(b"\x00garbage")
    with pytest.raises(ArchiveCorruptError, match=name):
        archive.read("t")
    chunk.unlink()
    with pytest.raises(ArchiveCorruptError, match="missing"):
        archive.read("t")


def test_corrupt_manifest_is_reported_not_crashed_on(tmp_path):
    archive = Archive(tmp_path)
    archive.append("t", b"x\n", 0)
    (manifest,) = (tmp_path / "manifests").glob("*.json")
    manifest.write_text("{broken")
    with pytest.raises(ArchiveCorruptError, match="unreadable"):
        archive.read("t")


def test_restart_begins_a_new_generation_and_keeps_the_old_one(tmp_path):
    archive = Archive(tmp_path)
    archive.append("t", b"old line\n", 0)
    archive.restart("t")
    archive.append("t", b"new\n", 0)
    assert archive.read("t") == b"new\n"
    assert archive.read("t", generation=0) == b"old line\n"
    (entry,) = archive.entries()
    assert (entry.size, entry.generations) == (4, 2)


def test_no_temporary_files_are_left_behind(tmp_path):
    archive = Archive(tmp_path)
    archive.append("t", b"line\n" * 10, 0)
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_unknown_key_reads_as_missing(tmp_path):
    archive = Archive(tmp_path)
    assert archive.size("nope") == 0 and archive.entries() == []
    with pytest.raises(KeyError):
        archive.read("nope")


def _old_archive(folder: Path, key: str, pieces: list[bytes]) -> None:
    """An archive as commons wrote it before zstd: xz chunks (preset 0, no check), manifest v1."""
    chunks = []
    for raw in pieces:
        digest = blake3(raw).hexdigest()
        packed = lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE, preset=0)
        (folder / "chunks" / digest[:2]).mkdir(parents=True, exist_ok=True)
        (folder / "chunks" / digest[:2] / f"{digest}.xz").write_bytes(packed)
        chunks.append([digest, len(raw), len(packed)])
    (folder / "manifests").mkdir(parents=True, exist_ok=True)
    name = blake3(key.encode()).hexdigest()[:40]
    manifest = {"v": 1, "key": key, "original_path": "", "generations": [chunks]}
    (folder / "manifests" / f"{name}.json").write_text(json.dumps(manifest))


def test_an_archive_written_with_xz_reads_and_grows_with_zstd_chunks(tmp_path):
    big = b'{"type":"user"}\n' * (MERGE_BELOW // 8)  # past MERGE_BELOW: kept as it is
    _old_archive(tmp_path, "t", [big])
    archive = Archive(tmp_path)
    assert archive.read("t") == big
    archive.append("t", b"new line\n", len(big))
    assert archive.read("t") == big + b"new line\n"
    (new,) = _chunk_files(tmp_path)
    assert new.read_bytes().startswith(b"\x28\xb5\x2f\xfd")  # the new bytes went to a zstd frame
    assert len(list((tmp_path / "chunks").glob("*/*.xz"))) == 1


def test_a_small_xz_tail_is_merged_into_zstd_and_gc_removes_the_old_file(tmp_path):
    _old_archive(tmp_path, "t", [b"old tail\n"])
    archive = Archive(tmp_path)
    archive.append("t", b"more\n", 9)
    assert archive.read("t") == b"old tail\nmore\n"
    assert archive.gc() == 1
    assert not list((tmp_path / "chunks").glob("*/*.xz")) and len(_chunk_files(tmp_path)) == 1


def test_bytes_already_stored_as_xz_are_not_stored_again(tmp_path):
    body = b'{"same": true}\n' * 1000
    _old_archive(tmp_path, "a", [body])
    archive = Archive(tmp_path)
    archive.append("b", body, 0)
    assert not _chunk_files(tmp_path)  # "b" names the xz chunk "a" already holds
    assert archive.read("b") == body


def test_the_decoder_is_chosen_by_the_chunks_magic_bytes_not_its_name():
    raw = b"line\n" * 100
    xz = lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE, preset=0)
    assert decompress_chunk(xz) == raw
    with pytest.raises(ValueError, match="not a chunk"):
        decompress_chunk(b"PK\x03\x04 a zip")
    with pytest.raises(ValueError):
        decompress_chunk(xz[:20])  # truncated
