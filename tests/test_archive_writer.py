"""The archive's writes in a thread of their own: made in order, waited for, failures kept, bounded."""

from __future__ import annotations

import threading

import pytest

from commons.ingest.archive import Archive, ArchiveError
from commons.ingest.archive_writer import ArchiveWriter


def test_appends_and_restarts_are_made_in_the_order_given(tmp_path):
    archive = Archive(tmp_path)
    writer = ArchiveWriter(archive)
    writer.append("t", b"first\n", 0, original_path="/x/t.jsonl")
    writer.append("t", b"second\n", 6)
    writer.restart("t")
    writer.append("t", b"new\n", 0)
    writer.drain()
    writer.close()
    assert archive.read("t", generation=0) == b"first\nsecond\n"
    assert archive.read("t") == b"new\n"
    assert archive.entries()[0].original_path == "/x/t.jsonl"


def test_a_disk_failure_is_raised_by_drain_as_the_archives_and_later_writes_are_not_made(tmp_path, monkeypatch):
    archive = Archive(tmp_path)
    calls = []

    def disk_full(key, data, offset, *, original_path=""):
        calls.append(data)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive, "append", disk_full)
    writer = ArchiveWriter(archive)
    writer.append("t", b"a\n", 0)
    writer.append("t", b"b\n", 2)  # would leave a gap after the failed one
    with pytest.raises(ArchiveError, match="cannot write to the archive in .*: .*No space left"):
        writer.drain()
    writer.close()
    assert calls == [b"a\n"]


def test_a_misuse_is_raised_as_it_was_made(tmp_path):
    writer = ArchiveWriter(Archive(tmp_path))
    writer.append("t", b"x\n", 10)  # past the end of what is archived
    with pytest.raises(ValueError, match="only 0 bytes are archived"):
        writer.drain()
    writer.close()


def test_a_caller_ahead_of_the_disk_by_more_than_the_budget_waits_for_room(tmp_path, monkeypatch):
    archive = Archive(tmp_path)
    disk = threading.Event()
    real = archive.append

    def slow(*args, **kwargs):
        disk.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(archive, "append", slow)
    writer = ArchiveWriter(archive, max_in_flight=10)
    writer.append("t", b"12345678", 0)  # 8 bytes in flight: within the budget, returns at once
    second = threading.Thread(target=writer.append, args=("t", b"abcdefgh", 8))
    second.start()
    second.join(0.3)
    assert second.is_alive()  # 16 bytes would be in flight: it waits for the first to be written
    disk.set()
    second.join(10)
    assert not second.is_alive()
    writer.drain()
    writer.close()
    assert archive.read("t") == b"12345678abcdefgh"
