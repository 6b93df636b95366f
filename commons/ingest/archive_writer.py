"""The archive's writes in a thread of their own, so that parsing goes on while they are made.

Ingest parses a transcript's bytes and archives them. Archiving is hashing (BLAKE3), compressing
(zstd), writing and fsyncing, all of which release the GIL; parsing is Python, which holds it.
Handed to this writer, a transcript's appends run while the next transcript is parsed: on two
cores the two overlap, and on one the parse still goes on while the disk syncs. The ingester waits
for them (`drain`) before the store records that the bytes were read, so the archive holds every
byte before the store says it was read, as when appends were made in line (see `ingester`).

It has the two writing calls of `Archive` (`append`, `restart`), which it runs one at a time in
the order given: the archive has one writer per folder. At most `MAX_IN_FLIGHT` bytes wait to be
written; a caller that gets that far ahead of the disk waits for room, so memory stays bounded.
The first failure is kept and raised by `drain` (an `ArchiveError`: our data folder's fault, not
the transcript's); the writes after it are not made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from commons.ingest.archive import Archive, ArchiveError

MAX_IN_FLIGHT = 32 * 1024 * 1024  # bytes handed over and not yet archived


class ArchiveWriter:
    """Appends to `archive` made in a worker thread, in order. See the module docstring."""

    def __init__(self, archive: Archive, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.archive = archive
        self.folder = archive.folder
        self._max = max_in_flight
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="commons-archive")
        self._room = threading.Condition()
        self._in_flight = 0
        self._pending: list[Future[None]] = []
        self._failure: BaseException | None = None

    def append(self, transcript_key: str, data: bytes, offset: int, *, original_path: str = "") -> None:
        """`Archive.append`, made later: `data` must not change (bytes never do)."""
        size = len(data)
        with self._room:
            while self._in_flight and self._in_flight + size > self._max and self._failure is None:
                self._room.wait()
            self._in_flight += size
        self._submit(lambda: self.archive.append(transcript_key, data, offset, original_path=original_path), size)

    def restart(self, transcript_key: str, *, keep: bool = True) -> None:
        """`Archive.restart`, made in turn with the appends."""
        self._submit(lambda: self.archive.restart(transcript_key, keep=keep), 0)

    def drain(self) -> None:
        """Block until every write handed over is made; raise the first failure, if one failed."""
        with self._room:
            pending, self._pending = self._pending, []
        for future in pending:
            future.result()
        if self._failure is not None:
            raise self._failure

    def close(self) -> None:
        """Wait for the writes still queued (a later writer must not race them), then stop."""
        self._pool.shutdown(wait=True)

    def _submit(self, write: Callable[[], object], size: int) -> None:
        future = self._pool.submit(self._run, write, size)
        with self._room:
            self._pending.append(future)

    def _run(self, write: Callable[[], object], size: int) -> None:
        try:
            if self._failure is None:  # after a failure the archive may have a gap: write no more
                write()
        except OSError as error:
            self._fail(ArchiveError(f"cannot write to the archive in {self.archive.folder}: {error}"), error)
        except BaseException as error:  # noqa: BLE001 - kept for drain, which raises it in the caller
            self._fail(error, None)
        finally:
            with self._room:
                self._in_flight -= size
                self._room.notify_all()

    def _fail(self, error: BaseException, cause: BaseException | None) -> None:
        error.__cause__ = cause
        with self._room:
            if self._failure is None:
                self._failure = error
