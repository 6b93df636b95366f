"""The transcripts table: which file was read how far, and which archive holds its copy.

``commons.ingest.ingester`` decides what to read; these are its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from commons.store.db import Store


@dataclass(frozen=True)
class KnownTranscript:
    path: str
    archive_key: str
    state: str  # the parser's saved position (``ParseState.to_json``)


@dataclass(frozen=True)
class TranscriptRead:
    """A transcript read up to ``size`` bytes, its parser's state there, and its archive key."""

    path: str
    archive_key: str
    size: int
    state: str
    read_at: float


async def known(store: Store, paths: Sequence[str]) -> dict[str, KnownTranscript]:
    """The stored row of each of ``paths`` that was read before, by path."""
    if not paths:
        return {}
    rows = await store.fetchall(
        f"SELECT path, archive_key, state FROM transcripts WHERE path IN ({','.join('?' * len(paths))})", list(paths))
    return {path: KnownTranscript(path, key, state) for path, key, state in rows}


async def holders(store: Store, archive_keys: Sequence[str]) -> dict[str, str]:
    """Which path already holds each of ``archive_keys`` (archive key → path), for those in use."""
    if not archive_keys:
        return {}
    rows = await store.fetchall(
        f"SELECT archive_key, path FROM transcripts WHERE archive_key IN ({','.join('?' * len(archive_keys))})",
        list(archive_keys))
    return dict(rows)


async def put_reads(store: Store, reads: Sequence[TranscriptRead]) -> None:
    await store.executemany(
        """INSERT INTO transcripts (path, archive_key, size, state, read_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (path) DO UPDATE SET archive_key = excluded.archive_key,
             size = excluded.size, state = excluded.state, read_at = excluded.read_at""",
        [(r.path, r.archive_key, r.size, r.state, r.read_at) for r in reads])


async def last_read_at(store: Store) -> float | None:
    """When any transcript was last read (by `commons ingest` or the daemon)."""
    return await store.scalar("SELECT max(read_at) FROM transcripts")
