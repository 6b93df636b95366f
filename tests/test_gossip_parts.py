"""Each part of the gossip session and node, built alone on a small fake host.

A session is a ``RecordTransfer`` and a ``SessionSync`` behind ``PeerSession``; a node is a
``FetchBook`` and a ``RecordIntake`` behind ``GossipNode``. Each is handed what it needs through a
small protocol, so each is driven here with nothing else of gossip around it.
"""

from __future__ import annotations

import math
import random

import pytest

from commons.core import records as rec
from commons.core.gossip.events import Accepted, Refused
from commons.core.gossip.fetch import FetchBook
from commons.core.gossip.intake import RecordIntake
from commons.core.gossip.messages import Reconcile, ReconcilePhase, Records, Want
from commons.core.gossip.peers import GossipParams
from commons.core.gossip.state import CloseKind, SessionState
from commons.core.gossip.sync import SessionSync
from commons.core.gossip.transfer import RecordTransfer
from commons.core.reconcile import KeySet, ReconcileStep, make_item
from commons.core.reconcile.push import Expectation
from tests.test_gossip import DAY, NET, NOW, lesson, revocation

# -- RecordTransfer ------------------------------------------------------------------------------


class TransferHostFake:
    """A session as its transfer sees it: it records what the transfer asks."""

    def __init__(self, records: dict[bytes, rec.SignedRecord] | None = None) -> None:
        self.records = records or {}
        self.sent: list[object] = []
        self.taken: list[tuple[list[tuple[bytes, bytes]], list[bytes | None]]] = []
        self.fetched: list[bytes] = []
        self.released: list[bytes] = []
        self.penalties: list[tuple[float, str]] = []
        self.refused_claims: set[bytes] = set()
        self.awaited = False  # another peer's announced push remains to arrive
        self.elsewhere: set[bytes] = set()  # items another peer's push may still bring
        self.syncing = False
        self.syncs_started = 0
        self.settled = 0
        self.closed = False

    def send(self, message):
        self.sent.append(message)

    def penalise(self, amount, reason, now):
        self.penalties.append((amount, reason))

    def start_sync(self, now):
        self.syncs_started += 1
        return True

    def record_for(self, key):
        return self.records.get(key)

    def take_records(self, bodies, now, keys):
        self.taken.append((bodies, keys))

    def fetch(self, keys):
        self.fetched.extend(keys)

    def claim(self, key):
        return key not in self.refused_claims

    def release(self, key, now):
        self.released.append(key)
        return True

    def push_awaited(self):
        return self.awaited

    def pushed_elsewhere(self, item):
        return item in self.elsewhere

    def pushes_settled(self, now):
        self.settled += 1


def transfer(params: GossipParams | None = None, keyset: KeySet | None = None, spill_keys: int = 1 << 20,
             records=()) -> tuple[RecordTransfer, TransferHostFake]:
    host = TransferHostFake({r.key: r for r in records})
    return RecordTransfer(host, params or GossipParams(), keyset or KeySet(), NOW, spill_keys=spill_keys), host


def wire(*records: rec.SignedRecord) -> tuple[tuple[bytes, bytes], ...]:
    return tuple((r.body, r.signature) for r in records)


def test_transfer_asks_for_claimed_keys_up_to_max_outstanding_in_one_want():
    part, host = transfer(GossipParams(max_outstanding=3))
    keys = sorted(lesson(i).key for i in range(5))
    for key in reversed(keys):
        assert part.queue_want(key)
    host.refused_claims = {keys[1]}  # held meanwhile, or asked of another peer
    part.pump(NOW)
    assert host.sent == [Want((keys[0], keys[2], keys[3]))]  # in key order, revocations first
    assert part.asked(keys[0]) and not part.asked(keys[1]) and part.fetching
    assert part.pending == 4  # three asked, one still queued


