"""The node's SQLite database, reached from trio through aiosqlite.

One file per home, in WAL mode, so the CLI can read and write while the daemon runs. Writes happen
in :meth:`Store.transaction` (``BEGIN IMMEDIATE`` … ``COMMIT``): one transaction per batch, never
one per row, and long work commits in chunks so that no other process waits long. Another
process's commits are noticed through SQLite's ``data_version`` (:meth:`Store.wait_changed`).

Each concept owns its tables and their migrations (``commons.store.schema``); the database records
which version of each component's schema it holds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import trio
from trio_asyncio import aio_as_trio

from commons.errors import StoreError
from commons.store.schema import migrate


BUSY_TIMEOUT_MS = 10_000


class Store:
    def __init__(self, connection: aiosqlite.Connection, path: Path):
        self._db = connection
        self.path = path
        self._lock = trio.Lock()

    @classmethod
    async def open(cls, path: Path) -> "Store":
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = await aio_as_trio(aiosqlite.connect)(str(path), isolation_level=None)
        except sqlite3.Error as error:
            raise StoreError(f"cannot open the database {path}: {error}") from None
        store = cls(connection, path)
        try:
            await store._execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await store._execute("PRAGMA journal_mode = WAL")
            await store._execute("PRAGMA synchronous = NORMAL")
            await store._execute("PRAGMA foreign_keys = ON")
            await migrate(store)
        except sqlite3.DatabaseError as error:
            await store.close()
            raise StoreError(f"the database {path} is not usable: {error}") from None
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        await aio_as_trio(self._db.close)()

    async def __aenter__(self) -> "Store":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- reading --------------------------------------------------------------------------------

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        rows = await aio_as_trio(self._db.execute_fetchall)(sql, params)
        return list(rows)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]

    # --- writing --------------------------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator["Store"]:
        """One write transaction; the lock keeps the daemon's tasks from interleaving theirs."""
        async with self._lock:
            # Shielded: cancelled while SQLite runs it (SIGTERM), BEGIN would still take effect
            # and leave a transaction nobody rolls back ("within a transaction" at the next one).
            with trio.CancelScope(shield=True):
                await self._execute("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                with trio.CancelScope(shield=True):
                    await self._execute("ROLLBACK")
                raise
            with trio.CancelScope(shield=True):  # finish the transaction even when cancelled (SIGTERM)
                await self._execute("COMMIT")

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement inside :meth:`transaction`; returns the number of rows changed."""
        self._require_transaction()
        return await self._execute(sql, params)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        self._require_transaction()
        cursor = await aio_as_trio(self._db.executemany)(sql, rows)
        count = cursor.rowcount
        await aio_as_trio(cursor.close)()
        return count

    async def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One statement in a transaction of its own."""
        async with self.transaction():
            return await self.execute(sql, params)

    async def _execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        cursor = await aio_as_trio(self._db.execute)(sql, params)
        count = cursor.rowcount
        await aio_as_trio(cursor.close)()
        return count

    def _require_transaction(self) -> None:
        owner = self._lock.statistics().owner
        if owner is not trio.lowlevel.current_task():
            raise RuntimeError("Store writes go inside `async with store.transaction():`")

    # --- noticing other processes ---------------------------------------------------------------

    async def data_version(self) -> int:
        """Changes whenever *another* connection commits (SQLite's PRAGMA data_version)."""
        return int(await self.scalar("PRAGMA data_version"))

    async def wait_changed(self, since: int, poll_interval: float = 0.5) -> int:
        """Wait until another process has committed since ``since``; return the new version."""
        while True:
            version = await self.data_version()
            if version != since:
                return version
            await trio.sleep(poll_interval)

    async def integrity_problems(self) -> list[str]:
        rows = await self.fetchall("PRAGMA integrity_check")
        return [row[0] for row in rows if row[0] != "ok"]
