"""A gossip session's answer to a message type its version does not have (protocol/gossip.md,
Messages): it closes at once as misbehaving, says why in its Bye, and the peer earns a strike."""

from __future__ import annotations

import msgpack

from commons.core.gossip.memnet import PeerPair
from commons.core.gossip.messages import Bye, decode
from commons.core.gossip.node import CloseKind, SessionClosed
from tests.test_gossip import NOW, node

REASON = "misbehaved: unknown gossip message type 9 (version 1 has types 0..6)"


def test_an_unknown_message_type_closes_the_session_as_the_peers_fault_with_the_code_in_the_bye():
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    b.events()
    pair.b_session.receive(msgpack.packb([9, []]), NOW)  # one frame is enough: no penalty to add up
    session = pair.b_session
    assert session.closed and session.misbehaved and session.close_kind is CloseKind.PEER_MISBEHAVED
    assert session.close_reason == REASON
    assert b.events() == [SessionClosed(a.transport_key, REASON, True, CloseKind.PEER_MISBEHAVED)]
    info = b.peer(a.transport_key)
    assert info.strikes == 1 and info.backoff_until > NOW
    pair.run(NOW)  # the Bye reaches the peer, which learns why
    assert pair.a_session.closed and pair.a_session.close_kind is CloseKind.PEER_BYE
    assert pair.a_session.close_reason == f"peer said bye: {REASON}"


def test_an_unknown_message_type_before_hello_closes_the_session_too():
    b = node(2)
    session = b.open_session(bytes([1]) * 32, False, NOW)
    session.receive(msgpack.packb([200, b"x"]), NOW)
    assert session.closed and session.misbehaved
    frames = b.drain_outboxes()[0][1]
    bye = decode(frames[-1])
    assert isinstance(bye, Bye) and bye.reason.startswith("misbehaved: unknown gossip message type 200")


def test_a_malformed_message_of_a_known_type_only_costs_a_penalty():
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.b_session.receive(msgpack.packb([1, [b"short"]]), NOW)  # an Announce with a bad key
    assert not pair.b_session.closed and pair.b_session.score == -b.params.penalty_malformed
