"""Intake stays in proportion to what arrived (issue #18): a batch from a peer costs the same
store reads whether the node holds hundreds of records or thousands, and what it concludes is
what a full evaluation of everything held concludes."""

from __future__ import annotations

import bisect
import random

import nacl.signing
from blake3 import blake3

from commons.config import Config
from commons.core.records import Lesson, LessonKind, Outcome, Prediction, Scope, Verification, day_of, sign
from commons.core.trust.evaluation import evaluate
from commons.home import Home
from commons.identity import Identity
from commons.node.context import NodeContext
from commons.node.revocation import after_intake
from commons.store import records as record_store
from commons.store.db import Store
from commons.store.record_reader import RecordReader

NETWORK = Config().network.key_bytes
NOW = 20_000 * 86400.0
DAY = day_of(NOW)
AUTHORS = [nacl.signing.SigningKey(blake3(b"intake-author" + bytes([n])).digest()) for n in range(12)]


def lesson(n: int) -> object:
    key = AUTHORS[n % len(AUTHORS)]
    return sign(Lesson(network=NETWORK, author=bytes(key.verify_key), created=DAY, kind=LessonKind.ERROR,
                       text=f"pip install {n} fails behind the proxy.", scope=Scope.SHARED, topics=("pip",),
                       prediction=Prediction(f"installing {n}", f"error {n}")), key)


def verification(n: int, target) -> object:
    key = AUTHORS[(n * 7 + 3) % len(AUTHORS)]
    return sign(Verification(network=NETWORK, author=bytes(key.verify_key), created=DAY, lesson=target.id,
                             outcome=Outcome.CONFIRMED, evidence=blake3(b"evidence%d" % n).digest(),
                             received=DAY, observed=DAY, naive=True), key)


