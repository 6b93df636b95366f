"""Every vector in protocol/vectors/gossip.json holds, and the file matches its generator."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from commons.core import records as rec
from tests.conformance.generators import load_generator
from commons.core.gossip.memnet import PeerPair
from commons.core.gossip.node import CloseKind, GossipNode, GossipParams, network_hash
from commons.core.gossip.messages import FrameDecoder, GossipProtocolError, Records, decode, encode

VECTORS_DIR = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
VECTORS = json.loads((VECTORS_DIR / "gossip.json").read_text())


def test_network_hash_vector():
    case = VECTORS["network_hash"]
    assert network_hash(bytes.fromhex(case["network"])).hex() == case["hash"]


@pytest.mark.parametrize("case", VECTORS["messages"], ids=lambda c: f"message{c['id']}")
def test_message_vector_decodes_and_reencodes(case):
    raw = bytes.fromhex(case["message"])
    message = decode(raw)
    assert type(message).__name__ == case["type"]
    assert load_generator("gossip").describe(message)["fields"] == case["fields"]
    assert encode(message) == raw
    assert FrameDecoder().feed(bytes.fromhex(case["frame"])) == [raw]


def test_record_in_records_vector_verifies():
    case = next(c for c in VECTORS["messages"] if c["type"] == "Records" and c["fields"]["records"])
    message = decode(bytes.fromhex(case["message"]))
    assert isinstance(message, Records)
    body, signature = message.records[0]
    assert rec.verify(body, signature, network=b"\x01" * 32, today=20000).type is rec.RecordType.LESSON


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=lambda c: f"invalid{c['id']}")
def test_invalid_vector_is_refused_as_the_peers_fault(case):
    with pytest.raises(GossipProtocolError) as excinfo:
        decode(bytes.fromhex(case["message"]))
    assert excinfo.value.problem == case["problem"]


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=lambda c: f"invalid{c['id']}")
def test_invalid_vector_closes_or_penalises_an_open_session_as_it_says(case):
    now = 1_800_000_000.0
    a, b = (GossipNode(b"\x01" * 32, bytes([n]) * 32, random.Random(n), now=now) for n in (1, 2))
    pair = PeerPair(a, b, now)
    pair.run(now)
    session = pair.b_session
    session.receive(bytes.fromhex(case["message"]), now)
    if case["session"] == "close":
        assert session.closed and session.misbehaved and session.close_kind is CloseKind.PEER_MISBEHAVED
        assert b.peer(a.transport_key).strikes == 1
    else:
        assert case["session"] == "penalise"
        assert not session.closed and session.score == -GossipParams().penalty_malformed
