"""The node's SQLite database, reached from trio through aiosqlite.

One file per home, in WAL mode, so the CLI can read and write while the daemon runs. Writes happen
in :meth:`Store.transaction` (``BEGIN IMMEDIATE`` … ``COMMIT``): one transaction per batch, never
one per row, and long work commits in chunks so that no other process waits long. Another
process's commits are noticed through SQLite's ``data_version`` (:meth:`Store.wait_changed`).

Each concept owns its tables and their migrations (``commons.store.schema``); the database records
which version of each component's schema it holds.

Two ways to reach SQLite, the same statements either way: through aiosqlite's thread (the
default, what the daemon uses: a long statement never stalls its gossip), or ``inline`` on the
calling thread (what a one-shot command uses: nothing else runs in its loop while it waits, and a
statement costs a microsecond there instead of the ~0.4 ms of CPU that a round trip through
aiosqlite's thread and the asyncio bridge takes; a command such as ``commons lessons`` makes dozens).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiosqlite
import trio
from trio_asyncio import aio_as_trio

from commons.errors import StoreError, explain_os_error
from commons.store.schema import migrate, needs_migration


BUSY_TIMEOUT_MS = 10_000
WAL_CHECKPOINT_PAGES = 10_000  # pages of WAL (4 KiB each) after which a commit checkpoints it
# SQLite's primary result codes (an extended code's low byte) that a person can act on.
SQLITE_BUSY, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = (
    5, 8, 10, 11, 13, 14, 26)
FULL_BELOW_BYTES = 1 << 20  # an I/O error with less free space than this on the disk is a full disk


class _Threaded:
    """SQLite through aiosqlite's worker thread, reached from trio through the asyncio bridge."""

    def __init__(self, connection: aiosqlite.Connection):
        self._db = connection

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list:
        return list(await aio_as_trio(self._db.execute_fetchall)(sql, params))

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        cursor = await aio_as_trio(self._db.execute)(sql, params)
        count = cursor.rowcount
        await aio_as_trio(cursor.close)()
        return count

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        cursor = await aio_as_trio(self._db.executemany)(sql, rows)
        count = cursor.rowcount
        await aio_as_trio(cursor.close)()
        return count

    async def control(self, sql: str) -> None:
        # In one round trip to the database thread (it leaves no cursor to close).
        await aio_as_trio(self._db.execute_fetchall)(sql)

    async def close(self) -> None:
        await aio_as_trio(self._db.close)()


class _Inline:
    """SQLite on the calling thread. Each call is still a trio checkpoint (a cancellation point),
    as a round trip to a thread is."""

    def __init__(self, connection: sqlite3.Connection):
        self._db = connection

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list:
        await trio.lowlevel.checkpoint()
        return self._db.execute(sql, params).fetchall()

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        await trio.lowlevel.checkpoint()
        cursor = self._db.execute(sql, params)
        count = cursor.rowcount
        cursor.close()
        return count

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        await trio.lowlevel.checkpoint()
        cursor = self._db.executemany(sql, rows)
        count = cursor.rowcount
        cursor.close()
        return count

    async def control(self, sql: str) -> None:
        await trio.lowlevel.checkpoint()
        self._db.execute(sql).close()

    async def close(self) -> None:
        self._db.close()


async def _connect(database: str, inline: bool, **kwargs: Any) -> _Threaded | _Inline:
    if inline:
        return _Inline(sqlite3.connect(database, isolation_level=None, **kwargs))
    return _Threaded(await aio_as_trio(aiosqlite.connect)(database, isolation_level=None, **kwargs))


