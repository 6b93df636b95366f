"""Re-reading the raw-stream archive with the current reader: the episodes a better reader finds.

The archive (``commons.ingest.archive``) keeps every transcript byte-exact, so that a reader that
got better (a truer failure line, what fixed it) can re-derive what an older one stored. This
module reads each archived transcript again from its first byte, compares the episodes it yields
with the rows the store holds for that transcript, and, unless asked only to look, writes the
difference: new episodes added, changed ones replaced (same uid: a failed call is still that
tool call, a correction that message), episodes the reader no longer finds removed. Episodes of
transcripts the archive does not hold are left alone: nothing can re-derive them.

`commons rebuild` calls it first; ``commons.node.rebuild`` then re-derives the lessons.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

import trio

from commons.core.learning import Episode, EpisodeKind
from commons.ingest import claude_code
from commons.ingest.readers import Reader
from commons.ingest.archive import Archive, ArchiveError
from commons.ingest.ingester import READ_CHUNK
from commons.ingest.ingester import READERS as AGENT_READERS
from commons.store import episodes as episode_store
from commons.store import transcripts as transcript_store
from commons.store.db import Store

Progress = Callable[[int, int], None]  # (transcripts done, transcripts in all)

# The reader of each archive key prefix (``<prefix>/...``). A key with another prefix was written
# by a reader this commons does not have; its transcript is reported, never guessed at.
READERS: dict[str, Reader] = {reader.name: reader for reader in AGENT_READERS}


@dataclass(frozen=True)
class Reread:
    """One archived transcript read again: its episodes (each once, by kind and uid) and where the
    reading stopped (the parser's state at the archived size)."""

    key: str
    original_path: str
    episodes: tuple[Episode, ...]
    state: claude_code.ParseState
    skipped_lines: int


@dataclass(frozen=True)
class NotReread:
    key: str
    reason: str  # e.g. "no reader for 'codex' transcripts", or the archive's own complaint


def reread(archive: Archive, key: str, original_path: str, generations: int = 1) -> Reread:
    """Blocking: parse every generation of the archived transcript ``key``, oldest first.

    A transcript rewritten in place keeps its earlier generations in the archive; their episodes
    keep their uids, so a later generation's episode replaces the earlier one's. The bytes are
    handed to the parser in pieces of ``READ_CHUNK``, as ingest does, so the episodes are the ones
    ingest would make of the same bytes today."""
    reader = READERS.get(key.split("/", 1)[0])
    if reader is None:
        raise LookupError(f"no reader for {key.split('/', 1)[0]!r} transcripts")
    hint = PurePath(original_path or key).stem
    found: dict[str, Episode] = {}
    state, skipped = None, 0
    for generation in range(generations):
        data = archive.read(key, generation)
        state, pending = None, b""
        # A whole-document reader (Gemini) reads each version at once; a growing transcript is fed
        # in the pieces ingest reads it in.
        step = len(data) or 1 if reader.whole_document else READ_CHUNK
        for start in range(0, len(data), step):
            pending += data[start : start + step]
            result = reader.parse(pending, state, session_hint=hint)
            for episode in result.episodes:
                found[episode_store.episode_key(episode)] = episode
            skipped += result.skipped_lines
            state, pending = result.state, pending[result.consumed_bytes :]
    return Reread(key, original_path, tuple(found.values()),
                  state if state is not None else claude_code.ParseState(), skipped)


@dataclass(frozen=True)
class EpisodeChanges:
    """What reading the archive again changes in the episodes, by kind."""

    transcripts: int  # archived transcripts read again
    added: tuple[tuple[str, int], ...]
    changed: tuple[tuple[str, int], ...]
    removed: tuple[tuple[str, int], ...]
    unchanged: int
    not_reread: tuple[NotReread, ...]
    # The episodes sleep will see once the changes are written (live ones, in time order), and the
    # uids whose source was read again: a lesson made only of those can be re-derived.
    live_after: tuple[Episode, ...]
    rederived_uids: frozenset[str]
    rereads: tuple[Reread, ...]
    removed_keys: tuple[str, ...]

    def to_json(self) -> dict:
        return {"transcripts": self.transcripts, "added": dict(self.added), "changed": dict(self.changed),
                "removed": dict(self.removed), "unchanged": self.unchanged,
                "not_reread": [{"key": n.key, "reason": n.reason} for n in self.not_reread]}


async def plan(store: Store, archive: Archive, progress: Progress | None = None) -> EpisodeChanges:
    """Read the whole archive again and compare with the store; writes nothing."""
    entries = await trio.to_thread.run_sync(archive.entries)
    rereads: list[Reread] = []
    failed: list[NotReread] = []
    for done, entry in enumerate(entries, 1):
        try:
            rereads.append(await trio.to_thread.run_sync(reread, archive, entry.key, entry.original_path,
                                                         entry.generations))
        except (LookupError, ArchiveError) as error:
            failed.append(NotReread(entry.key, str(error).strip("'\"")))
        if progress is not None:
            progress(done, len(entries))
    stored = await episode_store.load_episodes(store, include_archived=True)
    return _compare(stored, rereads, failed)


def _compare(stored: Sequence[episode_store.StoredEpisode], rereads: Sequence[Reread],
             failed: Sequence[NotReread]) -> EpisodeChanges:
    fresh = {episode_store.episode_key(e): (r.key, e) for r in rereads for e in r.episodes}
    reread_keys = {r.key for r in rereads}
    held = {s.key: s for s in stored}
    added, changed, removed = Counter(), Counter(), Counter()
    unchanged = 0
    for key, (_, episode) in fresh.items():
        before = held.get(key)
        if before is None:
            added[episode.kind.value] += 1
        elif _as_json(before.episode) != _as_json(episode):
            changed[episode.kind.value] += 1
        else:
            unchanged += 1
    gone = [s for s in stored if s.transcript in reread_keys and s.key not in fresh]
    gone_keys = {s.key for s in gone}
    for s in gone:
        removed[s.episode.kind.value] += 1
    live = [fresh[s.key][1] if s.key in fresh else s.episode for s in stored
            if s.archived_at is None and s.key not in gone_keys]
    live += [e for key, (_, e) in fresh.items() if key not in held]
    kinds = [k.value for k in EpisodeKind]
    return EpisodeChanges(
        transcripts=len(rereads), added=tuple((k, added[k]) for k in kinds),
        changed=tuple((k, changed[k]) for k in kinds), removed=tuple((k, removed[k]) for k in kinds),
        unchanged=unchanged, not_reread=tuple(failed),
        live_after=tuple(sorted(live, key=lambda e: (e.at, episode_store.episode_key(e)))),
        # An episode decay archived is not handed to sleep: a lesson made of it cannot be re-derived.
        rederived_uids=frozenset({e.uid for key, (_, e) in fresh.items()
                                  if key not in held or held[key].archived_at is None}
                                 | {s.episode.uid for s in gone}),
        rereads=tuple(rereads), removed_keys=tuple(s.key for s in gone))


def _as_json(episode: Episode) -> str:
    return json.dumps(episode_store.episode_to_json(episode), sort_keys=True, ensure_ascii=False)


async def apply(store: Store, changes: EpisodeChanges, now: float) -> None:
    """Write the re-read episodes, remove the ones no longer found, and save each transcript's new
    parser state (so the next ingest continues from the new reader's state, not the old one's)."""
    by_path = {r.original_path: r for r in changes.rereads if r.original_path}
    known = await transcript_store.known(store, list(by_path))
    async with store.transaction():
        for r in changes.rereads:
            await episode_store.put_episodes(store, r.episodes, transcript=r.key, now=now)
        await episode_store.delete_episodes(store, changes.removed_keys)
        await transcript_store.put_reads(store, [
            transcript_store.TranscriptRead(path, r.key, r.state.offset, r.state.to_json(), now)
            for path, r in by_path.items()
            if (row := known.get(path)) is not None and row.archive_key == r.key and _at_same_place(row, r)])


def _at_same_place(row: transcript_store.KnownTranscript, r: Reread) -> bool:
    """Whether the stored read stopped where the archive ends (the usual case: ingest archives
    what it consumed). A state an older commons wrote may not load: then the new one stands in."""
    try:
        return claude_code.ParseState.from_json(row.state).offset == r.state.offset
    except claude_code.StateError:
        return True
