"""Records a reconciliation says the peer lacks are pushed, not fetched by key; a push never lets a
peer send more, or more cheaply, than fetching would have, and a lost push is found again."""

from __future__ import annotations

import dataclasses

import pytest

from commons.core import records as rec
from commons.core.gossip.node import GossipParams
from commons.core.gossip.messages import Records, Want, decode, encode
from commons.core.gossip.memnet import PeerPair
from tests.test_gossip import DAY, NOW, lesson, node, signing_key


def frames_of(pair: PeerPair, kind: type) -> list:
    """Move frames both ways until quiet, returning the messages of ``kind`` that went by."""
    return [m for m in deliver(pair) if isinstance(m, kind)]


def test_a_node_that_lacks_records_is_pushed_them_without_asking_or_penalty():
    a, b = node(1), node(2)
    b.load([lesson(i) for i in range(30)])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    wants = frames_of(pair, Want)
    assert len(a.record_keys()) == 30
    assert wants == []  # nothing was asked for by key
    assert pair.a_session.score == 0 and not pair.a_session.closed


def test_records_beyond_what_a_peer_announced_cost_what_unrequested_records_cost():
    params = GossipParams(sync_on_open=False, records_per_second=10, records_burst=20)
    a, b = node(1, params=params), node(2)
    b.load([lesson(i) for i in range(10)])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    pair.run(NOW)
    assert len(a.record_keys()) == 10 and pair.a_session.score == 0  # announced: taken
    # The peer announced 10 places, all used: 40 more in the same range are unrequested. The
    # 10 tokens left take 10 of them; the rest is beyond the rate limit and penalised.
    extra = [lesson(i) for i in range(100, 140)]
    for i in range(0, 40, 10):
        pair.a_session.receive(encode(Records(tuple((r.body, r.signature) for r in extra[i : i + 10]))), NOW)
    assert len(a.record_keys()) <= 20
    assert pair.a_session.closed and pair.a_session.misbehaved


def test_a_push_lost_with_its_session_is_found_by_the_next_reconciliation():
    a, b = node(1), node(2)
    held = [lesson(i) for i in range(30)]
    b.load(held)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    for _ in range(3):  # a's IdList goes, b's Diff comes back; b's Records are lost with the link
        for src in (pair.a, pair.b):
            for session, frames in src.drain_outboxes():
                for frame in frames:
                    if not isinstance(decode(frame, src.params.max_frame_bytes), Records):
                        session.context.receive(frame, NOW)
    assert a.record_keys() == set()
    pair.a_session.connection_lost(NOW)
    pair.b_session.connection_lost(NOW)
    again = PeerPair(a, b, NOW + 1)
    again.run(NOW + 1)
    again.a_session.start_sync(NOW + 1)
    again.run(NOW + 1)
    assert a.record_keys() == {r.key for r in held}


@pytest.mark.parametrize("day", [5, 200, DAY, 70_000])
def test_the_created_day_is_read_from_the_end_of_a_canonical_body(day):
    signed = rec.sign(dataclasses.replace(lesson(0).record, created=day), signing_key(7))
    vouch = rec.sign(rec.Vouch(network=signed.record.network, author=signed.record.author,
                               subject=bytes(32), created=day), signing_key(7))
    assert rec.peek_created(signed.body) == day and rec.peek_created(vouch.body) == day
    assert rec.peek_created(signed.body + b"\x00") is None  # not a body's end: not read as one


def two_peers(b_params: GossipParams | None = None, c_holds: bool = True):
    """a lacking 30 records that b holds (and c, with ``c_holds``), connected to both."""
    a, b, c = node(1), node(2, **({"params": b_params} if b_params else {})), node(3)
    held = [lesson(i) for i in range(30)]
    b.load(held)
    if c_holds:
        c.load(held)
    with_b, with_c = PeerPair(a, b, NOW), PeerPair(a, c, NOW)
    with_b.run(NOW)
    with_c.run(NOW)
    return a, c, held, with_b, with_c


def test_a_node_reconciling_with_two_peers_at_once_asks_only_one_to_push():
    a, _, held, with_b, with_c = two_peers()
    with_b.a_session.start_sync(NOW)
    with_c.a_session.start_sync(NOW)  # b is still reconciling: c is asked to name, not push
    for _ in range(10):
        with_b.run(NOW)
        with_c.run(NOW)
    stats = a.statistics()
    assert a.record_keys() == {r.key for r in held}
    assert stats.bodies_received == 30 and stats.duplicate_bodies == 0


def test_a_push_of_more_records_than_one_message_holds_goes_in_messages_a_peer_accepts():
    # A catch-up with the rate limit lifted pushes far more than a window of Wants at once: each
    # Records message must still hold at most MAX_RECORDS, or the receiver cuts the sender off.
    from commons.core.gossip.messages import MAX_RECORDS

    params = GossipParams(sync_on_open=False, records_per_second=1e6, records_burst=10_000, max_frame_bytes=1 << 20)
    a, b = node(1, params=params), node(2, params=params)
    b.load([lesson(i) for i in range(3 * MAX_RECORDS)])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    sent = frames_of(pair, Records)
    assert len(a.record_keys()) == 3 * MAX_RECORDS
    assert sent and max(len(m.records) for m in sent) <= MAX_RECORDS
    assert not pair.a_session.closed and not pair.b_session.closed and pair.b_session.score == 0


