"""What intake costs per record received: one hash, one dedupe lookup per batch, one signature
check for each record new to the node, and nothing for a copy (store intake and the gossip path)."""

from __future__ import annotations

import random

import nacl.bindings
import nacl.signing
import pytest

from commons.core import records as rec
from commons.core.gossip.node import GossipNode, GossipParams
from commons.core.gossip.memnet import PeerPair
from commons.core.records import signing
from commons.store import records as record_store
from commons.store.db import Store

NETWORK = bytes(32)
NOW = 20_000 * 86400.0
KEY = nacl.signing.SigningKey(bytes(range(32)))


def lesson(text: str, network: bytes = NETWORK) -> rec.SignedRecord:
    return rec.sign(
        rec.Lesson(network=network, author=bytes(KEY.verify_key), created=rec.day_of(NOW),
                   kind=rec.LessonKind.ERROR, text=text, scope=rec.Scope.SHARED, topics=("pip",),
                   prediction=rec.Prediction("pip install", "externally-managed-environment")),
        KEY,
    )


def forged(signed: rec.SignedRecord) -> bytes:
    return bytes([signed.signature[0] ^ 1]) + signed.signature[1:]


@pytest.fixture
async def store(aio, tmp_path):
    opened = await Store.open(tmp_path / "commons.db")
    yield opened
    await opened.close()


@pytest.fixture
def counted(monkeypatch):
    """Counts BLAKE3 hashes of record bodies and signature checks of records."""
    counts = {"hashes": 0, "verifies": 0}
    hash_body, open_signed = signing.blake3, nacl.bindings.crypto_sign_open

    def counting_hash(data=b""):
        counts["hashes"] += 1
        return hash_body(data)

    def counting_open(*args):
        counts["verifies"] += 1
        return open_signed(*args)

    monkeypatch.setattr(signing, "blake3", counting_hash)
    monkeypatch.setattr(nacl.bindings, "crypto_sign_open", counting_open)
    return counts


async def intake(store, pairs):
    return await record_store.intake(store, pairs, network=NETWORK, now=NOW, origin="peer")


async def test_a_copy_with_a_bad_signature_does_not_shadow_the_good_one_in_a_batch(store):
    good = lesson("sent twice, first with a broken signature")
    report = await intake(store, [(good.body, forged(good)), (good.body, good.signature)])
    assert [s.id for s in report.accepted] == [good.id]
    assert report.invalid == 1 and report.duplicates == 0
    assert await record_store.get(store, good.id) == good


async def test_refusals_name_their_place_in_the_batch_in_order(store):
    good, bad, other = lesson("good"), lesson("bad"), lesson("refused by policy")
    pairs = [(bad.body, forged(bad)), (good.body, good.signature), (other.body, other.signature)]
    report = await record_store.intake(store, pairs, network=NETWORK, now=NOW, origin="peer",
                                       admit=lambda s: "not wanted" if s.id == other.id else None)
    assert [(r.index, r.invalid) for r in report.refusals] == [(0, True), (2, False)]
    assert [s.id for s in report.accepted] == [good.id]


async def test_records_held_or_repeated_in_a_batch_cost_no_signature_check(store, counted):
    batch = [lesson(f"pip install fails, variant {i}") for i in range(3)]
    pairs = [(s.body, s.signature) for s in batch]
    await intake(store, pairs[:2])
    counted.update(hashes=0, verifies=0)
    report = await intake(store, pairs + pairs[2:])  # two held, one new, the new one again
    assert [s.id for s in report.accepted] == [batch[2].id] and report.duplicates == 3
    assert counted == {"hashes": 4, "verifies": 1}  # one hash per body received, no second one


async def test_stored_records_are_filed_under_their_type_and_id(store):
    batch = [lesson("a lesson"), lesson("another lesson")]
    await intake(store, [(s.body, s.signature) for s in batch])
    assert await record_store.check_invariants(store) == (2, [])
    assert await record_store.counts_by_type(store) == {"revocation": 0, "vouch": 0, "lesson": 2, "verification": 0}


async def test_a_body_whose_type_cannot_be_read_is_refused_as_invalid(store):
    good = lesson("fine")
    report = await intake(store, [(b"\x80", good.signature), (good.body, good.signature)])
    assert report.invalid == 1 and [s.id for s in report.accepted] == [good.id]


def test_the_gossip_path_hashes_each_body_it_receives_once(counted):
    net = b"\x01" * 32
    params = GossipParams(sync_on_open=False)
    a, b = (GossipNode(net, bytes([n]) * 32, random.Random(n), params=params, now=NOW) for n in (1, 2))
    sent = [lesson(f"pip install fails, case {i}", network=net) for i in range(20)]
    a.load(sent)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    counted["hashes"] = 0
    assert pair.b_session.start_sync(NOW)
    pair.run(NOW)
    assert b.keys() == a.keys() and b.statistics().bodies_received == len(sent)
    assert counted["hashes"] == len(sent)


async def test_the_dedupe_lookup_finds_records_and_refusals_held_and_nothing_else(store, monkeypatch):
    held, refused, new = lesson("held"), lesson("refused"), lesson("new")
    await intake(store, [(held.body, held.signature)])
    await record_store.add_refused(store, [(refused.key, "not wanted")], NOW)
    asked = [new.key, held.key, refused.key, new.key, b"\x02" + bytes(32)]
    assert await record_store.known_keys(store, asked) == {held.key, refused.key}
    monkeypatch.setattr(record_store, "DEDUPE_CHUNK", 2)  # the same across lookups of a few keys each
    assert await record_store.known_keys(store, asked) == {held.key, refused.key}
    assert await record_store.known_keys(store, []) == set()
