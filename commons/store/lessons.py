"""Lessons, predictions, vetoes, render state and sleep runs, in the database.

The sans-I/O core (``commons.core.learning.sleep``) works on a :class:`~commons.core.learning.sleep.SleepState`;
this module is where that state lives between nights, plus what only the store knows:

* ``lessons``: the core :class:`~commons.core.learning.lessons.Lesson` fields (tuples as JSON), its
  embedding for recall, a store-level ``status`` that adds ``vetoed`` to the core's ``active`` /
  ``archived``, ``origin`` (``own``; ``received`` for lessons from peers, later), ``record_id``
  (the signed record once a shared lesson is published; filled by publishing), and a
  ``content_key``: what a veto matches so that the same content is never made again under a new id.
* ``predictions``: open and decided, with their verdict, evidence and time (for the report and
  for prediction accuracy).
* ``vetoes``: lesson id + content key, kept forever.
* ``rendered``: which lessons are in the agent's memory folder, since when, under which file name
  (``rendered_since`` for the core's prevention rule; a missing file is a veto).
* ``sleep_runs`` and ``reports``: what each night changed, and when a report was last shown.
* ``episode_touches``: when recall last returned an episode (the core's ``episode_touched``).

A vetoed lesson is handed to the core as *archived*: it keeps its episodes absorbed (so they do
not found the same lesson again), cannot be joined, and its predictions lapse.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import blake3
import numpy as np

from commons.core.learning import Lesson, LessonFix, LessonStatus, uncounted
from commons.core.learning import Prediction
from commons.core.records import LessonKind, Scope
from commons.store.db import Store

COMPONENT = "lessons"
MIGRATIONS = (
    (
        """CREATE TABLE lessons (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            scope TEXT NOT NULL,
            topics TEXT NOT NULL,            -- JSON list
            gist TEXT NOT NULL,
            triggers TEXT NOT NULL,          -- JSON list
            outcome TEXT NOT NULL,
            episodes TEXT NOT NULL,          -- JSON list of local episode uids
            provenance TEXT NOT NULL,        -- JSON list of hex keyed hashes
            strength REAL NOT NULL,
            strength_at REAL NOT NULL,
            touched REAL NOT NULL,
            seen INTEGER NOT NULL,
            created REAL NOT NULL,
            status TEXT NOT NULL,            -- active | archived | vetoed
            by_model INTEGER NOT NULL,
            origin TEXT NOT NULL DEFAULT 'own',   -- own | received
            record_id BLOB,                  -- the signed record, once published
            content_key TEXT NOT NULL,       -- what a veto matches
            vec BLOB NOT NULL,               -- float32[256] embedding for recall
            updated REAL NOT NULL
        )""",
        "CREATE INDEX lessons_by_status ON lessons (status, created)",
        "CREATE INDEX lessons_by_content ON lessons (content_key)",
        """CREATE TABLE predictions (
            id TEXT PRIMARY KEY,
            lesson_id TEXT NOT NULL,
            situation TEXT NOT NULL,
            triggers TEXT NOT NULL,          -- JSON list
            outcome TEXT NOT NULL,
            made REAL NOT NULL,
            expires REAL NOT NULL,
            status TEXT NOT NULL,            -- open | confirmed | prevented | failed | expired | withdrawn
            evidence TEXT,                   -- the deciding episode uid
            decided_at REAL
        )""",
        "CREATE INDEX predictions_by_lesson ON predictions (lesson_id, status)",
        "CREATE INDEX predictions_by_decision ON predictions (decided_at)",
        """CREATE TABLE vetoes (
            lesson_id TEXT PRIMARY KEY,
            content_key TEXT NOT NULL,
            text TEXT NOT NULL,
            reason TEXT NOT NULL,            -- forget | file deleted | suppressed
            at REAL NOT NULL
        )""",
        "CREATE INDEX vetoes_by_content ON vetoes (content_key)",
        """CREATE TABLE rendered (
            lesson_id TEXT PRIMARY KEY,
            layer TEXT NOT NULL,
            folder TEXT NOT NULL,
            file TEXT NOT NULL,
            since REAL NOT NULL
        )""",
        """CREATE TABLE sleep_runs (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            counts TEXT NOT NULL,            -- JSON {event type: count}
            events TEXT NOT NULL             -- JSON list of lesson / prediction events
        )""",
        "CREATE INDEX sleep_runs_by_time ON sleep_runs (at)",
        "CREATE TABLE reports (id INTEGER PRIMARY KEY, at REAL NOT NULL, since REAL NOT NULL, path TEXT)",
        "CREATE TABLE episode_touches (key TEXT PRIMARY KEY, uid TEXT NOT NULL, touched REAL NOT NULL)",
    ),
    (
        # A counter that moves with every change to the lessons table, whoever makes it (this
        # process, the CLI, the daemon): a long-lived process keeps the recall matrix in memory
        # and reloads it only when the counter moved (see RecallMatrix).
        "CREATE TABLE lesson_generation (n INTEGER NOT NULL)",
        "INSERT INTO lesson_generation VALUES (0)",
        "CREATE TRIGGER lessons_inserted AFTER INSERT ON lessons BEGIN UPDATE lesson_generation SET n = n + 1; END",
        "CREATE TRIGGER lessons_updated AFTER UPDATE ON lessons BEGIN UPDATE lesson_generation SET n = n + 1; END",
        "CREATE TRIGGER lessons_deleted AFTER DELETE ON lessons BEGIN UPDATE lesson_generation SET n = n + 1; END",
    ),
    (
        # One lesson may be rendered in many folders (a shared lesson in every project's memory):
        # the render state is keyed by lesson and folder, and says which project the folder is for
        # ('' for a folder that is no project's, such as the plain memory folder).
        """CREATE TABLE rendered_v2 (
            lesson_id TEXT NOT NULL,
            layer TEXT NOT NULL,
            folder TEXT NOT NULL,
            file TEXT NOT NULL,
            since REAL NOT NULL,
            project TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (lesson_id, folder)
        )""",
        "INSERT INTO rendered_v2 (lesson_id, layer, folder, file, since) SELECT lesson_id, layer, folder, file, since FROM rendered",
        "DROP TABLE rendered",
        "ALTER TABLE rendered_v2 RENAME TO rendered",
    ),
    (
        # The project a lesson was written in when no episode says (one the agent remembered
        # mid-task, one added by hand): its root, '' for none. Older rows have none.
        "ALTER TABLE lessons ADD COLUMN project TEXT NOT NULL DEFAULT ''",
    ),
    (
        # The fix an error lesson names and its evidence (core/learning/lessons.py LessonFix), as
        # JSON, or NULL when no fix was seen; and the steps its sessions refuted (a JSON list).
        # Older rows have none: the next sleep that touches them writes them.
        "ALTER TABLE lessons ADD COLUMN fix TEXT",
        "ALTER TABLE lessons ADD COLUMN fix_refuted TEXT NOT NULL DEFAULT '[]'",
    ),
)

VETOED = "vetoed"
STATUSES = ("active", "archived", VETOED)
CHUNK_ROWS = 2000  # rows per transaction in long writes: no other command waits long


def content_key(kind: LessonKind, text: str) -> str:
    """What a veto matches: the kind and the normalised text without its "(seen N times)" tail."""
    body = kind.value + "\x00" + uncounted(text)
    return blake3.blake3(body.encode()).hexdigest()


@dataclass(frozen=True)
class StoredLesson:
    lesson: Lesson
    status: str  # active | archived | vetoed (the core's status, or the veto)
    origin: str
    record_id: bytes | None


_LESSON_COLUMNS = ("id, kind, text, scope, topics, gist, triggers, outcome, episodes, provenance, "
                   "strength, strength_at, touched, seen, created, status, by_model, origin, record_id, fix, fix_refuted")


def _lesson_from_row(row: Sequence[Any]) -> StoredLesson:
    (lid, kind, text, scope, topics, gist, triggers, outcome, episodes, provenance, strength,
     strength_at, touched, seen, created, status, by_model, origin, record_id, fix, fix_refuted) = row
    core_status = LessonStatus.ACTIVE if status == "active" else LessonStatus.ARCHIVED
    lesson = Lesson(
        id=lid, kind=LessonKind(kind), text=text, scope=Scope(scope), topics=tuple(json.loads(topics)),
        gist=gist, triggers=tuple(json.loads(triggers)), outcome=outcome,
        episodes=tuple(json.loads(episodes)), provenance=tuple(bytes.fromhex(h) for h in json.loads(provenance)),
        strength=strength, strength_at=strength_at, touched=touched, seen=seen, created=created,
        status=core_status, by_model=bool(by_model),
        fix=LessonFix.from_json(json.loads(fix)) if fix else None, fix_refuted=tuple(json.loads(fix_refuted or "[]")),
    )
    return StoredLesson(lesson, status, origin, record_id)


def _lesson_row(lesson: Lesson, status: str, vec: np.ndarray, now: float) -> tuple:
    return (
        lesson.id, lesson.kind.value, lesson.text, lesson.scope.value, json.dumps(list(lesson.topics)),
        lesson.gist, json.dumps(list(lesson.triggers)), lesson.outcome, json.dumps(list(lesson.episodes)),
        json.dumps([h.hex() for h in lesson.provenance]), lesson.strength, lesson.strength_at,
        lesson.touched, lesson.seen, lesson.created, status, int(lesson.by_model),
        content_key(lesson.kind, lesson.text), np.asarray(vec, dtype=np.float32).tobytes(), now,
        json.dumps(lesson.fix.to_json()) if lesson.fix is not None else None, json.dumps(list(lesson.fix_refuted)),
    )


def recall_text(lesson: Lesson) -> str:
    """What a lesson is embedded as for recall: its text and the episode line it was founded on."""
    return f"{lesson.text}\n{lesson.gist}"


async def put_lessons(store: Store, items: Sequence[tuple[Lesson, str]], vectors: np.ndarray, now: float) -> None:
    """Insert or update lessons with their store status (inside the caller's transaction).

    ``origin`` and ``record_id`` are never overwritten: an update is to the local state only.
    """
    if not items:
        return
    rows = [_lesson_row(lesson, status, vectors[i], now) for i, (lesson, status) in enumerate(items)]
    await store.executemany(
        """INSERT INTO lessons (id, kind, text, scope, topics, gist, triggers, outcome, episodes,
               provenance, strength, strength_at, touched, seen, created, status, by_model,
               content_key, vec, updated, fix, fix_refuted)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET text = excluded.text, scope = excluded.scope,
               topics = excluded.topics, gist = excluded.gist, triggers = excluded.triggers,
               outcome = excluded.outcome, episodes = excluded.episodes, provenance = excluded.provenance,
               strength = excluded.strength, strength_at = excluded.strength_at,
               touched = excluded.touched, seen = excluded.seen, status = excluded.status,
               content_key = excluded.content_key, vec = excluded.vec, updated = excluded.updated,
               fix = excluded.fix, fix_refuted = excluded.fix_refuted""",
        rows,
    )


async def load_lessons(store: Store, *, statuses: Iterable[str] | None = None,
                       ids: Iterable[str] | None = None) -> list[StoredLesson]:
    """Lessons in the order they were learned, optionally of some statuses or ids."""
    where, params = [], []
    if statuses is not None:
        statuses = list(statuses)
        where.append(f"status IN ({','.join('?' * len(statuses))})")
        params += statuses
    if ids is not None:
        ids = list(ids)
        where.append(f"id IN ({','.join('?' * len(ids))})")
        params += ids
    sql = f"SELECT {_LESSON_COLUMNS} FROM lessons"
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = await store.fetchall(sql + " ORDER BY created, rowid", params)
    return [_lesson_from_row(row) for row in rows]


@dataclass
class RecallMatrix:
    """The active lessons as recall scores them: ids, embeddings and the columns the score reads.

    Loading 100,000 embeddings costs a few hundred milliseconds, so a process keeps the matrix
    (one per store) and reloads it only when ``lesson_generation`` moved; recall's own touches
    update it in place (:meth:`touched_rows`).
    """

    ids: list[str]
    vectors: np.ndarray  # (n, 256) float32
    touched: np.ndarray
    strength: np.ndarray
    strength_at: np.ndarray
    generation: int
    rows: dict[str, int]

    def touched_rows(self, updates: Sequence[tuple[float, float, float, str]], generation: int) -> None:
        """Apply (strength, strength_at, touched, id) rows this process just wrote."""
        for strength, strength_at, touched, lesson_id in updates:
            row = self.rows.get(lesson_id)
            if row is not None:
                self.strength[row], self.strength_at[row], self.touched[row] = strength, strength_at, touched
        self.generation = generation


_RECALL_MATRICES: "weakref.WeakKeyDictionary[Store, RecallMatrix]" = weakref.WeakKeyDictionary()


async def lesson_generation(store: Store) -> int:
    return int(await store.scalar("SELECT n FROM lesson_generation"))


async def recall_matrix(store: Store) -> RecallMatrix:
    """The active lessons for recall, from memory when nothing changed since the last load."""
    generation = await lesson_generation(store)
    cached = _RECALL_MATRICES.get(store)
    if cached is not None and cached.generation == generation:
        return cached
    rows = await store.fetchall(
        "SELECT id, vec, touched, strength, strength_at FROM lessons WHERE status = 'active'")
    ids = [r[0] for r in rows]
    if rows:
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        cols = np.array([(r[2], r[3], r[4]) for r in rows], dtype=np.float64)
        touched, strength, strength_at = cols[:, 0].copy(), cols[:, 1].copy(), cols[:, 2].copy()
    else:
        vectors = np.zeros((0, 256), dtype=np.float32)
        touched = strength = strength_at = np.zeros(0, dtype=np.float64)
    matrix = RecallMatrix(ids, vectors, touched, strength, strength_at, generation,
                          {lesson_id: row for row, lesson_id in enumerate(ids)})
    _RECALL_MATRICES[store] = matrix
    return matrix


async def touch_lessons(store: Store, updates: Sequence[tuple[float, float, float, str]]) -> None:
    """Recall renewed these lessons (inside the caller's transaction): (strength, strength_at, touched, id).

    The cached recall matrix follows in place when nobody else changed a lesson meanwhile.
    """
    cached = _RECALL_MATRICES.get(store)
    before = await lesson_generation(store)
    await store.executemany("UPDATE lessons SET strength = ?, strength_at = ?, touched = ? WHERE id = ?", updates)
    after = await lesson_generation(store)
    if cached is not None and cached.generation == before:
        cached.touched_rows(updates, after)


async def resolve_id(store: Store, prefix: str) -> str:
    """The full lesson id a prefix of ≥ 6 hex characters names; ValueError says why not."""
    prefix = prefix.strip().lower()
    if len(prefix) < 6 or any(c not in "0123456789abcdef" for c in prefix):
        raise ValueError(f"{prefix!r} is not a lesson id: give at least 6 hex characters of it")
    rows = await store.fetchall("SELECT id FROM lessons WHERE id >= ? AND id < ? LIMIT 2",
                                (prefix, prefix + "g"))
    if not rows:
        raise ValueError(f"no lesson has an id starting with {prefix!r} (see `commons lessons --status all`)")
    if len(rows) > 1:
        raise ValueError(f"{prefix!r} names more than one lesson; give more of the id")
    return rows[0][0]


async def set_project(store: Store, lesson_id: str, project: str) -> None:
    """Record the project a lesson with no episodes was written in (inside the caller's transaction)."""
    await store.execute("UPDATE lessons SET project = ? WHERE id = ?", (project, lesson_id))


async def written_in(store: Store, lesson_ids: Sequence[str]) -> dict[str, str]:
    """Lesson id → the project it was written in, for lessons that have one (see ``set_project``)."""
    found: dict[str, str] = {}
    for start in range(0, len(lesson_ids), 500):
        chunk = list(lesson_ids[start:start + 500])
        rows = await store.fetchall(
            f"SELECT id, project FROM lessons WHERE project != '' AND id IN ({','.join('?' * len(chunk))})", chunk)
        found.update(dict(rows))
    return found


async def set_scope(store: Store, lesson_id: str, scope: Scope, now: float) -> None:
    await store.write("UPDATE lessons SET scope = ?, updated = ? WHERE id = ?", (scope.value, now, lesson_id))


# --- predictions ------------------------------------------------------------------------------


def _prediction_from_row(row: Sequence[Any]) -> Prediction:
    pid, lesson_id, situation, triggers, outcome, made, expires = row
    return Prediction(pid, lesson_id, situation, tuple(json.loads(triggers)), outcome, made, expires)


async def open_predictions(store: Store) -> list[Prediction]:
    rows = await store.fetchall(
        "SELECT id, lesson_id, situation, triggers, outcome, made, expires FROM predictions "
        "WHERE status = 'open' ORDER BY made, id")
    return [_prediction_from_row(r) for r in rows]


async def open_prediction_of(store: Store, lesson_ids: Sequence[str]) -> dict[str, Prediction]:
    found: dict[str, Prediction] = {}
    for start in range(0, len(lesson_ids), 500):
        chunk = list(lesson_ids[start:start + 500])
        rows = await store.fetchall(
            "SELECT id, lesson_id, situation, triggers, outcome, made, expires FROM predictions "
            f"WHERE status = 'open' AND lesson_id IN ({','.join('?' * len(chunk))})", chunk)
        found.update((r[1], _prediction_from_row(r)) for r in rows)
    return found


async def add_predictions(store: Store, predictions: Sequence[Prediction]) -> None:
    await store.executemany(
        "INSERT OR IGNORE INTO predictions (id, lesson_id, situation, triggers, outcome, made, expires, status) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'open')",
        [(p.id, p.lesson_id, p.situation, json.dumps(list(p.triggers)), p.outcome, p.made, p.expires)
         for p in predictions])


async def decide_predictions(store: Store, verdicts: Sequence[tuple[str, str, str | None, float]]) -> None:
    """Close predictions: (prediction id, status, evidence uid, time)."""
    await store.executemany(
        "UPDATE predictions SET status = ?, evidence = ?, decided_at = ? WHERE id = ? AND status = 'open'",
        [(status, evidence, at, pid) for pid, status, evidence, at in verdicts])


async def prediction_counts(store: Store, since: float | None = None, until: float | None = None) -> dict[str, int]:
    """Decided predictions per verdict, optionally decided within (since, until]."""
    window, params = _window("decided_at", since, until)
    sql = "SELECT status, count(*) FROM predictions WHERE status != 'open'" + window
    return dict(await store.fetchall(sql + " GROUP BY status", params))


def _window(column: str, since: float | None, until: float | None) -> tuple[str, list[float]]:
    """SQL conditions (each led by AND) keeping ``column`` within (since, until], either side optional."""
    sql, params = "", []
    if since is not None:
        sql, params = sql + f" AND {column} > ?", params + [since]
    if until is not None:
        sql, params = sql + f" AND {column} <= ?", params + [until]
    return sql, params


# --- vetoes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Veto:
    lesson_id: str
    content_key: str
    text: str
    reason: str
    at: float


async def vetoes(store: Store, since: float | None = None, until: float | None = None) -> list[Veto]:
    window, params = _window("at", since, until)
    sql = "SELECT lesson_id, content_key, text, reason, at FROM vetoes WHERE 1" + window
    return [Veto(*row) for row in await store.fetchall(sql + " ORDER BY at, lesson_id", params)]


async def add_vetoes(store: Store, vetoed: Sequence[tuple[str, str, str]], reason: str, now: float) -> None:
    """Veto lessons (inside the caller's transaction): (lesson id, content key, text) each.

    The lesson's row turns ``vetoed``, its open prediction is withdrawn and it leaves the render
    state; the veto row is what keeps sleep from making it again.
    """
    if not vetoed:
        return
    await store.executemany(
        "INSERT OR IGNORE INTO vetoes (lesson_id, content_key, text, reason, at) VALUES (?, ?, ?, ?, ?)",
        [(lid, key, text, reason, now) for lid, key, text in vetoed])
    ids = [(lid,) for lid, _, _ in vetoed]
    await store.executemany("UPDATE lessons SET status = 'vetoed', updated = ? WHERE id = ?",
                            [(now, lid) for lid, _, _ in vetoed])
    await store.executemany(
        "UPDATE predictions SET status = 'withdrawn', decided_at = ? WHERE lesson_id = ? AND status = 'open'",
        [(now, lid) for lid, _, _ in vetoed])
    await store.executemany("DELETE FROM rendered WHERE lesson_id = ?", ids)


async def lift_veto(store: Store, lesson_id: str, key: str) -> None:
    await store.execute("DELETE FROM vetoes WHERE lesson_id = ? OR content_key = ?", (lesson_id, key))


async def veto_keys(store: Store) -> tuple[set[str], set[str]]:
    """(vetoed lesson ids, vetoed content keys)."""
    rows = await store.fetchall("SELECT lesson_id, content_key FROM vetoes")
    return {r[0] for r in rows}, {r[1] for r in rows}


# --- render state -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    lesson_id: str
    layer: str
    folder: str
    file: str
    since: float
    project: str = ""  # the project root the folder is the memory of; "" for a folder of no project


async def rendered(store: Store) -> list[Rendered]:
    """Every (lesson, folder) rendered: a lesson shown in three projects has three rows."""
    return [Rendered(*row) for row in await store.fetchall(
        "SELECT lesson_id, layer, folder, file, since, project FROM rendered ORDER BY lesson_id, folder")]


def rendered_since(rows: Iterable[Rendered]) -> dict[str, float]:
    """Lesson id → since when it has been rendered anywhere (the earliest of its folders)."""
    since: dict[str, float] = {}
    for r in rows:
        since[r.lesson_id] = min(since.get(r.lesson_id, r.since), r.since)
    return since


async def replace_rendered(store: Store, rows: Sequence[Rendered]) -> None:
    """The render state is what was just written (inside the caller's transaction)."""
    await store.execute("DELETE FROM rendered")
    await store.executemany(
        "INSERT INTO rendered (lesson_id, layer, folder, file, since, project) VALUES (?, ?, ?, ?, ?, ?)",
        [(r.lesson_id, r.layer, r.folder, r.file, r.since, r.project) for r in rows])


# --- sleep runs and reports -------------------------------------------------------------------


async def add_sleep_run(store: Store, at: float, counts: dict[str, int], events: list[dict]) -> None:
    await store.write("INSERT INTO sleep_runs (at, counts, events) VALUES (?, ?, ?)",
                      (at, json.dumps(counts), json.dumps(events, ensure_ascii=False)))


@dataclass(frozen=True)
class SleepRun:
    """One night as the morning report reads it: its counts, and its events as recorded."""

    at: float
    counts: Mapping[str, int]
    events: tuple[Mapping[str, Any], ...]  # as ``commons.node.sleep`` records them (JSON objects)


async def sleep_runs(store: Store, since: float, until: float) -> list[SleepRun]:
    rows = await store.fetchall("SELECT at, counts, events FROM sleep_runs WHERE at > ? AND at <= ? ORDER BY at, id",
                                (since, until))
    return [SleepRun(at, json.loads(counts), tuple(json.loads(events))) for at, counts, events in rows]


async def last_sleep_at(store: Store) -> float | None:
    """When the last night ran (None before the first)."""
    return await store.scalar("SELECT max(at) FROM sleep_runs")


async def report_since(store: Store, path: str) -> float | None:
    """Where the morning report already written at ``path`` started (None if there is none)."""
    return await store.scalar("SELECT min(since) FROM reports WHERE path = ?", (path,))


async def counts_by_status(store: Store) -> dict[str, int]:
    return dict(await store.fetchall("SELECT status, count(*) FROM lessons GROUP BY status"))


async def last_report_at(store: Store, kind: str) -> float | None:
    """When the last report of ``kind`` (a path for the morning file, NULL for one shown) was made."""
    sql = "SELECT max(at) FROM reports WHERE path IS " + ("NOT NULL" if kind == "file" else "NULL")
    return await store.scalar(sql)


async def add_report(store: Store, at: float, since: float, path: str | None) -> None:
    await store.write("INSERT INTO reports (at, since, path) VALUES (?, ?, ?)", (at, since, path))


# --- episode touches --------------------------------------------------------------------------


async def episode_touches(store: Store) -> dict[str, float]:
    """Episode uid → when recall last returned it."""
    return dict(await store.fetchall("SELECT uid, touched FROM episode_touches"))


async def touch_episodes(store: Store, touched: Sequence[tuple[str, str]], now: float) -> None:
    """(episode key, uid) pairs recall returned (inside the caller's transaction)."""
    await touch_episodes_at(store, [(key, uid, now) for key, uid in touched])


async def touch_episodes_at(store: Store, touched: Sequence[tuple[str, str, float]]) -> None:
    """(episode key, uid, time) rows: the time each episode's decay counts from, unless a later
    one is already recorded (a first sleep moves a history's episodes past the time no one worked in)."""
    await store.executemany(
        "INSERT INTO episode_touches (key, uid, touched) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET touched = max(touched, excluded.touched)", touched)


async def mark_represented(store: Store, items: Sequence[tuple[str, bytes]], now: float) -> None:
    """Own lessons that a record already stands for in the commons: (lesson id, record id).

    ``record_id`` is what publishing looks at: a lesson that has one is never signed again, so an
    own lesson that duplicates a common lesson is kept locally but not published twice.
    """
    await store.executemany("UPDATE lessons SET record_id = ?, updated = ? WHERE id = ? AND record_id IS NULL",
                            [(rid, now, lid) for lid, rid in items])


async def link_records(store: Store, items: Sequence[tuple[str, bytes]]) -> None:
    """Own lessons just published: (lesson id, the record signed for it)."""
    await store.executemany("UPDATE lessons SET record_id = ? WHERE id = ?", [(rid, lid) for lid, rid in items])