def deliver(pair: PeerPair, hold: list | None = None, now: float = NOW) -> list:
    """Move frames both ways until quiet; Records from b to a go into ``hold`` (undelivered)
    when it is given. Returns every message that went by, in order."""
    seen = []
    while True:
        moved = 0
        for src in (pair.a, pair.b):
            for session, frames in src.drain_outboxes():
                for frame in frames:
                    message = decode(frame, src.params.max_frame_bytes)
                    moved += 1
                    if hold is not None and src is pair.b and isinstance(message, Records):
                        hold.append(frame)
                        continue
                    seen.append(message)
                    session.context.receive(frame, now)
        if not moved:
            return seen


def test_keys_a_second_peer_names_where_the_first_pushes_wait_for_the_push_and_arrive_once():
    a, _, held, with_b, with_c = two_peers()
    with_b.a_session.start_sync(NOW)  # a asks b to push what it lacks
    pushed: list[bytes] = []
    deliver(with_b, hold=pushed)  # b's Diff announced 30 pushes; the records are still on the way
    assert with_b.a_session.awaiting_pushes and pushed
    with_c.a_session.start_sync(NOW)  # c reconciles meanwhile: it names the 30 keys
    to_c = [m for m in deliver(with_c) if isinstance(m, Want)]
    assert to_c == [] and len(a.record_keys()) == 0  # named inside b's push: not asked of c
    for frame in pushed:
        with_b.a_session.receive(frame, NOW)
    deliver(with_b)
    deliver(with_c)
    stats = a.statistics()
    assert a.record_keys() == {r.key for r in held}
    assert stats.bodies_received == 30 and stats.duplicate_bodies == 0 and stats.wanted == 0


def test_a_record_that_arrives_from_another_peer_is_announced_to_the_pusher_which_names_it_instead():
    slow = GossipParams(sync_on_open=False, records_per_second=1, records_burst=20)
    a, c, held, with_b, with_c = two_peers(b_params=slow, c_holds=False)
    with_b.a_session.start_sync(NOW)
    deliver(with_b)  # b pushes what its serving rate allows and keeps the rest for later
    first = len(a.record_keys())
    assert 0 < first < 30 and with_b.a_session.awaiting_pushes
    c.add_local(*held)  # c has them too and announces them: a fetches the rest from c
    deliver(with_c)
    assert a.record_keys() == {r.key for r in held}
    later = NOW + 20  # b's bucket refills: what a said it holds is named, not pushed
    with_b.b.tick(later)
    names = [m for m in deliver(with_b) if isinstance(m, Records)]
    assert names and all(m.records == () for m in names)
    assert sum(len(m.missing) for m in names) == 30 - first
    assert a.statistics().duplicate_bodies == 0 and not with_b.a_session.awaiting_pushes


def test_a_push_longer_than_the_reconcile_timeout_is_waited_for_while_its_records_keep_coming():
    # b pushes a record every 2 s; a waits reconcile_timeout (30 s) from the last one, not from
    # the Diff: a push given up half way would leave a reconciling again for what is still coming.
    slow = GossipParams(sync_on_open=False, records_per_second=0.5, records_burst=12)
    a, _, held, with_b, _ = two_peers(b_params=slow, c_holds=False)
    with_b.a_session.start_sync(NOW)
    deliver(with_b)
    def sessions_tick(second: int) -> None:  # the sessions' timers only: no anti-entropy round
        with_b.a_session.tick(NOW + second)
        with_b.b_session.tick(NOW + second)
        deliver(with_b, now=NOW + second)

    for second in range(1, 46):
        sessions_tick(second)
    assert 5 < len(a.record_keys()) < 30 and with_b.a_session.reconciling  # still waited for at 45 s
    for second in range(46, 80):
        sessions_tick(second)
    stats = a.statistics()
    assert a.record_keys() == {r.key for r in held} and stats.wanted == 0 and stats.duplicate_bodies == 0
    assert with_b.a_session.score == 0


def test_a_record_the_peer_asked_for_while_a_push_to_it_waits_is_sent_once():
    slow = GossipParams(sync_on_open=False, records_per_second=1, records_burst=20)
    a, _, held, with_b, _ = two_peers(b_params=slow, c_holds=False)
    with_b.a_session.start_sync(NOW)
    deliver(with_b)  # b pushed what its rate allowed; 20 wait in its push buffer
    first = len(a.record_keys())
    waiting = [r.key for r in held if r.key not in a.record_keys()]
    with_b.b_session.receive(encode(Want(tuple(waiting[:5]))), NOW)  # a asks b for 5 of them by key
    for second in range(1, 60):
        with_b.b_session.tick(NOW + second)
        deliver(with_b, now=NOW + second)
    assert a.record_keys() == {r.key for r in held}
    assert with_b.b_session.take_served() == 30  # each record sent once: 5 asked, the rest pushed
    assert not with_b.a_session.awaiting_pushes and first < 30
