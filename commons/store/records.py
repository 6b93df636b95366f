"""Signed records in the database: intake in batches, lookup, export order, and the invariants.

Records are keyed by their 33-byte reconciliation key (type tag || id), which is the pair
(type, id). A record is stored exactly as it arrived (body and signature bytes); everything a node
thinks about it is kept elsewhere. Intake is the one door through which records from a peer, an
import or this node's own signing enter: dedupe first (an id already held costs one lookup, never a
signature check), then strict decoding and verification, then one ``executemany`` per batch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import NamedTuple

from blake3 import blake3

from commons.core.records import (
    InvalidRecord,
    Problem,
    RecordType,
    SignedRecord,
    day_of,
    decode_body,
    received_key,
    reconcile_key,
    verify,
    verify_many,
)
from commons.core.trust import refused_as_dead
from commons.store.db import Store

COMPONENT = "records"
MIGRATIONS = (
    (
        # A rowid table: records are a few hundred bytes, too large to sit well in the b-tree of a
        # WITHOUT ROWID table (measured: 4x slower inserts). seq is the order of arrival. Only what
        # queries read is kept beside the body: everything else is in the body, decoded on read.
        """CREATE TABLE records (
            seq INTEGER PRIMARY KEY,
            key BLOB NOT NULL UNIQUE,      -- type tag || id: the reconciliation key
            type TEXT NOT NULL,
            body BLOB NOT NULL,
            signature BLOB NOT NULL,
            received_at REAL NOT NULL,     -- when this node first held it
            origin TEXT NOT NULL           -- own | peer | import
        )""",
        # Ids a local policy refused (the imperative filter, trust, a death certificate): kept so
        # that reconciliation does not fetch them again, with the reason for `commons why`.
        """CREATE TABLE refused (
            key BLOB PRIMARY KEY,
            reason TEXT NOT NULL,
            at REAL NOT NULL
        ) WITHOUT ROWID""",
    ),
)

# A local policy looks at a valid record and returns why it refuses it, or None to accept.
Admission = Callable[[SignedRecord], str | None]


@dataclass(frozen=True)
class Refusal:
    index: int  # position in the batch
    reason: str
    invalid: bool  # True: the record is not valid (the sender's fault); False: local policy said no


@dataclass(frozen=True)
class IntakeReport:
    accepted: tuple[SignedRecord, ...] = ()
    duplicates: int = 0
    refusals: tuple[Refusal, ...] = field(default_factory=tuple)

    @property
    def invalid(self) -> int:
        return sum(1 for r in self.refusals if r.invalid)


QUERY_CHUNK = 500  # ids per IN (...) lookup, well under SQLite's variable limit
# Keys per dedupe lookup: a whole intake batch in one statement where SQLite allows 32,766
# variables (3.32 and later), a round trip to the database thread saved per 500.
DEDUPE_CHUNK = 8000 if sqlite3.sqlite_version_info >= (3, 32) else QUERY_CHUNK


def _dedupe_statement(count: int) -> str:
    # Each key bound once, as a row of a VALUES table, and probed in both unique indexes: half the
    # cost of binding every key twice into two IN lists (each of which SQLite sorts into a table
    # of its own first): bench_intake's dedupe stage 1.8 -> 1.0 µs a record at 10^4 records.
    rows = ",".join(["(?)"] * count)
    return (f"WITH received(key) AS (VALUES {rows}) SELECT key FROM received "
            "WHERE EXISTS (SELECT 1 FROM records WHERE records.key = received.key) "
            "OR EXISTS (SELECT 1 FROM refused WHERE refused.key = received.key)")


async def known_keys(store: Store, keys: Sequence[bytes]) -> set[bytes]:
    """Which of these reconciliation keys the node holds already, as records or as refusals."""
    found: set[bytes] = set()
    for start in range(0, len(keys), DEDUPE_CHUNK):
        chunk = keys[start : start + DEDUPE_CHUNK]
        rows = await store.fetchall(_dedupe_statement(len(chunk)), chunk)
        found.update(row[0] for row in rows)
    return found


def _keys_of(rid: bytes) -> list[bytes]:
    return [reconcile_key(rtype, rid) for rtype in RecordType]


async def known_ids(store: Store, ids: Sequence[bytes]) -> set[bytes]:
    """Which of these ids (of any type) the node holds already, as records or as refusals."""
    keys = [key for rid in ids for key in _keys_of(rid)]
    return {key[1:] for key in await known_keys(store, keys)}


async def intake(
    store: Store,
    items: Sequence[tuple[bytes, bytes]],
    *,
    network: bytes,
    now: float,
    origin: str,
    admit: Admission | None = None,
    claimed_ids: Sequence[bytes | None] | None = None,
    pool: Executor | None = None,
) -> IntakeReport:
    """Validate and store a batch of (body, signature) pairs in one transaction. ``pool``: threads
    to check signatures in (``records.signature_pool``) while this one decodes; None, one core."""
    keys = [received_key(body) for body, _ in items]
    held = await known_keys(store, [key for key in keys if key is not None])
    # Each record new to the node is verified once; a copy of one earlier in the batch is verified
    # only when its signature differs (a copy with a bad signature must not shadow a good one).
    candidates: list[int] = []
    first: set[tuple[bytes, bytes]] = set()
    duplicates = 0
    for index, ((body, signature), key) in enumerate(zip(items, keys)):
        if key in held or (key, signature) in first:
            duplicates += 1
        else:
            candidates.append(index)
            if key is not None:
                first.add((key, signature))
    verdicts = verify_many(
        [items[i] for i in candidates], network=network, today=day_of(now),
        claimed_ids=None if claimed_ids is None else [claimed_ids[i] for i in candidates],
        body_ids=[None if keys[i] is None else keys[i][1:] for i in candidates], pool=pool,
    )
    accepted: list[SignedRecord] = []
    rows: list[tuple] = []
    refusals: list[Refusal] = []
    refused_rows: list[tuple[bytes, str, float]] = []
    for index, signed in zip(candidates, verdicts):
        if type(signed) is not SignedRecord:
            refusals.append(Refusal(index, str(signed), invalid=True))
            continue
        # A valid body's type is the one peeked (it is canonical), so its key is the record's.
        key = keys[index] or signed.key
        if key in held:  # a second valid copy (another signature) of a record taken just now
            duplicates += 1
            continue
        held.add(key)
        reason = admit(signed) if admit is not None else None
        if reason is not None:
            refusals.append(Refusal(index, reason, invalid=False))
            refused_rows.append((key, reason, now))
            continue
        accepted.append(signed)
        rows.append((key, _TYPE_NAMES[key[0]], signed.body, signed.signature, now, origin))
    _in_key_order(rows)
    async with store.transaction():
        await store.executemany(_INSERT, rows)
        if refused_rows:
            await store.executemany("INSERT OR IGNORE INTO refused VALUES (?, ?, ?)", refused_rows)
    return IntakeReport(tuple(accepted), duplicates, tuple(refusals))


_TYPE_NAMES = {rtype.tag: rtype.value for rtype in RecordType}
_INSERT = (
    "INSERT OR IGNORE INTO records (key, type, body, signature, received_at, origin) VALUES (?, ?, ?, ?, ?, ?)"
)


def _in_key_order(rows: list[tuple]) -> list[tuple]:
    """Rows sorted by their key, for one insert: each lands in the unique key index next to the
    one before it, so a batch rewrites each page of the index it touches once, in order, rather
    than pages all over it by turns (bench_intake --store-variants: ``sorted_batch``). Within a
    batch, seq is then key order: revocations first, as reconciliation orders them."""
    rows.sort(key=_first)
    return rows


def _first(row: tuple) -> bytes:
    return row[0]


def _row(signed: SignedRecord, now: float, origin: str) -> tuple:
    key = signed.key  # made on each read: once per row (an enum's .value is a descriptor call: by tag)
    return (key, _TYPE_NAMES[key[0]], signed.body, signed.signature, now, origin)


async def add_own(store: Store, signed: Iterable[SignedRecord], now: float) -> None:
    """Store records this node just signed (already valid: no second verification)."""
    async with store.transaction():
        await store.executemany(
            _INSERT,
            [_row(s, now, "own") for s in signed],
        )


def _from_row(body: bytes, signature: bytes, key: bytes) -> SignedRecord:
    return SignedRecord(decode_body(body), body, key[1:], signature)


_COLUMNS = "body, signature, key"


async def get(store: Store, rid: bytes) -> SignedRecord | None:
    row = await store.fetchone(f"SELECT {_COLUMNS} FROM records WHERE key IN (?, ?, ?, ?)", _keys_of(rid))
    return None if row is None else _from_row(*row)


async def find_by_prefix(store: Store, hex_prefix: str) -> list[SignedRecord]:
    """Records whose id starts with a hex prefix (what a person types after `commons why`)."""
    prefix = hex_prefix.lower()
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM records WHERE hex(substr(key, 2)) LIKE ? LIMIT 10", (prefix.upper() + "%",)
    )
    return [_from_row(*row) for row in rows]


async def all_records(store: Store, rtype: RecordType | None = None) -> list[SignedRecord]:
    """Every record, revocations first (key order), as export and reconciliation want them."""
    if rtype is None:
        rows = await store.fetchall(f"SELECT {_COLUMNS} FROM records ORDER BY key")
    else:
        rows = await store.fetchall(
            f"SELECT {_COLUMNS} FROM records WHERE key >= ? AND key < ? ORDER BY key",
            (bytes([rtype.tag]), bytes([rtype.tag + 1])),
        )
    return [_from_row(*row) for row in rows]


class Arrived(NamedTuple):
    """A record held, with when this node first held it and through which door (own | peer | import).

    A tuple, not a frozen dataclass: start-up makes one per record held (10^6), and unpacks it."""

    signed: SignedRecord
    received_at: float
    origin: str


async def in_chunks(store: Store, size: int = 10_000) -> AsyncIterator[list[Arrived]]:
    """Every record in key order, with its arrival, ``size`` at a time: a reader that keeps only a
    little of each (a daemon starting on 10^6 records) never has them all decoded at once (~1 KB
    each), nor an object per row for their arrivals (~400 bytes each, read in one query)."""
    last = b""
    while True:
        rows = await store.fetchall(f"SELECT {_COLUMNS}, received_at, origin FROM records WHERE key > ? "
                                    "ORDER BY key LIMIT ?", (last, size))
        if not rows:
            return
        last = rows[-1][2]
        yield [Arrived(_from_row(body, signature, key), at, origin) for body, signature, key, at, origin in rows]


async def keys(store: Store) -> list[bytes]:
    """The reconciliation keyspace: held records and refused ids, sorted."""
    rows = await store.fetchall("SELECT key FROM records UNION SELECT key FROM refused ORDER BY 1")
    return [row[0] for row in rows]


async def counts_by_type(store: Store) -> dict[str, int]:
    rows = await store.fetchall("SELECT type, count(*) FROM records GROUP BY type")
    counts = {rtype.value: 0 for rtype in RecordType}
    counts.update(dict(rows))
    return counts


async def check_invariants(store: Store, *, batch: int = 2000) -> tuple[int, list[str]]:
    """Every stored record's id matches its body, decodes canonically and its signature verifies.

    Returns (records checked, problems). Reads in batches so a large store never sits in memory.
    """
    problems: list[str] = []
    checked = 0
    last = b""
    while True:
        rows = await store.fetchall(
            "SELECT key, type, body, signature FROM records WHERE key > ? ORDER BY key LIMIT ?", (last, batch)
        )
        if not rows:
            return checked, problems
        for key, rtype, body, signature in rows:
            checked += 1
            last = key
            rid = key[1:]
            try:
                record = decode_body(body)
                if blake3(body).digest() != rid:
                    raise InvalidRecord(Problem.ID_MISMATCH, "the id does not match the body")
                if reconcile_key(type(record).type, rid) != key or type(record).type.value != rtype:
                    raise InvalidRecord(Problem.BAD_FIELD, "stored under the wrong type")
                verify(body, signature, network=record.network, today=record.created, claimed_id=rid)
            except InvalidRecord as error:
                problems.append(f"{rtype} {rid.hex()}: {error}")



async def add_received(store: Store, signed: Sequence[SignedRecord], now: float,
                       origin: str = "peer") -> tuple[int, int]:
    """Store records the gossip layer already verified and admitted (no second verification).

    Returns (the highest seq before them, the highest after), read in the same write transaction:
    whoever follows new records by seq may skip past these only when nothing else lies between."""
    rows = _in_key_order([_row(s, now, origin) for s in signed])
    async with store.transaction():
        before = await last_seq(store)
        await store.executemany(_INSERT, rows)
        return before, await last_seq(store)


async def add_refused(store: Store, refused: Sequence[tuple[bytes, str]], now: float) -> None:
    """Remember keys a local policy refused, so that reconciliation never fetches them again."""
    async with store.transaction():
        await store.executemany("INSERT OR IGNORE INTO refused VALUES (?, ?, ?)",
                                [(key, reason, now) for key, reason in refused])


async def since(store: Store, seq: int, origins: Sequence[str]) -> tuple[int, list[SignedRecord]]:
    """Records that arrived after ``seq`` from these origins, and the highest seq seen."""
    rows = await store.fetchall(
        f"SELECT seq, origin, {_COLUMNS} FROM records WHERE seq > ? ORDER BY seq", (seq,))
    last = max((row[0] for row in rows), default=seq)
    wanted = set(origins)
    return last, [_from_row(*row[2:]) for row in rows if row[1] in wanted]


async def arrived_since(store: Store, seq: int) -> tuple[int, list[tuple[SignedRecord, Arrival]]]:
    """Every record that arrived after ``seq``, with how it arrived, and the highest seq seen:
    what an evaluation made at ``seq`` has yet to take in."""
    rows = await store.fetchall(
        f"SELECT seq, received_at, origin, {_COLUMNS} FROM records WHERE seq > ? ORDER BY seq", (seq,))
    last = max((row[0] for row in rows), default=seq)
    return last, [(_from_row(*row[3:]), Arrival(row[1], row[2])) for row in rows]


async def refused_keys(store: Store) -> list[bytes]:
    return [row[0] for row in await store.fetchall("SELECT key FROM refused")]


async def refused_dead_ids(store: Store) -> list[bytes]:
    """Ids of records refused at intake as dead: death certificates of records never held."""
    rows = await store.fetchall("SELECT key, reason FROM refused")
    return [key[1:] for key, reason in rows if refused_as_dead(reason)]


async def own_records(store: Store) -> list[SignedRecord]:
    rows = await store.fetchall(f"SELECT {_COLUMNS} FROM records WHERE origin = 'own' ORDER BY seq")
    return [_from_row(*row) for row in rows]


@dataclass(frozen=True)
class Generation:
    """Where the records table stands. Records are only ever added, so a change to what is held
    moves ``last_seq`` or ``count``: an evaluation made at one generation holds until it moves."""

    last_seq: int
    count: int


async def generation(store: Store) -> Generation:
    last_seq, count = await store.fetchone("SELECT coalesce(max(seq), 0), count(*) FROM records")
    return Generation(int(last_seq), int(count))


async def watermark(store: Store) -> tuple[int, int]:
    """(the highest seq held, how many keys were refused), in one query: what moves when records
    arrive or are refused, for a reader that keeps up by catching up from where it was."""
    row = await store.fetchone("SELECT (SELECT coalesce(max(seq), 0) FROM records), (SELECT count(*) FROM refused)")
    return int(row[0]), int(row[1])


async def last_seq(store: Store) -> int:
    """The highest seq held (0 when empty): records after it are new to whoever read this."""
    return int(await store.scalar("SELECT coalesce(max(seq), 0) FROM records"))


async def own_keys(store: Store) -> set[bytes]:
    return {row[0] for row in await store.fetchall("SELECT key FROM records WHERE origin = 'own'")}


async def refused_count(store: Store) -> int:
    return int(await store.scalar("SELECT count(*) FROM refused"))


async def counts_by_origin(store: Store) -> dict[str, int]:
    return dict(await store.fetchall("SELECT origin, count(*) FROM records GROUP BY origin"))


@dataclass(frozen=True)
class Received:
    id: bytes
    at: float


async def revocations_received(store: Store, since: float, until: float) -> list[Received]:
    """Revocations that arrived within (since, until], in the order they arrived."""
    rows = await store.fetchall(
        "SELECT key, received_at FROM records WHERE type = 'revocation' AND received_at > ? AND received_at <= ? "
        "ORDER BY received_at, key", (since, until))
    return [Received(key[1:], at) for key, at in rows]


async def arrived_keys_since(store: Store, seq: int) -> tuple[int, list[tuple[bytes, float, str, int]]]:
    """``arrived_since`` without the bodies: (key, received_at, origin, seq) of every record that
    arrived after ``seq``, as rows. For a reader that already holds most of them decoded (the
    daemon's trust catch-up is handed what it just received: decoding them again cost a third of
    a verify each)."""
    rows = await store.fetchall("SELECT key, received_at, origin, seq FROM records WHERE seq > ? ORDER BY seq", (seq,))
    return (rows[-1][3] if rows else seq), rows  # in seq order: the last is the highest