def test_transfer_spills_named_keys_beyond_its_queue_and_feeds_them_back_as_the_queue_drains():
    part, host = transfer(GossipParams(max_queued_wants=2), spill_keys=3)
    named = [lesson(i) for i in range(6)]
    taken = [part.queue_want(r.key, spill=True) for r in named]
    assert taken == [True, True, False, False, False, False]  # two queued, three spilled, one forgotten
    assert part.pending == 5
    part.pump(NOW)  # asks for the two queued
    part.take(Records(wire(named[0], named[1])), NOW)
    part.pump(NOW)
    assert host.fetched == [named[2].key, named[3].key]  # a queueful more, handed back to be queued
    assert part.drop_spill() and part.pending == 0


def test_transfer_reconciles_again_once_keys_it_had_no_room_for_were_dropped_and_the_queue_drained():
    part, host = transfer(GossipParams(max_queued_wants=1), spill_keys=0)
    first, second = lesson(0), lesson(1)
    assert part.queue_want(first.key) and not part.queue_want(second.key)
    part.pump(NOW)
    assert host.syncs_started == 0  # still waiting for what it asked
    part.take(Records(wire(first)), NOW)
    host.syncing = True
    part.pump(NOW)
    assert host.syncs_started == 0  # a reconciliation of ours runs: it will name the key
    host.syncing = False
    part.pump(NOW)
    part.pump(NOW)
    assert host.syncs_started == 1  # once, not on every pump


def test_transfer_serves_held_keys_and_names_the_rest_missing_beyond_the_serving_rate():
    held = {r.key: r for r in (lesson(i) for i in range(3))}
    part, host = transfer(GossipParams(records_burst=2), records=held.values())
    asked = sorted([*held, lesson(99).key])  # answered in key order; the last key is held by no one
    part.serve(tuple(reversed(asked)), NOW)
    served = [k for k in asked if k in held][:2]  # two serving tokens
    assert host.sent == [Records(wire(*(held[k] for k in served)), tuple(k for k in asked if k not in served))]
    assert part.take_served() == 2 and part.take_served() == 0


def test_transfer_takes_asked_records_freely_and_penalises_unsolicited_ones_beyond_the_rate():
    asked, unasked, copy = lesson(0), lesson(1), lesson(2)
    keyset = KeySet()
    keyset.add(copy.key, time=DAY)
    part, host = transfer(GossipParams(records_burst=1), keyset=keyset)
    part.queue_want(asked.key)
    part.pump(NOW)  # the one token pays for the Want
    part.take(Records(wire(asked, unasked, copy)), NOW)
    assert host.taken == [([(asked.body, asked.signature), (copy.body, copy.signature)], [asked.key, copy.key])]
    assert host.penalties == [(GossipParams().penalty_minor, "records beyond the rate limit")]
    assert not part.asked(asked.key)


def test_transfer_hands_a_want_back_when_the_peer_does_not_answer_in_time():
    params = GossipParams()
    part, host = transfer(params)
    key = lesson(0).key
    part.queue_want(key)
    part.pump(NOW)
    assert part.next_deadline() == NOW + params.want_timeout
    part.expire_wants(NOW + params.want_timeout - 0.5)
    assert host.released == []
    part.expire_wants(NOW + params.want_timeout)
    assert host.released == [key] and not part.asked(key) and part.next_deadline() == math.inf


def test_transfer_holds_back_named_keys_that_another_peers_push_may_bring():
    part, host = transfer()
    near, far = lesson(0), lesson(1)
    items = [make_item(DAY, near.key), make_item(DAY, far.key)]
    host.awaited, host.elsewhere = True, {items[1]}
    part.fetch_named([near.key, far.key], items)
    assert host.fetched == [near.key] and part.pending == 1  # far waits, held back
    part.pump(NOW)
    assert host.fetched == [near.key]  # the push is still awaited
    host.awaited = False
    part.pump(NOW)
    assert host.fetched == [near.key, far.key]


def test_transfer_pushes_what_a_reconciliation_named_except_what_the_peer_says_it_holds():
    sent, held_by_peer = lesson(0), lesson(1)
    part, host = transfer(records=[sent, held_by_peer])
    part.push([sent.key, held_by_peer.key])
    part.peer_holds([held_by_peer.key])  # its Announce crossed our push
    part.pump(NOW)
    assert host.sent == [Records(wire(sent), (held_by_peer.key,))]
    assert part.take_served() == 1


