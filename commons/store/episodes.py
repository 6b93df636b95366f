"""Episodes and the transcripts they came from, in the database.

An episode row holds the episode's fields as JSON (the dataclasses of ``commons.core.learning.episode``),
keyed by kind and uid so that reading a transcript again replaces, never duplicates. A session
episode is rewritten as its transcript grows; error and correction episodes never change.

The ``transcripts`` table remembers, per transcript file, where the last read stopped and the
parser's resumable state, so a growing session is read from where it left off.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from commons.core.learning import (
    CorrectionEpisode,
    Episode,
    EpisodeKind,
    ErrorEpisode,
    SessionEpisode,
    ToolCall,
)
from commons.core.learning import Resolution
from commons.store.db import Store

COMPONENT = "episodes"
MIGRATIONS = (
    (
        """CREATE TABLE episodes (
            key TEXT PRIMARY KEY,            -- kind:uid
            kind TEXT NOT NULL,
            uid TEXT NOT NULL,
            session TEXT NOT NULL,
            at REAL NOT NULL,                -- when it happened
            data TEXT NOT NULL,              -- the episode's fields, JSON
            transcript TEXT NOT NULL,        -- the archive key of its source
            ingested_at REAL NOT NULL,
            archived_at REAL                 -- set when decay archived it
        )""",
        "CREATE INDEX episodes_by_time ON episodes (at)",
        "CREATE INDEX episodes_by_kind ON episodes (kind, at)",
        """CREATE TABLE transcripts (
            path TEXT PRIMARY KEY,
            archive_key TEXT NOT NULL,
            size INTEGER NOT NULL,           -- bytes consumed so far
            state TEXT NOT NULL,             -- the parser's resumable state, JSON
            read_at REAL NOT NULL
        )""",
    ),
)

_CLASSES: dict[EpisodeKind, type] = {
    EpisodeKind.SESSION: SessionEpisode,
    EpisodeKind.ERROR: ErrorEpisode,
    EpisodeKind.CORRECTION: CorrectionEpisode,
}


def episode_to_json(episode: Episode) -> dict[str, Any]:
    data = {f.name: getattr(episode, f.name) for f in dataclasses.fields(episode) if f.init}
    if isinstance(episode, SessionEpisode):
        data["calls"] = [[c.tool, c.target] for c in episode.calls]
        data["tool_counts"] = [list(pair) for pair in episode.tool_counts]
        data["asked"] = list(episode.asked)
    if isinstance(episode, ErrorEpisode):
        data["resolution"] = episode.resolution.to_json() if episode.resolution is not None else None
    return data


def episode_from_json(kind: EpisodeKind, data: dict[str, Any]) -> Episode:
    if kind is EpisodeKind.SESSION:
        data = dict(
            data,
            calls=tuple(ToolCall(tool, target) for tool, target in data.get("calls", ())),
            tool_counts=tuple((tool, count) for tool, count in data.get("tool_counts", ())),
            asked=tuple(data.get("asked", ())),
        )
    if kind is EpisodeKind.ERROR and data.get("resolution") is not None:
        data = dict(data, resolution=Resolution.from_json(data["resolution"]))
    # Rows written before a field existed lack it: the dataclass default stands in for them.
    return _CLASSES[kind](**data)


def episode_key(episode: Episode) -> str:
    return f"{episode.kind.value}:{episode.uid}"


@dataclass(frozen=True)
class StoredEpisode:
    episode: Episode
    transcript: str
    ingested_at: float
    archived_at: float | None

    @property
    def key(self) -> str:
        return episode_key(self.episode)


async def put_episodes(store: Store, episodes: Iterable[Episode], *, transcript: str, now: float) -> int:
    """Insert or replace episodes (inside the caller's transaction); returns how many were new."""
    rows = [
        (
            episode_key(e),
            e.kind.value,
            e.uid,
            e.session,
            e.at,
            json.dumps(episode_to_json(e), ensure_ascii=False),
            transcript,
            now,
        )
        for e in episodes
    ]
    if not rows:
        return 0
    known = await _existing(store, [row[0] for row in rows])
    await store.executemany(
        """INSERT INTO episodes (key, kind, uid, session, at, data, transcript, ingested_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET at = excluded.at, data = excluded.data""",
        rows,
    )
    return sum(1 for row in rows if row[0] not in known)


async def _existing(store: Store, keys: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = list(keys[start : start + 500])
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in await store.fetchall(f"SELECT key FROM episodes WHERE key IN ({marks})", chunk))
    return found


async def load_episodes(
    store: Store,
    *,
    kinds: Iterable[EpisodeKind] | None = None,
    since: float | None = None,
    include_archived: bool = False,
    limit: int | None = None,
) -> list[StoredEpisode]:
    """Episodes in time order, optionally of some kinds, since a time, live ones only by default."""
    where, params = [], []
    if kinds is not None:
        kinds = list(kinds)
        where.append(f"kind IN ({','.join('?' * len(kinds))})")
        params += [k.value for k in kinds]
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    if not include_archived:
        where.append("archived_at IS NULL")
    sql = "SELECT kind, data, transcript, ingested_at, archived_at FROM episodes"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY at, key"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    rows = await store.fetchall(sql, params)
    return [
        StoredEpisode(episode_from_json(EpisodeKind(kind), json.loads(data)), transcript, ingested, archived)
        for kind, data, transcript, ingested, archived in rows
    ]


async def episodes_by_uid(store: Store, uids: Iterable[str]) -> dict[str, Episode]:
    """The surprises (errors and corrections) of these uids, archived ones too; absent if not held."""
    wanted = list(dict.fromkeys(uids))
    found: dict[str, Episode] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = await store.fetchall(
            f"SELECT kind, uid, data FROM episodes WHERE kind != 'session' AND uid IN ({','.join('?' * len(chunk))})",
            chunk)
        for kind, uid, data in rows:
            found[uid] = episode_from_json(EpisodeKind(kind), json.loads(data))
    return found


async def transcripts_of(store: Store, uids: Sequence[str]) -> dict[str, str]:
    """The archive key of the transcript each episode uid came from (a lesson's episodes are its
    uids; the key's first part names the agent). Uids not stored are left out."""
    found: dict[str, str] = {}
    for start in range(0, len(uids), 500):
        chunk = list(uids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        rows = await store.fetchall(f"SELECT uid, transcript FROM episodes WHERE uid IN ({marks})", chunk)
        found.update((uid, transcript) for uid, transcript in rows)
    return found


async def mark_archived(store: Store, keys: Iterable[str], now: float) -> None:
    """Decay archived these episodes (inside the caller's transaction)."""
    await store.executemany("UPDATE episodes SET archived_at = ? WHERE key = ? AND archived_at IS NULL",
                            [(now, key) for key in keys])


async def counts_by_kind(store: Store) -> dict[str, int]:
    counts = {kind.value: 0 for kind in EpisodeKind}
    counts.update(dict(await store.fetchall("SELECT kind, count(*) FROM episodes GROUP BY kind")))
    return counts


async def live_cutoff(store: Store, kind: str | None, limit: int) -> float | None:
    """The time of the ``limit``-th most recent live episode (of ``kind``, if given): listing from
    it on shows the latest ``limit`` without loading the rest."""
    where = "archived_at IS NULL" + (" AND kind = ?" if kind else "")
    return await store.scalar(
        f"SELECT at FROM episodes WHERE {where} ORDER BY at DESC LIMIT 1 OFFSET ?",
        ([kind] if kind else []) + [limit - 1],
    )


async def workdirs_of(store: Store, uids: Iterable[str]) -> dict[str, str]:
    """Episode uid → the working directory its session ran in (the session episode's ``project``).

    Error and correction episodes do not carry the directory themselves: their session episode
    does, so rows written before any project field existed answer too. A uid whose session is not
    held (or ran nowhere known) is absent.
    """
    wanted = list(dict.fromkeys(uids))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = await store.fetchall(
            f"""SELECT e.uid, json_extract(s.data, '$.project') FROM episodes e
                JOIN episodes s ON s.kind = 'session' AND s.session = e.session
                WHERE e.uid IN ({marks}) ORDER BY s.at""",
            chunk,
        )
        for uid, workdir in rows:
            if isinstance(workdir, str) and workdir and uid not in found:
                found[uid] = workdir
    return found


async def session_workdirs(store: Store) -> list[str]:
    """Every working directory a held session ran in (archived sessions too), in no set order."""
    rows = await store.fetchall(
        "SELECT DISTINCT json_extract(data, '$.project') FROM episodes WHERE kind = 'session'")
    return sorted(r[0] for r in rows if isinstance(r[0], str) and r[0])


async def delete_episodes(store: Store, keys: Sequence[str]) -> None:
    """Remove episodes a better reader no longer finds in their transcript (inside the caller's
    transaction; `commons rebuild`). Lessons keep the uids they were made of."""
    await store.executemany("DELETE FROM episodes WHERE key = ?", [(key,) for key in keys])
