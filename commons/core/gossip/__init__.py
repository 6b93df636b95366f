"""Gossip: how records spread between nodes, as state machines over bytes and ``now`` (sans-I/O).

- ``node``: :class:`GossipNode`, one node's records, sessions and rounds, holding two parts that
  own their state: ``fetch`` (``FetchBook``: which peer fetches which key) and ``intake``
  (``RecordIntake``: validate, store, relay); with ``peers`` (parameters and the peer table) and
  ``events`` (what it reports);
- ``session``: :class:`PeerSession`, one connection, holding two parts: ``transfer``
  (``RecordTransfer``: Wants, pushes, Records, the rate limits) and ``sync`` (``SessionSync``: its
  reconciliations); with ``state`` (its states) and ``key_queue``. Each part talks to its holder
  through a small protocol, so a test builds it alone;
- ``messages``: the wire messages and the frame codec (``encode_frame``, ``FrameDecoder``);
- ``memnet``: nodes joined in memory on a virtual clock, for tests and simulations.

``protocol/gossip.md`` is the normative description; ``commons/net/peer_driver.py`` is the thin
trio driver.
"""

from commons.core.gossip.memnet import HANGUP, Network, transport_key_of
from commons.core.gossip.messages import FrameDecoder, GossipProtocolError, encode_frame
# The wire messages, for the network simulator's model engine (simulations/model.py), which re-states them.
from commons.core.gossip.messages import (
    GOSSIP_VERSION, Announce, Bye, Hello, Peers, Reconcile, ReconcilePhase, Records, Want, encode)
from commons.core.gossip.node import Accepted, Event, GossipNode, GossipParams, Refused, SessionClosed, network_hash
from commons.core.gossip.session import PeerSession, SessionState

__all__ = [
    "Accepted",
    "Announce",
    "Bye",
    "Event",
    "FrameDecoder",
    "GOSSIP_VERSION",
    "GossipNode",
    "GossipParams",
    "GossipProtocolError",
    "HANGUP",
    "Hello",
    "Network",
    "PeerSession",
    "Peers",
    "Reconcile",
    "ReconcilePhase",
    "Records",
    "Refused",
    "SessionClosed",
    "SessionState",
    "Want",
    "encode",
    "encode_frame",
    "network_hash",
    "transport_key_of",
]
