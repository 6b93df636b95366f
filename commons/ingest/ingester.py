"""Ingest: transcripts on disk → parsed episodes in the store, raw bytes in the archive.

The orchestration around the sans-I/O readers (one per agent: `claude_code`, `codex`, `gemini`;
`reader_for` picks one by the file, `commons.ingest.readers` says what a reader is) and the archive. Used by
`commons ingest` and, later, by the daemon's watcher, which calls `ingest_paths` every few seconds
on the transcripts that changed. For each transcript:

1. The store's ``transcripts`` row says where the last read stopped (the parser's state, whose
   ``offset`` is the bytes consumed) and under which archive key its bytes are kept.
2. A worker thread opens the file, checks the head fingerprint (`is_rewritten`: it shrank, or its
   first bytes changed; for a whole-document reader, any change), and reads only the bytes past the offset, so re-reading a growing session
   costs its new bytes, not its length. An append-only transcript whose byte before the offset is
   no longer a newline (`torn`: replaced, or put back to an earlier copy that grew again, with
   the same head) is rewritten too. A rewritten transcript starts a new archive generation, is
   read from scratch, and is logged with why; its episodes keep their uids, so nothing is counted twice.
3. The bytes the parser consumed (complete lines) are appended to the archive *before* the store
   records the new offset: a crash in between re-reads bytes the archive already holds, which
   `Archive.append` skips, so nothing is lost or duplicated. The appends are made by an
   `ArchiveWriter` in a thread of their own while the next transcript is parsed, and waited for
   before each commit.
4. Episodes and the new state go to the store in one transaction per batch of transcripts.

A file read for the first time is first recognised from its opening bytes (`reader_for`): each
reader knows its own agent's records, so no reader takes another agent's file, and a file none
recognises (``/etc/passwd``, a half-written file) is reported as not a transcript and neither read
nor archived (a watcher tries it again at the next poll). A file that cannot be read (vanished, no
permission) is reported by name and the others go on.
Malformed lines are the parser's to skip and count. The archive's own failures (`ArchiveError`:
our data folder, not the transcript) stop the run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import trio
from blake3 import blake3

from commons.core.learning import Episode, EpisodeKind, SessionEpisode
from commons.ingest.archive import Archive, ArchiveError
from commons.ingest.archive_writer import ArchiveWriter
from commons.ingest import claude_code, codex, gemini
from commons.ingest.episodes import BuildState
from commons.ingest.readers import SNIFF_BYTES, ParseState, Reader, StateError, agent_of_key, expand_root, torn
from commons.store import episodes as episode_store
from commons.store import transcripts as transcript_store
from commons.store.db import Store

log = logging.getLogger("commons.ingest")

READ_CHUNK = 8 * 1024 * 1024  # bytes handed to the parser at a time: bounds memory on huge files
BATCH_FILES = 64  # transcripts looked up, and at most committed, together
BATCH_BYTES = 32 * 1024 * 1024  # commit once this many bytes were read, even mid-batch
# Every agent's reader. Each recognises only its own agent's files, so the order does not matter.
READERS: tuple[Reader, ...] = (claude_code.READER, codex.READER, gemini.CHAT_LOG, gemini.DOCUMENT)

Progress = Callable[[int, int], None]  # (transcripts done, transcripts in all)


@dataclass(frozen=True)
class Unreadable:
    path: str
    reason: str  # the operating system's words, e.g. "Permission denied"


@dataclass(frozen=True)
class IngestReport:
    transcripts: int  # transcripts read (whether or not they had new bytes)
    skipped_lines: int  # malformed lines met in this run
    new_episodes: tuple[tuple[str, int], ...]  # (kind, episodes new to the store), every kind
    bytes_read: int  # transcript bytes read past the stored offsets (head checks not counted)
    rewritten: tuple[str, ...] = ()  # transcripts rewritten in place, read again from scratch
    unreadable: tuple[Unreadable, ...] = ()
    unknown: tuple[str, ...] = ()  # files no reader recognises: not read, not archived

    @property
    def episodes(self) -> dict[str, int]:
        return dict(self.new_episodes)

    def to_json(self) -> dict:
        return {
            "transcripts": self.transcripts,
            "skipped_lines": self.skipped_lines,
            "episodes": self.episodes,
            "bytes_read": self.bytes_read,
            "rewritten": list(self.rewritten),
            "unreadable": [{"path": u.path, "reason": u.reason} for u in self.unreadable],
            "not_transcripts": list(self.unknown),
        }


def reader_for(path: Path, head: bytes | None = None) -> Reader | None:
    """The reader whose agent wrote the file, from its first bytes (read when `head` is None): None
    when no reader recognises it. Raises OSError when the file cannot be read."""
    if head is None:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    found = [reader for reader in READERS if reader.recognises(path, head)]
    return found[0] if len(found) == 1 else None


def reader_named(agent: str, path: Path) -> Reader | None:
    """The reader of a transcript read before, by the agent its archive key names (no bytes read)."""
    for reader in READERS:
        if reader.name == agent and reader.suffix == path.suffix:
            return reader
    return None


def default_roots(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every agent's default session folders on this machine, as configured roots spell them."""
    environ = os.environ if environ is None else environ
    return list(dict.fromkeys(root for reader in READERS for root in reader.default_roots(environ)))


