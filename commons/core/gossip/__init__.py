"""Gossip: how records spread between nodes, as state machines over bytes and ``now`` (sans-I/O).

- ``node``: :class:`GossipNode`, one node's records, sessions and rounds, built of its parts:
  ``peers`` (parameters and the peer table), ``fetch`` (which peer fetches which key),
  ``intake`` (validate, store, relay), ``events`` (what it reports);
- ``session``: :class:`PeerSession`, one connection, built of ``sync`` (its reconciliations) and
  ``transfer`` (Wants, pushes, Records), with ``state`` (its states) and ``key_queue``;
- ``messages``: the wire messages and the frame codec (``encode_frame``, ``FrameDecoder``);
- ``memnet``: nodes joined in memory on a virtual clock, for tests and simulations.

``protocol/gossip.md`` is the normative description; ``commons/net/peer_driver.py`` is the thin
trio driver.
"""

from commons.core.gossip.memnet import HANGUP, Network
from commons.core.gossip.messages import FrameDecoder, GossipProtocolError, encode_frame
from commons.core.gossip.node import Accepted, Event, GossipNode, GossipParams, Refused, SessionClosed
from commons.core.gossip.session import PeerSession, SessionState

__all__ = [
    "Accepted",
    "Event",
    "FrameDecoder",
    "GossipNode",
    "GossipParams",
    "GossipProtocolError",
    "HANGUP",
    "Network",
    "PeerSession",
    "Refused",
    "SessionClosed",
    "SessionState",
    "encode_frame",
]