def holdings(size: int) -> list:
    lessons = [lesson(n) for n in range(size // 2)]
    return lessons + [verification(n, lessons[n % len(lessons)]) for n in range(size - len(lessons))]


class Counting:
    """Counts the rows a store hands back (every query goes through fetchall or fetchone)."""

    def __init__(self, store: Store) -> None:
        self.rows = 0
        fetchall, fetchone = store.fetchall, store.fetchone

        async def counted_all(sql, params=()):
            rows = await fetchall(sql, params)
            self.rows += len(rows)
            return rows

        async def counted_one(sql, params=()):
            row = await fetchone(sql, params)
            self.rows += row is not None
            return row

        store.fetchall, store.fetchone = counted_all, counted_one

    def reading(self, reader: RecordReader) -> None:
        """Count the rows read through the node's record reader too (records shown, read in place)."""
        get, get_many = reader.get, reader.get_many

        def counted_get(key):
            found = get(key)
            self.rows += found is not None
            return found

        def counted_many(keys):
            found = get_many(keys)
            self.rows += len(found)
            return found

        reader.get, reader.get_many = counted_get, counted_many


async def reads_for_one_batch(tmp_path, size: int) -> tuple[int, object]:
    me = Identity(bytes(range(32)), bytes(range(1, 33)), bytes(32))
    node = NodeContext.for_node(Config(), Home(tmp_path / "config", tmp_path / "data"), me)
    async with await Store.open(tmp_path / "commons.db") as store:
        held = holdings(size)
        await record_store.add_received(store, held, NOW)
        await after_intake(store, node, NOW, held)  # the first look reads everything, once
        fresh = [lesson(10_000 + n) for n in range(10)] + [verification(10_000 + n, held[n]) for n in range(10)]
        await record_store.add_received(store, fresh, NOW + 60)
        counter = Counting(store)
        counter.reading(node.trust._reader)
        effect = await after_intake(store, node, NOW + 60, fresh)
        view = (await node.trust.held(store, NOW + 60)).view
        assert view == evaluate(held + fresh, me=me.author_public, policy=node.trust.policy, today=DAY)
        return counter.rows, effect


async def test_store_reads_per_received_batch_do_not_grow_with_the_store(aio, tmp_path):
    small, small_effect = await reads_for_one_batch(tmp_path / "small", 200)
    large, large_effect = await reads_for_one_batch(tmp_path / "large", 3000)
    assert small == large and small < 100
    assert small_effect.render is None and large_effect.render is None  # no status shown changed


def test_the_key_set_answers_positions_ranges_and_fingerprints_as_a_sorted_list_does_across_blocks():
    """The key set a node reconciles with keeps its items in blocks so that taking in a record
    does not cost O(held) at the next fingerprint; what it answers is the flat sorted list's."""

    from commons.core.reconcile import keyset as ks

    rng = random.Random(7)
    keyset, reference = ks.KeySet(), {}
    def key(n: int) -> bytes:
        return bytes([ks.TAG_LESSON]) + blake3(b"k%d" % n).digest()
    keyset.update([(key(n), n % 3) for n in range(700)])
    reference.update({key(n): n % 3 for n in range(700)})
    for step in range(6000):  # enough to split blocks many times, and to empty some
        n = rng.randrange(5000)
        if rng.random() < 0.25:
            keyset.discard(key(n))
            reference.pop(key(n), None)
        else:
            keyset.add(key(n), time=n % 5)
            reference[key(n)] = n % 5
        if step % 500 == 0 or step == 5999:
            items = sorted(ks.make_item(t, k) for k, t in reference.items())
            assert len(keyset) == len(items) and list(keyset) == [i[ks.TIME_SIZE:] for i in items]
            for _ in range(20):
                start = rng.randrange(len(items) + 1)
                end = rng.randrange(start, len(items) + 2)
                assert keyset.items_between(start, end) == items[start:end]
                assert keyset.fingerprint_between(start, min(end, len(items))) == ks.fingerprint(items[start:end])
                bound = rng.choice(items)[: rng.randrange(1, ks.ITEM_SIZE + 1)]
                assert keyset.position(bound) == bisect.bisect_left(items, bound)
    assert len(keyset._blocks) > 2


def test_a_gossip_node_lets_stored_records_go_from_memory_and_serves_them_from_the_store():
    import gc
    import weakref

    from commons.core.gossip.node import GossipNode, GossipParams
    from commons.core.gossip.memnet import PeerPair
    from commons.store.record_reader import Wire

    disk: dict[bytes, Wire] = {}
    held = holdings(30)
    wires = {s.key: Wire(s.body, s.signature) for s in held}
    params = GossipParams(sync_on_open=False)
    a = GossipNode(NETWORK, bytes([1]) * 32, random.Random(1), params=params, now=NOW,
                   read_stored=disk.get)
    b = GossipNode(NETWORK, bytes([2]) * 32, random.Random(2), params=params, now=NOW)
    a.load(held)
    disk.update(wires)
    a.stored(s.key for s in held[:25])  # the last five are not stored yet: they stay in memory
    alive = [weakref.ref(s) for s in held]
    del held
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 5
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    assert pair.b_session.start_sync(NOW)
    pair.run(NOW)
    assert sorted(b.keys()) == sorted(wires)
    assert all((b.get(k).body, b.get(k).signature) == wires[k] for k in wires)
    assert all(a.get(k).body == wires[k].body for k in wires)  # read back and decoded when asked


def test_a_catch_up_takes_one_reconciliation_however_many_anti_entropy_rounds_fall_due_meanwhile():
    """A node catching up fetches what one reconciliation named; a periodic round with that peer
    while it still fetches (either way) would name it all again, every sync_interval."""
    from commons.core.gossip.node import GossipNode, GossipParams
    from commons.core.gossip.memnet import PeerPair

    params = GossipParams(sync_interval=1.0, sync_jitter=0.0, max_outstanding=8, max_queued_wants=16,
                          records_per_second=50.0, records_burst=50)
    a = GossipNode(NETWORK, bytes([1]) * 32, random.Random(1), params=params, now=NOW)
    b = GossipNode(NETWORK, bytes([2]) * 32, random.Random(2), params=params, now=NOW)
    held = holdings(400)
    a.load(held)
    pair = PeerPair(b, a, NOW)  # b dials, and reconciles at once
    now = NOW
    while len(b.record_keys()) < len(held) and now < NOW + 60:
        now += 0.25  # at 50 records a second, 400 take 8 s: 8 anti-entropy rounds fall due
        a.tick(now)
        b.tick(now)
        pair.run(now)
    assert len(b.record_keys()) == len(held)
    assert a.statistics().syncs_completed + b.statistics().syncs_completed == 1


async def test_a_received_batch_says_whether_another_commit_lies_between_it_and_the_last_one_seen(aio, tmp_path):
    # The daemon follows the CLI's commits by seq (announcing what a sleep signed while it ran): it may
    # skip past its own batch only when nothing else was committed in between, or those are never sent.
    async with await Store.open(tmp_path / "commons.db") as store:
        before, seen = await record_store.add_received(store, [lesson(1), lesson(2)], NOW)
        assert before == 0 and seen == await record_store.last_seq(store) > 0
        await record_store.add_own(store, [lesson(3)], NOW)  # the CLI's sleep, meanwhile
        before, after = await record_store.add_received(store, [lesson(4)], NOW)
        assert before > seen and after > before  # the caller must not move its mark past lesson(3)
        last, fresh = await record_store.since(store, seen, ("own", "import"))
        assert [s.id for s in fresh] == [lesson(3).id] and last == after