def test_transfer_takes_pushes_into_announced_places_and_settles_when_the_last_one_came():
    pushed = sorted((lesson(i) for i in range(2)), key=lambda r: r.key)
    part, host = transfer()
    lower = make_item(DAY, pushed[0].key)
    part.expect([Expectation(lower, None, 2)], NOW)
    assert part.awaiting_pushes and part.may_push(make_item(DAY, pushed[1].key))
    assert part.next_deadline() == NOW + GossipParams().reconcile_timeout
    part.take(Records(wire(pushed[0])), NOW + 1)
    assert part.awaiting_pushes and host.settled == 0
    part.take(Records(wire(pushed[1])), NOW + 2)
    assert not part.awaiting_pushes and host.settled == 1
    assert [keys for _, keys in host.taken] == [[pushed[0].key], [pushed[1].key]]


def test_transfer_stops_waiting_for_a_push_that_does_not_finish_in_time():
    part, host = transfer()
    part.expect([Expectation(make_item(DAY, lesson(0).key), None, 3)], NOW)
    part.expire_pushes(NOW + GossipParams().reconcile_timeout - 1)
    assert part.awaiting_pushes
    part.expire_pushes(NOW + GossipParams().reconcile_timeout)
    assert not part.awaiting_pushes and host.settled == 1


# -- SessionSync ---------------------------------------------------------------------------------


class SyncHostFake:
    """A session as its reconciliations see it; ``peer`` is the other side's SessionSync."""

    def __init__(self, push_welcome: bool = False) -> None:
        self.welcome = push_welcome
        self.peer: SessionSync | None = None
        self.outbox: list[Reconcile] = []
        self.named: list[bytes] = []
        self.expected: list[Expectation] = []
        self.pushed: list[bytes] = []
        self.reconciled_as: list[bool] = []
        self.penalties: list[tuple[float, str]] = []
        self.ended: list[tuple[str, CloseKind]] = []

    def send(self, message):
        self.outbox.append(message)

    def penalise(self, amount, reason, now):
        self.penalties.append((amount, reason))

    def end(self, reason, now, kind, send_bye=True):
        self.ended.append((reason, kind))

    def push_welcome(self):
        return self.welcome

    def fetch_named(self, keys, items):
        assert len(keys) == len(items)
        self.named.extend(keys)

    def expect_pushes(self, expectations, now):
        self.expected.extend(expectations)

    def push(self, keys):
        self.pushed.extend(keys)

    def reconciled(self, ours, now):
        self.reconciled_as.append(ours)


def keyset_of(records) -> KeySet:
    keys = KeySet()
    keys.update((r.key, r.record.created) for r in records)
    return keys


def sync_pair(a_records, b_records, push_welcome=False):
    hosts = SyncHostFake(push_welcome), SyncHostFake(push_welcome)
    parts = (SessionSync(hosts[0], GossipParams(), keyset_of(a_records)),
             SessionSync(hosts[1], GossipParams(), keyset_of(b_records)))
    hosts[0].peer, hosts[1].peer = parts[1], parts[0]
    return parts, hosts


def deliver(hosts, now=NOW):
    """Move Reconcile messages between the two sides until neither sends any."""
    while any(h.outbox for h in hosts):
        for host in hosts:
            out, host.outbox = host.outbox, []
            for message in out:
                host.peer.receive(message, now)


def test_two_session_syncs_name_what_each_side_lacks_and_finish():
    records = [lesson(i) for i in range(40)]
    a_only, shared, b_only = records[:10], records[10:30], records[30:]
    (a, b), (ha, hb) = sync_pair(a_only + shared, shared + b_only)
    assert a.start(NOW) and a.syncing and not a.start(NOW)  # one of ours at a time
    assert ha.outbox[0].phase is ReconcilePhase.START
    deliver((ha, hb))
    assert sorted(ha.named) == sorted(r.key for r in b_only)
    assert sorted(hb.named) == sorted(r.key for r in a_only)
    assert ha.reconciled_as == [True] and hb.reconciled_as == [False]
    assert not a.running and not b.running and ha.penalties == hb.penalties == []


