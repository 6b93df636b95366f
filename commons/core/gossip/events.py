"""What a gossip node reports to its driver: events (records accepted or refused, sessions closed)
and statistics (counters since start). Kept apart from ``gossip/node.py`` so the node reads on its own;
``commons.core.gossip.node`` re-exports every name."""

from __future__ import annotations

from dataclasses import dataclass

from commons.core import records as rec
from commons.core.gossip.state import CloseKind


@dataclass(frozen=True)
class Accepted:
    """Records accepted from a peer (valid, admitted): the driver persists them."""

    records: tuple[rec.SignedRecord, ...]
    from_peer: bytes


@dataclass(frozen=True)
class Refused:
    """A valid record refused by local policy or a death certificate: remembered as withheld."""

    key: bytes
    reason: str
    from_peer: bytes


@dataclass(frozen=True)
class SessionClosed:
    peer_key: bytes
    reason: str
    misbehaved: bool
    kind: CloseKind


Event = Accepted | Refused | SessionClosed


@dataclass(frozen=True)
class GossipStatistics:
    records_held: int
    withheld: int
    sessions: int
    known_peers: int
    wanted: int  # keys some open session announced and this node lacks (bounded by the per-peer queues)
    bytes_in: int
    bytes_out: int
    frames_in: int
    frames_out: int
    bodies_received: int
    duplicate_bodies: int
    invalid_received: int
    refused: int
    announced_keys_received: int
    duplicate_announced_keys: int
    syncs_completed: int