def discover(roots: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every file under the roots that may be an agent's transcript by its name and folder (Claude
    Code's ``*.jsonl`` with subagent files, Codex's ``rollout-*.jsonl``, Gemini's
    ``chats/session-*.jsonl`` and ``.json``), and each root that is a file; which agent's it is, if
    any, is told from its bytes when it is read. Roots
    that do not exist are passed over (``~/.codex/sessions`` on a machine without Codex); ``~`` and
    ``$CODEX_HOME`` are expanded (`expand_root`). Paths come back absolute, each once, in a stable
    order."""
    found: dict[Path, None] = {}
    for root in roots:
        base = expand_root(root)
        if base.is_file():
            found[_absolute(base)] = None
        elif base.is_dir():
            for path in sorted([*base.rglob("*.jsonl"), *base.rglob("*.json")]):
                if not any(reader.may_hold(path) for reader in READERS):
                    continue
                # A dangling link is kept, to be reported unreadable; a fifo would block a read.
                if path.is_file() or (path.is_symlink() and not path.exists()):
                    found[_absolute(path)] = None
    return list(found)


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))  # "a/../b" and "b" are one transcript; symlinks are kept


def archive_key(path: Path, reader: Reader | None = None) -> str:
    """The archive key of a transcript: stable across reads, readable, unique in practice, and
    prefixed by the agent it came from (``claude_code/``, ``codex/``, ``gemini/``). Raises
    `NotATranscript` for a file no reader recognises."""
    reader = reader or reader_for(path)
    if reader is None:
        raise NotATranscript(f"{path} is not a transcript of Claude Code, Codex or Gemini CLI")
    return reader.archive_key(path)


class NotATranscript(ValueError):
    """The file was named as a transcript, and no reader recognises it (the caller's mistake)."""


async def ingest_paths(
    store: Store,
    archive: Archive,
    paths: Sequence[str | os.PathLike[str]],
    now: float,
    progress: Progress | None = None,
) -> IngestReport:
    """Read each transcript's new bytes into episodes (store) and raw bytes (archive)."""
    unique = list(dict.fromkeys(_absolute(Path(p).expanduser()) for p in paths))
    tally = _Tally()
    done = 0
    writer = ArchiveWriter(archive)
    try:
        for start in range(0, len(unique), BATCH_FILES):
            batch = unique[start : start + BATCH_FILES]
            known, readers, taken = await _look_up(store, batch)
            reads: list[_Read] = []
            pending_bytes = 0
            for path in batch:
                prior = known.get(str(path))
                reader = readers.get(path)
                if isinstance(reader, _Read):  # not a transcript, or not readable
                    read = reader
                else:
                    key = prior[0] if prior else _free_key(path, reader, taken)
                    taken[key] = str(path)
                    read = await trio.to_thread.run_sync(_read_transcript, path, key, prior, writer, reader)
                reads.append(read)
                pending_bytes += read.bytes_read
                done += 1
                if progress is not None:
                    progress(done, len(unique))
                if pending_bytes >= BATCH_BYTES:
                    await _commit(store, writer, reads, now, tally)
                    reads, pending_bytes = [], 0
            await _commit(store, writer, reads, now, tally)
    finally:
        with trio.CancelScope(shield=True):  # a later run must not race the writes still queued
            await trio.to_thread.run_sync(writer.close)
    return tally.report()


# -- one transcript, in a worker thread -------------------------------------------------------


@dataclass
class _Read:
    path: str
    key: str
    state: ParseState | None = None  # None: nothing to record (unreadable, or nothing new)
    surprises: list[Episode] = field(default_factory=list)
    session: SessionEpisode | None = None
    skipped: int = 0
    bytes_read: int = 0
    rewritten: bool = False
    error: str | None = None
    unknown: bool = False  # no reader recognises the file


def _read_transcript(
    path: Path, key: str, prior: tuple[str, str] | None, archive: Archive | ArchiveWriter, reader: Reader | None = None,
) -> _Read:
    """Blocking: read the bytes of `path` past its stored offset, parse them, archive them (at once
    with an `Archive`, or handed to an `ArchiveWriter`). `reader`: the file's (default: the one
    that recognises it)."""
    out = _Read(str(path), key)
    state = _saved_state(prior)
    try:
        reader = reader or reader_for(path)
        if reader is None:
            return _Read(str(path), key, unknown=True)
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            size = stat.st_size
            why = _why_read_again(handle, size, state, reader) if prior is not None else None
            again = prior is not None and (state is None or why is not None)
            if why is not None and not reader.whole_document:
                log.warning("%s was rewritten in place (%s): reading it again from its start; its episodes "
                            "keep their ids, so none is stored twice", path, why)
            if again:  # rewritten in place (or a state we cannot read): from scratch
                # A whole document is rewritten on every change, which is no news to report; its
                # archive keeps the latest version only (each held the one before, and keeping
                # every version would grow as the square of the session).
                out.rewritten, state = not reader.whole_document, None
                with _archive_writes(archive):
                    archive.restart(key, keep=not reader.whole_document)
            offset = state.offset if state is not None else 0
            if prior is not None and not again and size == offset:
                return out  # nothing new: the common case for a watcher
            handle.seek(offset)
            pending = b""
            while chunk := handle.read(READ_CHUNK):
                out.bytes_read += len(chunk)
                pending = pending + chunk if pending else chunk
                result = reader.parse(pending, state, session_hint=path.stem, file_time=stat.st_mtime)
                if result.consumed_bytes:
                    with _archive_writes(archive):
                        archive.append(
                            key, pending[: result.consumed_bytes], result.state.offset - result.consumed_bytes,
                            original_path=str(path),
                        )  # fmt: skip
                out.surprises += [e for e in result.episodes if not isinstance(e, SessionEpisode)]
                out.session = result.session or out.session
                out.skipped += result.skipped_lines
                state, pending = result.state, pending[result.consumed_bytes :]
    except OSError as error:
        return _Read(str(path), key, error=error.strerror or str(error))
    out.state = state if state is not None else ParseState(build=BuildState(hint=path.stem))
    return out


def _why_read_again(handle: BinaryIO, size: int, state: ParseState | None, reader: Reader) -> str | None:
    """Why a transcript read before must be read from its start (None when it only grew, or when
    there is no `state` to compare with). Reads its first bytes, and for an append-only transcript
    the byte where the last read stopped."""
    if state is None:
        return None
    if size < state.offset:
        return f"it shrank from {state.offset} to {size} bytes"
    if reader.is_rewritten(state, size, handle.read(state.head_len)):
        return "its first bytes changed"
    if not reader.whole_document and state.offset > 0:
        handle.seek(state.offset - 1)
        if torn(state, handle.read(1)):
            return f"byte {state.offset}, where the last read stopped, no longer begins a line"
    return None


@contextmanager
def _archive_writes(archive: Archive | ArchiveWriter) -> Iterator[None]:
    """An archive write's OSError (disk full, no permission on the data folder) is ours, not the
    transcript's: it stops the run rather than being reported as an unreadable transcript."""
    try:
        yield
    except OSError as error:
        raise ArchiveError(f"cannot write to the archive in {archive.folder}: {error}") from error


def _saved_state(prior: tuple[str, str] | None) -> ParseState | None:
    if prior is None:
        return None
    try:
        return ParseState.from_json(prior[1])
    except StateError:  # saved by an older commons, or damaged: reading again from scratch is safe
        return None


# -- the store ----------------------------------------------------------------------------------


async def _look_up(
    store: Store, batch: list[Path]
) -> tuple[dict[str, tuple[str, str]], dict[Path, Reader | _Read], dict[str, str]]:
    """The stored (archive key, state) of each known path; the reader of every path (by its key's
    agent when known, else recognised from its first bytes), or the `_Read` that says why it is
    not read; and which of the keys the new paths would take are already in use by another path."""
    rows = await transcript_store.known(store, [str(p) for p in batch])
    known = {path: (row.archive_key, row.state) for path, row in rows.items()}
    readers: dict[Path, Reader | _Read] = {}
    for path in batch:
        if str(path) in known:
            reader = reader_named(agent_of_key(known[str(path)][0]), path)
            if reader is not None:
                readers[path] = reader
    new = [p for p in batch if p not in readers]
    readers.update(await trio.to_thread.run_sync(_recognise_all, new))
    wanted = list({r.archive_key(p) for p, r in readers.items() if str(p) not in known and not isinstance(r, _Read)})
    taken = await transcript_store.holders(store, wanted)
    return known, readers, taken


def _recognise_all(paths: list[Path]) -> dict[Path, Reader | _Read]:
    """Blocking: each file's reader, from its first bytes; a `_Read` for one that is no transcript
    (``unknown``) or cannot be opened (``error``)."""
    out: dict[Path, Reader | _Read] = {}
    for path in paths:
        try:
            with open(path, "rb") as handle:
                head = handle.read(SNIFF_BYTES)
        except OSError as error:
            out[path] = _Read(str(path), "", error=error.strerror or str(error))
            continue
        reader = reader_for(path, head) if head.strip() else None
        # An empty file (an agent just made it) is nothing yet: passed over, and tried again later.
        out[path] = reader if reader is not None else _Read(str(path), "", unknown=bool(head.strip()))
    return out


def _free_key(path: Path, reader: Reader, taken: dict[str, str]) -> str:
    """`archive_key(path)`, or, when another file already holds it (two copies of one project
    folder), that key with a hash of the full path: two files never share an archive."""
    key = reader.archive_key(path)
    if taken.get(key, str(path)) == str(path):
        return key
    return f"{key}#{blake3(str(path).encode()).hexdigest()[:12]}"


async def _commit(store: Store, writer: ArchiveWriter, reads: list[_Read], now: float, tally: _Tally) -> None:
    await trio.to_thread.run_sync(writer.drain)  # the archive holds the bytes before the store says so
    changed = [r for r in reads if r.state is not None]
    if changed:
        async with store.transaction():
            for read in changed:
                for kind, episodes in _by_kind(read).items():
                    tally.new[kind] += await episode_store.put_episodes(
                        store, episodes, transcript=read.key, now=now
                    )
            await transcript_store.put_reads(store, [
                transcript_store.TranscriptRead(r.path, r.key, r.state.offset, r.state.to_json(), now)
                for r in changed if r.state
            ])
    for read in reads:
        tally.add(read)


def _by_kind(read: _Read) -> dict[str, list[Episode]]:
    groups: dict[str, list[Episode]] = {}
    for episode in [*read.surprises, *([read.session] if read.session else [])]:
        groups.setdefault(episode.kind.value, []).append(episode)
    return groups


class _Tally:
    def __init__(self) -> None:
        self.new = {kind.value: 0 for kind in EpisodeKind}
        self.transcripts = self.skipped = self.bytes_read = 0
        self.rewritten: list[str] = []
        self.unreadable: list[Unreadable] = []
        self.unknown: list[str] = []

    def add(self, read: _Read) -> None:
        if read.error is not None:
            self.unreadable.append(Unreadable(read.path, read.error))
            return
        if read.unknown:
            self.unknown.append(read.path)
            return
        self.transcripts += 1
        self.skipped += read.skipped
        self.bytes_read += read.bytes_read
        if read.rewritten:
            self.rewritten.append(read.path)

    def report(self) -> IngestReport:
        return IngestReport(
            transcripts=self.transcripts, skipped_lines=self.skipped, new_episodes=tuple(self.new.items()),
            bytes_read=self.bytes_read, rewritten=tuple(self.rewritten), unreadable=tuple(self.unreadable),
            unknown=tuple(self.unknown),
        )  # fmt: skip
