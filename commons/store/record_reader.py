"""Records read one at a time by key, synchronously: what the node's view of its holdings decodes
when a lesson's text or a revocation's reason is asked for.

The trust evaluation keeps only the facts it judges by (``core.trust_facts``); holding every
record decoded as well cost ~1 KB a record, 2 GB at 10^6 (issue #18). The few records a status
change, a render or `commons why` needs are read here instead, from a read-only connection of its
own (WAL: it sees what the store committed, and never waits for its writer). A read is a lookup
of the unique ``key`` index, a few microseconds, so it is made in place rather than awaited.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from commons.core.records import SignedRecord, decode_body
from commons.store.db import BUSY_TIMEOUT_MS

_CHUNK = 500  # keys per query (SQLite binds at most 32,766 variables)


class Wire(NamedTuple):
    body: bytes
    signature: bytes


class RecordReader:
    """Reads records of the database at ``path`` by reconciliation key (type tag || id)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:  # opened on first use: most views never read a record whole
            immutable = "" if os.access(self.path.parent, os.W_OK) else "&immutable=1"
            self._db = sqlite3.connect(f"file:{quote(str(self.path))}?mode=ro{immutable}", uri=True,
                                       isolation_level=None, check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return self._db

    def get(self, key: bytes) -> SignedRecord | None:
        row = self._connection().execute("SELECT body, signature FROM records WHERE key = ?", (key,)).fetchone()
        return None if row is None else SignedRecord(decode_body(row[0]), row[0], key[1:], row[1])

    def get_wire(self, key: bytes) -> Wire | None:
        """A record's body and signature, not decoded: what a peer that asks for it is sent."""
        row = self._connection().execute("SELECT body, signature FROM records WHERE key = ?", (key,)).fetchone()
        return None if row is None else Wire(row[0], row[1])

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, SignedRecord]:
        """The records of ``keys`` that are stored, by key."""
        keys, found = list(keys), {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            rows = self._connection().execute(
                f"SELECT key, body, signature FROM records WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
            for key, body, signature in rows:
                found[key] = SignedRecord(decode_body(body), body, key[1:], signature)
        return found

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
