"""Peers in the database: those the person added, and those the daemon learned of.

``[[peers]]`` in config.toml is read-only and is not copied here. Rows come from
`commons peers add` (source ``added``) and from the daemon, which records the peers gossip
exchanged, LAN discovery found and inbound connections brought (``exchanged``, ``discovered``,
``inbound``), with each peer's score, last sync and whether it is connected now. `commons peers
remove` deletes a row; the daemon notices through the store's data_version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from commons.store.db import Store

COMPONENT = "peers"
MIGRATIONS = (
    (
        """CREATE TABLE peers (
            transport_key BLOB PRIMARY KEY,
            address TEXT,
            source TEXT NOT NULL,          -- added | exchanged | discovered | inbound
            added_at REAL NOT NULL,
            score REAL NOT NULL DEFAULT 0, -- the session's score, or minus the strikes since a good sync
            last_sync REAL,
            connected INTEGER NOT NULL DEFAULT 0,
            seen_at REAL                   -- when the daemon last wrote this row
        ) WITHOUT ROWID""",
    ),
)

ADDED = "added"
# The gossip core's names for where it heard of a peer -> the words `commons peers` shows.
SOURCE_WORDS = {"bootstrap": "configured", "exchange": "exchanged", "hello": "exchanged",
                "discovery": "discovered", "inbound": "inbound", ADDED: ADDED}


@dataclass(frozen=True)
class PeerRow:
    transport_key: bytes
    address: str | None
    source: str
    added_at: float
    score: float
    last_sync: float | None
    connected: bool


async def add(store: Store, transport_key: bytes, address: str, now: float) -> None:
    """The person adds a peer: it becomes (or stays) ``added``, with this address."""
    await store.write(
        """INSERT INTO peers (transport_key, address, source, added_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (transport_key) DO UPDATE SET address = excluded.address, source = excluded.source""",
        (transport_key, address, ADDED, now),
    )


async def remove(store: Store, transport_key: bytes) -> bool:
    return await store.write("DELETE FROM peers WHERE transport_key = ?", (transport_key,)) > 0


async def all_peers(store: Store) -> list[PeerRow]:
    rows = await store.fetchall(
        "SELECT transport_key, address, source, added_at, score, last_sync, connected FROM peers ORDER BY added_at")
    return [PeerRow(k, a, s, at, score, last, bool(c)) for k, a, s, at, score, last, c in rows]


async def added(store: Store) -> list[PeerRow]:
    return [p for p in await all_peers(store) if p.source == ADDED]


async def record_seen(store: Store, seen: Sequence[PeerRow], now: float) -> None:
    """The daemon's view of its peers: insert learned ones, update score, sync and connection.

    A person's ``added`` entry keeps its source and address; the others take what gossip says.
    """
    async with store.transaction():
        await store.execute("UPDATE peers SET connected = 0 WHERE connected = 1")
        await store.executemany(
            """INSERT INTO peers (transport_key, address, source, added_at, score, last_sync, connected, seen_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (transport_key) DO UPDATE SET
                   address = CASE WHEN peers.source = 'added' THEN peers.address
                                  ELSE coalesce(excluded.address, peers.address) END,
                   score = excluded.score, last_sync = coalesce(excluded.last_sync, peers.last_sync),
                   connected = excluded.connected, seen_at = excluded.seen_at""",
            [(p.transport_key, p.address, p.source, now, p.score, p.last_sync, int(p.connected), now) for p in seen],
        )


async def disconnect_all(store: Store) -> None:
    """The daemon stops: nobody is connected any more."""
    await store.write("UPDATE peers SET connected = 0 WHERE connected = 1")


async def last_sync(store: Store) -> float | None:
    """When any peer last completed a sync with this node."""
    return await store.scalar("SELECT max(last_sync) FROM peers")
