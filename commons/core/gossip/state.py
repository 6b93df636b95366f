"""A gossip session's states, and why one ended (shared by the session, its halves and its events)."""

from __future__ import annotations

import enum


class SessionState(enum.Enum):
    HELLO = "hello"  # our Hello is queued; the peer's has not arrived (nothing else is accepted)
    OPEN = "open"  # Hellos exchanged: announcements, Wants, Records, Reconcile, Peers flow
    CLOSED = "closed"  # Bye sent or received, or the connection is gone; send the outbox, then hang up


class CloseKind(enum.Enum):
    """Why a session ended, for the driver and the peer table (``close_reason`` has the details)."""

    LOCAL = "local"  # our side closed it (close())
    PEER_BYE = "peer-bye"  # the peer sent Bye
    PEER_MISBEHAVED = "peer-misbehaved"  # the peer's score fell to close_score, or it broke the protocol
    CONNECTION_LOST = "connection-lost"  # the transport ended under us
    TIMEOUT = "timeout"  # no Hello in time, or nothing at all from the peer for idle_timeout
    INCOMPATIBLE = "incompatible"  # another gossip version or another network
    DUPLICATE = "duplicate"  # a second connection to the same peer
    BUSY = "busy"  # we hold max_sessions already
    EVICTED = "evicted"  # every slot was taken: a new peer got this idle (or low-scored) session's slot
