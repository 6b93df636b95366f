"""Settings the CLI changes (publishing on or off, …): state in the database, not in config.toml."""

from __future__ import annotations

import json
from typing import Any

from commons.store.db import Store

COMPONENT = "settings"
MIGRATIONS = (
    ("CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL, changed_at REAL NOT NULL)",),
)


async def get(store: Store, name: str, default: Any = None) -> Any:
    value = await store.scalar("SELECT value FROM settings WHERE name = ?", (name,))
    return default if value is None else json.loads(value)


async def put(store: Store, name: str, value: Any, now: float) -> None:
    await store.write(
        "INSERT OR REPLACE INTO settings (name, value, changed_at) VALUES (?, ?, ?)",
        (name, json.dumps(value), now),
    )