class Store:
    def __init__(self, connection: _Threaded | _Inline, path: Path, readonly: bool = False):
        self._db = connection
        self.path = path
        self._lock = trio.Lock()
        self.readonly = readonly  # opened for reading only: writes fail with SQLITE_READONLY

    @classmethod
    async def open(cls, path: Path, *, readonly: bool = False, inline: bool = False) -> "Store":
        """Open (creating and migrating it if need be) the database at ``path``.

        ``readonly`` opens it for reading only, so that commands that only read work in a read-only
        home; a database missing or in need of a migration is then opened for writing after all.
        ``inline`` runs its statements on the calling thread (see the module's docstring).
        """
        if readonly and path.exists():
            store = await cls._open_readonly(path, inline)
            if store is not None:
                return store
        if path.exists() and not writable(path):
            raise StoreError(f"the database {path} is read-only here and this command writes to it: only "
                             "commands that read (lessons, status, recall, export, …) work; make it and its "
                             "folder writable, or set COMMONS_HOME to a writable home")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            explained = explain_os_error(error)
            raise StoreError(f"cannot create the folder for the database: {explained or error}") from None
        try:
            connection = await _connect(str(path), inline)
        except sqlite3.Error as error:
            raise _explained(error, path) from None
        store = cls(connection, path)
        try:
            await store._execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await store._execute("PRAGMA journal_mode = WAL")
            await store._execute("PRAGMA synchronous = NORMAL")
            # Checkpoint the WAL every ~40 MB, not every 4 MB: a batch of received records rewrites
            # pages of the key index spread all over it, and copying them into the database once
            # rather than ten times: 7.7 -> 6.6 µs a record inserted at 10^5 (docs/benchmarks.md, wave 4).
            await store._execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            await store._execute("PRAGMA foreign_keys = ON")
            await migrate(store)
        except BaseException:
            await store.close()
            raise
        return store

    @classmethod
    async def _open_readonly(cls, path: Path, inline: bool) -> "Store | None":
        """The database opened read-only, or None when it needs a migration first (a write)."""
        # A WAL database needs its -shm file, which a reader cannot create in a read-only folder once
        # the last writer removed it; nobody can be writing there then, so the file is immutable.
        folder_writable = os.access(path.parent, os.W_OK)
        uri = f"file:{quote(str(path))}?mode=ro" + ("" if folder_writable else "&immutable=1")
        try:
            connection = await _connect(uri, inline, uri=True)
        except sqlite3.Error as error:
            raise _explained(error, path) from None
        store = cls(connection, path, readonly=True)
        try:
            await store._execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await store._execute("PRAGMA foreign_keys = ON")
            if await needs_migration(store):
                await store.close()
                return None
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> "Store":
        return self

    async def __aexit__(self, *exc: object) -> None:
        # Shielded: a daemon stopped by SIGTERM (its scope cancelled) still closes the database,
        # rather than leaving the connection and its thread to the garbage collector.
        with trio.CancelScope(shield=True):
            await self.close()

    # --- reading --------------------------------------------------------------------------------

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        try:
            return await self._db.fetchall(sql, params)
        except sqlite3.Error as error:
            raise _explained(error, self.path) from None

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
                await self._control("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                with trio.CancelScope(shield=True):
                    if self._db.in_transaction:  # SQLite may have rolled back already (SQLITE_FULL)
                        await self._control("ROLLBACK")
                raise
            with trio.CancelScope(shield=True):  # finish the transaction even when cancelled (SIGTERM)
                try:
                    await self._control("COMMIT")
                except BaseException:
                    # A COMMIT that fails (a full disk) leaves the transaction open: roll it back,
                    # or the next one would begin "within a transaction".
                    if self._db.in_transaction:
                        await self._control("ROLLBACK")
                    raise

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement inside :meth:`transaction`; returns the number of rows changed."""
        self._require_transaction()
        return await self._execute(sql, params)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        self._require_transaction()
        try:
            return await self._db.executemany(sql, rows)
        except sqlite3.Error as error:
            raise _explained(error, self.path) from None

    async def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One statement in a transaction of its own."""
        async with self.transaction():
            return await self.execute(sql, params)

    async def _execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        try:
            return await self._db.execute(sql, params)
        except sqlite3.Error as error:
            raise _explained(error, self.path) from None

    async def _control(self, sql: str) -> None:
        """BEGIN, COMMIT or ROLLBACK: a batch's transaction costs two calls, not four."""
        try:
            await self._db.control(sql)
        except sqlite3.Error as error:
            raise _explained(error, self.path) from None

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


# What to say about each of those codes: what happened to which file, and what to do.
_SQLITE_EXPLAINED = {
    SQLITE_FULL: ("the disk holding the database {path} is full", "free some space and run the command "
                  "again; the transaction under way was rolled back, nothing written before it was lost"),
    SQLITE_READONLY: ("the database {path} is read-only", "only commands that read work here; make the "
                      "folder writable or set COMMONS_HOME to a writable home"),
    SQLITE_CANTOPEN: ("cannot open the database {path}", "check that its folder exists and is readable "
                      "(and writable, for commands that change something)"),
    SQLITE_IOERR: ("a disk I/O error on the database {path}", "check the disk (`dmesg`), then run "
                   "`commons store check`"),
    SQLITE_CORRUPT: ("the database {path} is damaged", "run `commons store check`; restore a backup or "
                     "re-import records with `commons import`"),
    SQLITE_NOTADB: ("the database {path} is not usable: it is not a SQLite database", "move it away; "
                    "`commons init` makes a new one"),
    SQLITE_BUSY: ("the database {path} stayed locked by another process", "wait for it (a long "
                  "`commons sleep` or import) and run the command again"),
}


def writable(path: Path) -> bool:
    """Whether the database (and its folder, where SQLite keeps the WAL) can be written here."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _disk_full(path: Path) -> bool:
    try:
        disk = os.statvfs(path.parent)
    except OSError:
        return False
    return disk.f_bavail * disk.f_frsize < FULL_BELOW_BYTES


def _explained(error: sqlite3.Error, path: Path) -> Exception:
    """A StoreError naming the file and what to do, for the SQLite errors a person can act on."""
    code = getattr(error, "sqlite_errorcode", None)
    code = code & 0xFF if isinstance(code, int) else None
    if code == SQLITE_IOERR and _disk_full(path):  # a full disk often shows as an I/O error (-shm, WAL)
        code = SQLITE_FULL
    known = _SQLITE_EXPLAINED.get(code)
    if known is None:  # a bug in commons (a bad statement, a constraint): shown as one
        return error
    what, todo = known
    return StoreError(f"{what.format(path=path)} ({error}): {todo}")