def test_a_session_sync_that_asks_for_a_push_is_told_where_records_come_and_the_peer_what_to_push():
    records = [lesson(i) for i in range(30)]
    (a, b), (ha, hb) = sync_pair(records[:10], records, push_welcome=True)
    a.start(NOW)
    assert a.asked_push
    deliver((ha, hb))
    assert sorted(hb.pushed) == sorted(r.key for r in records[10:])
    assert sum(e.count for e in ha.expected) == 20 and ha.named == []


def test_a_session_sync_drops_a_malformed_reconciliation_with_a_penalty():
    (a, _), (ha, _) = sync_pair([], [])
    a.start(NOW)
    a.receive(Reconcile(ReconcilePhase.RESPONDER, bytes([3]) + b"\xff" * 8), NOW)
    assert not a.syncing
    assert ha.penalties and ha.penalties[0][0] == GossipParams().penalty_malformed
    assert ha.penalties[0][1].startswith("reconcile: ")


def test_a_session_sync_ends_the_session_as_incompatible_on_another_reconcile_version():
    (_, b), (_, hb) = sync_pair([], [])
    b.receive(Reconcile(ReconcilePhase.START, bytes([9])), NOW)
    assert len(hb.ended) == 1 and hb.ended[0][1] is CloseKind.INCOMPATIBLE and hb.penalties == []


def test_a_session_sync_gives_up_on_a_reconciliation_past_its_deadline_without_a_penalty():
    (a, _), (ha, _) = sync_pair([lesson(0)], [])
    a.start(NOW)
    deadline = NOW + GossipParams().reconcile_timeout
    assert a.deadline == deadline
    a.expire(deadline - 1)
    assert a.syncing
    a.expire(deadline)
    assert not a.syncing and a.deadline == math.inf and ha.penalties == []
    a.receive(Reconcile(ReconcilePhase.RESPONDER, b"\x03"), deadline + 1)  # its late answer is ignored
    assert ha.penalties == [] and ha.named == []


def test_a_session_sync_runs_whatever_reconciliation_its_factory_makes():
    key = lesson(0).key
    made = []

    class Scripted:
        def initiate(self):
            return b"first"

        def reconcile(self, message):
            return ReconcileStep(reply=b"reply:" + message, need=[key], need_items=[make_item(DAY, key)], done=True)

    def factory(keyset, *, frame_size_limit, ask_push, peer_speaks_v4, salt):
        made.append((frame_size_limit, ask_push, peer_speaks_v4))
        return Scripted()

    host = SyncHostFake(push_welcome=True)
    part = SessionSync(host, GossipParams(), KeySet(), reconciler=factory)
    part.receive(Reconcile(ReconcilePhase.START, b"hi"), NOW)
    assert made == [(GossipParams().reconcile_frame_bytes, True, False)]
    assert host.outbox == [Reconcile(ReconcilePhase.RESPONDER, b"reply:hi")]
    assert host.named == [key] and host.reconciled_as == [False] and not part.running


# -- FetchBook -----------------------------------------------------------------------------------


class SessionFake:
    """A session as the fetch book and intake see it."""

    def __init__(self, n: int, room: int = 100) -> None:
        self.peer_key = bytes([n]) * 32
        self.state = SessionState.OPEN
        self.closed = False
        self.room = room
        self.queued: list[bytes] = []
        self.asked_keys: set[bytes] = set()
        self.pumped = 0
        self.syncs = 0
        self.syncing = False
        self.fetching = False
        self.push_pending = False
        self.awaiting_pushes = False
        self.push_items: set[bytes] = set()
        self.contributed = False
        self.penalties: list[tuple[float, str]] = []
        self.announced: list[bytes] = []

    def queue_want(self, key, spill=False):
        if key in self.queued:
            return True
        if len(self.queued) >= self.room:
            return False
        self.queued.append(key)
        return True

    def pump(self, now):
        self.pumped += 1

    def asked(self, key):
        return key in self.asked_keys

    def may_push(self, item):
        return item in self.push_items

    def start_sync(self, now):
        self.syncs += 1
        self.syncing = True
        return True

    def drop_wants(self):
        keys, self.queued = self.queued, []
        return keys

    def drop_spill(self):
        return False

    def penalise(self, amount, reason, now):
        self.penalties.append((amount, reason))

    def enqueue_announce(self, key):
        self.announced.append(key)


