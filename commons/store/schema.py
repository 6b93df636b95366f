"""The database schema: each component's tables and their migrations, applied in order.

A component is one concept that owns tables (records, episodes, lessons, peers…). Its module
defines ``COMPONENT`` (a name) and ``MIGRATIONS`` (a tuple of migrations, each a tuple of SQL
statements). The ``schema_versions`` table says how many of each component's migrations the
database has; opening a store applies the missing ones in one transaction. A database written by
a newer commons (a component at a version this code does not know) is refused rather than guessed at.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

from commons.errors import StoreError


class Database(Protocol):
    """What migrating needs of the store (``commons.store.db.Store``, which calls this module)."""

    path: Path

    def transaction(self) -> AbstractAsyncContextManager[Any]: ...

    async def execute(self, sql: str, parameters: Sequence[Any] = ...) -> Any: ...

    async def fetchall(self, sql: str, parameters: Sequence[Any] = ...) -> list[Any]: ...

    async def scalar(self, sql: str, parameters: Sequence[Any] = ...) -> Any: ...

# Every module that owns tables. Add a line when a concept gets tables of its own.
COMPONENT_MODULES = (
    "commons.store.records",
    "commons.store.settings",
    "commons.store.episodes",
    "commons.store.lessons",
    "commons.store.reviews",
    "commons.store.peers",
)


def components() -> list[tuple[str, tuple[tuple[str, ...], ...]]]:
    found = []
    for name in COMPONENT_MODULES:
        module = importlib.import_module(name)
        found.append((module.COMPONENT, module.MIGRATIONS))
    return found


def _behind(store: Database, have: dict[str, int]) -> list[tuple[str, int, tuple[tuple[str, ...], ...]]]:
    """(component, version held, migrations) of every component the database holds an older
    version of; a newer one than this code knows is refused."""
    behind = []
    for component, migrations in components():
        current = have.get(component, 0)
        if current > len(migrations):
            raise StoreError(
                f"{store.path} holds {component} schema version {current}, newer than this "
                f"commons knows ({len(migrations)}); upgrade commons"
            )
        if current < len(migrations):
            behind.append((component, current, migrations))
    return behind


async def migrate(store: Database) -> None:
    async with store.transaction():
        await store.execute(
            "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        have = dict(await store.fetchall("SELECT component, version FROM schema_versions"))
        for component, current, migrations in _behind(store, have):
            for statements in migrations[current:]:
                for sql in statements:
                    await store.execute(sql)
            await store.execute(
                "INSERT OR REPLACE INTO schema_versions VALUES (?, ?)", (component, len(migrations))
            )


async def needs_migration(store: Database) -> bool:
    """Whether opening the database for writing would change its schema (read-only opening asks)."""
    have_table = await store.scalar(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'")
    if not have_table:
        return True
    return bool(_behind(store, dict(await store.fetchall("SELECT component, version FROM schema_versions"))))
