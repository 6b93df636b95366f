"""What peer review keeps in the database: this node's judgements of lessons it received, and the
log of status changes (promoted, faded, revoked) for the morning report.

The statuses themselves are always recomputed from the records (``commons.core.trust.evaluation``); what is
kept here is what cannot be recomputed: which of this node's episodes decided a judgement, whether
it was signed, and when a lesson's status last changed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from commons.store.db import Store
from commons.store.records import QUERY_CHUNK

COMPONENT = "reviews"
MIGRATIONS = (
    (
        # Peer review (commons.node.review): what this node's sessions said about lessons it received.
        # One row per (received lesson, deciding episode); record_id is the signed verification,
        # filled when publishing is on (verifications go out under the same opt-in as lessons).
        """CREATE TABLE reviews (
            lesson BLOB NOT NULL,            -- the received lesson's record id
            evidence TEXT NOT NULL,          -- the local episode uid that decided it (never published)
            how TEXT NOT NULL,               -- confirmed | prevented | failed | corroborated
            naive INTEGER NOT NULL,          -- 0: the node had met the surprise before receipt
            observed REAL NOT NULL,          -- when the deciding episode happened
            received REAL NOT NULL,          -- when the node first held the lesson
            at REAL NOT NULL,                -- when it was judged
            record_id BLOB,                  -- the signed verification, once published
            PRIMARY KEY (lesson, evidence)
        ) WITHOUT ROWID""",
        # The last status each lesson record was seen with, so changes (promoted, faded, revoked)
        # can be reported; the status itself is always recomputed from the records.
        """CREATE TABLE trust_status (
            record_id BLOB PRIMARY KEY,
            status TEXT NOT NULL,
            since REAL NOT NULL
        ) WITHOUT ROWID""",
        """CREATE TABLE trust_changes (
            id INTEGER PRIMARY KEY,
            record_id BLOB NOT NULL,
            before TEXT,
            after TEXT NOT NULL,
            text TEXT NOT NULL,
            why TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX trust_changes_by_time ON trust_changes (at)",
    ),
)


@dataclass(frozen=True)
class Review:
    lesson: bytes  # the received lesson's record id
    evidence: str  # local episode uid
    how: str  # confirmed | prevented | failed | fix-failed | corroborated
    naive: bool
    observed: float
    received: float
    at: float
    record_id: bytes | None = None


_REVIEW_COLUMNS = "lesson, evidence, how, naive, observed, received, at, record_id"


def _review(row: Sequence[Any]) -> Review:
    lesson, evidence, how, naive, observed, received, at, record_id = row
    return Review(lesson, evidence, how, bool(naive), observed, received, at, record_id)


async def add_reviews(store: Store, reviews: Sequence[Review]) -> None:
    """Record judgements of received lessons (inside the caller's transaction); repeats are ignored."""
    await store.executemany(
        f"INSERT OR IGNORE INTO reviews ({_REVIEW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(r.lesson, r.evidence, r.how, int(r.naive), r.observed, r.received, r.at, r.record_id) for r in reviews])


async def reviews(store: Store, *, unsigned: bool = False) -> list[Review]:
    sql = f"SELECT {_REVIEW_COLUMNS} FROM reviews"
    if unsigned:
        sql += " WHERE record_id IS NULL"
    return [_review(row) for row in await store.fetchall(sql + " ORDER BY at, observed, lesson, evidence")]


async def sign_reviews(store: Store, signed: Sequence[tuple[bytes, str, bytes]]) -> None:
    """(lesson, evidence, verification record id) for reviews just signed (inside a transaction)."""
    await store.executemany("UPDATE reviews SET record_id = ? WHERE lesson = ? AND evidence = ?",
                            [(rid, lesson, evidence) for lesson, evidence, rid in signed])


async def trust_statuses(store: Store, ids: Collection[bytes] | None = None) -> dict[bytes, str]:
    """The last status logged of every lesson (of ``ids`` only, when given)."""
    if ids is None:
        return dict(await store.fetchall("SELECT record_id, status FROM trust_status"))
    found: dict[bytes, str] = {}
    wanted = list(ids)
    for start in range(0, len(wanted), QUERY_CHUNK):
        chunk = wanted[start:start + QUERY_CHUNK]
        found.update(await store.fetchall(
            f"SELECT record_id, status FROM trust_status WHERE record_id IN ({', '.join('?' * len(chunk))})", chunk))
    return found


@dataclass(frozen=True)
class TrustChange:
    record_id: bytes
    before: str | None
    after: str
    text: str
    why: str
    at: float


async def add_trust_changes(store: Store, statuses: Sequence[tuple[bytes, str]], changes: Sequence[TrustChange],
                            at: float) -> None:
    """Remember lessons' new statuses (id, status) as of ``at``, and log ``changes`` (inside the
    caller's transaction). A status remembered need not be logged: first statuses mostly are not."""
    await store.executemany("INSERT OR REPLACE INTO trust_status (record_id, status, since) VALUES (?, ?, ?)",
                            [(rid, status, at) for rid, status in statuses])
    if changes:
        await store.executemany(
            "INSERT INTO trust_changes (record_id, before, after, text, why, at) VALUES (?, ?, ?, ?, ?, ?)",
            [(c.record_id, c.before, c.after, c.text, c.why, c.at) for c in changes])


async def trust_changes(store: Store, since: float, until: float) -> list[TrustChange]:
    rows = await store.fetchall(
        "SELECT record_id, before, after, text, why, at FROM trust_changes WHERE at > ? AND at <= ? ORDER BY at, id",
        (since, until))
    return [TrustChange(*row) for row in rows]