def book(*sessions: SessionFake, keyset: KeySet | None = None) -> FetchBook:
    table = {s.peer_key: s for s in sessions}
    return FetchBook(keyset or KeySet(), table, GossipParams(), random.Random(1))


def test_fetch_book_asks_one_peer_at_a_time_and_hands_the_key_to_a_fallback():
    a, b = SessionFake(1), SessionFake(2)
    fetches = book(a, b)
    key = lesson(0).key
    fetches.learn([key], a)
    fetches.learn([key], b)
    assert a.queued == [key] and b.queued == [key] and fetches.wanted == 1
    assert fetches.claim(key, a)
    a.asked_keys.add(key)
    assert not fetches.claim(key, b)  # asked of a: b stays a fallback
    assert fetches.release(key, a, NOW)  # a answered "missing"
    assert b.pumped == 1 and fetches.claim(key, b)


def test_fetch_book_reconciles_with_another_peer_when_no_source_is_left_at_most_once_a_sync_interval():
    a, c = SessionFake(1), SessionFake(3)
    fetches = book(a, c)
    key = lesson(0).key
    fetches.learn([key], a)
    assert not fetches.release(key, a, NOW)
    assert c.syncs == 1 and a.syncs == 0 and fetches.wanted == 0
    c.syncing = False
    fetches.learn([key], a)
    fetches.release(key, a, NOW + 1)
    assert c.syncs == 1  # not twice for one key within sync_interval
    fetches.learn([key], a)
    fetches.release(key, a, NOW + GossipParams().sync_interval)
    assert c.syncs == 2


def test_fetch_book_counts_announced_keys_and_does_not_remember_what_a_full_queue_drops():
    held, new, dropped = lesson(0).key, lesson(1).key, lesson(2).key
    keyset = KeySet()
    keyset.add(held, time=DAY)
    a, b = SessionFake(1), SessionFake(2, room=0)
    fetches = book(a, b, keyset=keyset)
    fetches.learn([held, new], a)
    fetches.learn([dropped], b)
    assert (fetches.announced_keys_received, fetches.duplicate_announced_keys) == (3, 1)
    assert fetches.wanted == 1 and fetches.forget(new) == (a,) and fetches.wanted == 0
    fetches.learn([held], a, count=False)  # a reconciliation's names are not counted as announced
    assert fetches.announced_keys_received == 3


def test_fetch_book_welcomes_a_push_only_while_no_other_peer_pushes_and_nothing_is_being_fetched():
    a, b = SessionFake(1), SessionFake(2)
    fetches = book(a, b)
    assert fetches.push_welcome(a)
    b.push_pending = True
    assert not fetches.push_welcome(a) and fetches.push_welcome(b)
    b.push_pending, a.fetching = False, True
    assert not fetches.push_welcome(a) and not fetches.push_welcome(b)


def test_fetch_book_hands_a_closed_sessions_keys_to_other_sources_and_reconciles_for_the_rest():
    a, b, c = SessionFake(1), SessionFake(2), SessionFake(3)
    fetches = book(a, b, c)
    shared, only_a = lesson(0).key, lesson(1).key
    fetches.learn([shared, only_a], a)
    fetches.learn([shared], b)
    a.closed = True
    fetches.session_closed(a, NOW)
    assert fetches.wanted == 1 and fetches.claim(shared, b)
    assert b.syncs + c.syncs == 1  # one reconciliation covers every key only a had


# -- RecordIntake --------------------------------------------------------------------------------


class IntakeHostFake:
    def __init__(self, keyset: KeySet) -> None:
        self.keyset = keyset
        self.held: list[rec.SignedRecord] = []
        self.events: list[object] = []

    def hold(self, signed):
        self.held.append(signed)
        self.keyset.add(signed.key, time=signed.record.created)

    def report(self, event):
        self.events.append(event)


class KeyBookFake:
    def __init__(self) -> None:
        self.sources: dict[bytes, tuple[SessionFake, ...]] = {}
        self.forgotten: list[bytes] = []
        self.released: list[bytes] = []

    def forget(self, key):
        self.forgotten.append(key)
        return self.sources.pop(key, ())

    def release(self, key, session, now, resync=True):
        self.released.append(key)
        return True


def intake(sessions, **kwargs):
    keyset, keys = KeySet(), KeyBookFake()
    host = IntakeHostFake(keyset)
    part = RecordIntake(host, keys, NET, keyset, {s.peer_key: s for s in sessions}, GossipParams(fanout=2),
                        random.Random(1), **kwargs)
    return part, host, keys


def test_intake_holds_a_valid_record_reports_it_and_announces_it_to_fanout_peers_other_than_its_sources():
    sessions = [SessionFake(n) for n in range(1, 7)]
    part, host, keys = intake(sessions)
    record = lesson(0)
    keys.sources[record.key] = (sessions[1],)  # it announced the key too
    part.take(list(wire(record)), sessions[0], NOW)
    assert host.held == [record] and host.events == [Accepted((record,), sessions[0].peer_key)]
    assert sessions[0].contributed and part.bodies_received == 1
    told = [s for s in sessions if s.announced]
    assert len(told) == 2 and sessions[0] not in told and sessions[1] not in told
    assert all(s.announced == [record.key] for s in told)


def test_intake_refuses_a_badly_signed_record_as_the_senders_fault():
    sender = SessionFake(1)
    part, host, keys = intake([sender])
    record = lesson(0)
    part.take([(record.body, bytes(64))], sender, NOW)
    assert host.held == [] and host.events == [] and part.invalid_received == 1
    assert keys.released == [record.key]  # asked of another peer that announced it
    assert sender.penalties[0][0] == GossipParams().penalty_invalid
    assert sender.penalties[0][1].startswith("invalid record")


def test_intake_withholds_a_record_its_policy_refuses_and_says_why():
    sender, other = SessionFake(1), SessionFake(2)
    part, host, _ = intake([sender, other], admit=lambda signed: "not on this machine")
    record = lesson(0)
    part.take(list(wire(record)), sender, NOW)
    assert host.events == [Refused(record.key, "not on this machine", sender.peer_key)]
    assert host.held == [] and part.refused == 1 and other.announced == []
    assert host.keyset.is_withheld(record.key)  # never fetched again


def test_intake_keeps_and_floods_a_revocation_past_the_policy_and_the_death_certificates():
    sessions = [SessionFake(n) for n in range(1, 6)]
    part, host, _ = intake(sessions, admit=lambda signed: "refused", is_dead=lambda signed: True)
    taken_down = revocation(lesson(0))
    part.take(list(wire(taken_down)), sessions[0], NOW)
    assert host.held == [taken_down]
    assert [s.announced for s in sessions] == [[]] + [[taken_down.key]] * 4  # every peer, past the fanout


def test_intake_counts_a_body_it_holds_as_a_duplicate_without_verifying_it_again():
    sender = SessionFake(1)

    def verify(*args, **kwargs):
        raise AssertionError("a held record is not verified again")

    part, host, keys = intake([sender], verify=verify)
    record = lesson(0)
    host.keyset.add(record.key, time=DAY)
    part.take(list(wire(record)), sender, NOW)
    assert part.duplicate_bodies == 1 and keys.forgotten == [record.key] and host.held == []


def test_a_free_riders_intake_takes_records_but_announces_none():
    sender, other = SessionFake(1), SessionFake(2)
    part, host, _ = intake([sender, other], free_rider=True)
    part.take(list(wire(lesson(0))), sender, NOW)
    assert len(host.held) == 1 and other.announced == []


@pytest.mark.parametrize("closed_after", [0, 1])
def test_intake_stops_at_a_sender_cut_off_mid_message_and_hands_the_rest_to_others(closed_after):
    sender = SessionFake(1)
    part, host, keys = intake([sender])
    records = [lesson(i) for i in range(3)]
    original = sender.penalise

    def penalise(amount, reason, now):
        original(amount, reason, now)
        sender.closed = True

    sender.penalise = penalise
    bodies = list(wire(*records))
    bodies[closed_after] = (records[closed_after].body, bytes(64))  # this one closes the session
    part.take(bodies, sender, NOW)
    assert len(host.held) == closed_after
    assert keys.released == [r.key for r in records[closed_after:]]
