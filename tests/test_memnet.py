"""Many gossip nodes in memory, on a virtual clock: convergence, catch-up, misbehaviour, ordering."""

from __future__ import annotations

from collections import defaultdict

from commons.core.gossip.node import Accepted, GossipNode, GossipParams, SessionClosed
from commons.core.gossip.messages import Hello, Records, decode, encode
from commons.core.gossip.memnet import Network, transport_key_of
from tests.test_gossip import NOW, lesson, revocation, signing_key


def published(count: int, authors: int = 3):
    return [lesson(i, signing_key(10 + i % authors)) for i in range(count)]


def converged_on(count: int, among=None):
    def check(net: Network) -> bool:
        nodes = net.nodes if among is None else [net.nodes[i] for i in among]
        return len(nodes[0].keyset) == count and net.converged(among)

    return check


def test_twenty_five_nodes_converge_to_identical_stores():
    net = Network(25, seed=3, start_time=NOW, latency=lambda i, j: 0.01 + (i * 7 + j * 13) % 10 / 100, loss=0.05)
    net.random_bootstrap(3)
    net.start()
    net.run(NOW + 2)
    records = published(40)
    for i, record in enumerate(records):
        net.publish(i * 7 % 25, record)
    assert net.run(NOW + 300, stop=converged_on(40))
    assert all(node.record_keys() == {r.key for r in records} for node in net.nodes)


def test_late_joiner_catches_up_by_reconciliation_alone():
    params = GossipParams(sync_interval=10.0)
    net = Network(21, seed=5, start_time=NOW, params=params)
    net.random_bootstrap(3, among=range(20))
    net.bootstrap(20, [0, 1])
    net.start(range(20))
    net.run(NOW + 2)
    records = published(30)
    for i, record in enumerate(records):
        net.publish(i % 20, record)
    assert net.run(NOW + 120, stop=converged_on(30, range(20)))
    net.start([20])
    assert net.run(net.now + 120, stop=converged_on(30))
    late = net.nodes[20].statistics()
    assert late.records_held == 30
    assert late.announced_keys_received == 0  # nothing was pushed to it: reconciliation did it all
    assert late.bodies_received == 30 and late.duplicate_bodies == 0
    assert late.syncs_completed >= 1 or any(
        n.statistics().syncs_completed for n in net.nodes[:20]
    )


def test_duplicate_bodies_are_not_received_or_reforwarded():
    net = Network(30, seed=8, start_time=NOW, latency=0.02)
    net.random_bootstrap(4)
    net.start()
    net.run(NOW + 2)
    records = published(20)
    for record in records:
        net.publish(0, record)
    assert net.run(NOW + 300, stop=converged_on(20))
    stats = net.node_statistics()
    assert sum(s.duplicate_bodies for s in stats) == 0
    assert stats[0].bodies_received == 0
    assert all(s.bodies_received == 20 for s in stats[1:])
    # Each node announces each key at most `fanout` times, once: never again on a duplicate.
    announced = sum(s.announced_keys_received for s in stats)
    assert announced <= 30 * 20 * GossipParams().fanout


class GarbageNode(GossipNode):
    """Says Hello like anyone, then sends nothing but garbage."""

    def drain_outboxes(self):
        out = []
        for session, frames in super().drain_outboxes():
            kept = [f for f in frames if isinstance(decode(f), Hello)]
            if len(kept) < len(frames) and not session.closed:
                kept += [b"\xc1not msgpack", b"\x92\x63\x00"]
            out.append((session, kept))
        return out


def test_a_peer_sending_garbage_is_cut_off_while_the_rest_converge():
    closed = []

    def observe(index, event, now):
        if isinstance(event, SessionClosed):
            closed.append((index, event))

    def factory(network, key, rng, **kwargs):
        cls = GarbageNode if key == net_keys[0] else GossipNode
        return cls(network, key, rng, **kwargs)

    net_keys = [transport_key_of(i, 11) for i in range(20)]
    net = Network(20, seed=11, start_time=NOW, node_factory=factory, observer=observe)
    net.random_bootstrap(3)
    for i in range(1, 20):
        net.bootstrap(i, [0])  # everyone knows the bad node
    net.start()
    net.run(NOW + 2)
    records = published(15)
    for i, record in enumerate(records):
        net.publish(1 + i % 19, record)
    good = range(1, 20)
    assert net.run(NOW + 300, stop=converged_on(15, good))
    cut = {i for i, e in closed if e.peer_key == net_keys[0] and e.misbehaved}
    assert len(cut) >= 10
    for i in cut:
        info = net.nodes[i].peer(net_keys[0])
        assert info.strikes >= 1
    assert all(s.peer_key != net_keys[0] or s.closed for i in good for s in net.nodes[i].sessions())


class ForgerNode(GossipNode):
    """A well-formed peer whose every record carries a forged signature."""

    def drain_outboxes(self):
        out = []
        for session, frames in super().drain_outboxes():
            forged = []
            for frame in frames:
                message = decode(frame)
                if isinstance(message, Records) and message.records:
                    message = Records(tuple((body, bytes(64)) for body, _ in message.records), message.missing)
                forged.append(encode(message))
            out.append((session, forged))
        return out


def test_a_peer_sending_badly_signed_records_is_cut_off_while_the_rest_converge():
    closed = []
    keys = [transport_key_of(i, 12) for i in range(16)]

    def factory(network, key, rng, **kwargs):
        return (ForgerNode if key == keys[0] else GossipNode)(network, key, rng, **kwargs)

    net = Network(16, seed=12, start_time=NOW, node_factory=factory,
                  observer=lambda i, e, now: closed.append((i, e)) if isinstance(e, SessionClosed) else None)
    net.random_bootstrap(3)
    net.start()
    net.run(NOW + 2)
    records = published(12)
    net.publish(0, *records)  # only the forger has them at first: honest nodes must refuse its copies
    net.publish(5, *records[:6])
    assert net.run(NOW + 200, stop=converged_on(6, range(1, 16)))
    cut = {i for i, e in closed if e.peer_key == keys[0] and e.misbehaved and "signature" in e.reason}
    assert cut
    assert all(net.nodes[i].statistics().records_held == 6 for i in range(1, 16))


def test_a_revocation_is_delivered_no_later_than_the_lesson_it_revokes():
    arrivals: dict[int, dict[bytes, float]] = defaultdict(dict)
    order: dict[int, list[bytes]] = defaultdict(list)

    def observe(index, event, now):
        if isinstance(event, Accepted):
            for record in event.records:
                arrivals[index][record.key] = now
                order[index].append(record.key)

    params = GossipParams(sync_interval=10.0)
    net = Network(31, seed=13, start_time=NOW, params=params, observer=observe, loss=0.1,
                  latency=lambda i, j: 0.01 + (i * j) % 17 / 100)
    net.random_bootstrap(3, among=range(30))
    net.bootstrap(30, [4])
    net.start(range(30))
    net.run(NOW + 2)
    bad = lesson(0, signing_key(20))
    revoke = revocation(bad, signing_key(20))
    net.publish(0, bad, revoke)
    assert net.run(NOW + 200, stop=converged_on(2, range(30)))
    net.start([30])  # a late joiner learns both by reconciliation
    assert net.run(net.now + 200, stop=converged_on(2))
    for index in range(1, 31):
        assert arrivals[index][revoke.key] <= arrivals[index][bad.key]
        assert order[index].index(revoke.key) < order[index].index(bad.key)


def test_peer_exchange_lets_a_node_reach_beyond_its_bootstrap_peer():
    net = Network(16, seed=17, start_time=NOW)
    net.random_bootstrap(4, among=range(15))
    net.bootstrap(15, [0])
    net.start()
    net.run(NOW + 30)
    newcomer = net.nodes[15]
    learned = [p for p in newcomer.known_peers() if p.source == "exchange"]
    assert len(learned) >= 5
    partners = {s.peer_key for s in newcomer.sessions()}
    assert len(partners - {net.keys[0]}) >= 3


def test_dialing_a_stopped_node_fails_and_backs_off():
    net = Network(3, seed=19, start_time=NOW)
    net.bootstrap(0, [1, 2])
    net.start([0, 1])
    net.run(NOW + 5)
    info = net.nodes[0].peer(net.keys[2])
    assert info.strikes >= 1 and info.backoff_until > NOW and not info.connected
    assert net.nodes[0].peer(net.keys[1]).connected


def test_a_network_run_is_deterministic_for_its_seed():
    def run() -> tuple:
        net = Network(12, seed=23, start_time=NOW, loss=0.2)
        net.random_bootstrap(3)
        net.start()
        net.run(NOW + 1)
        for i, record in enumerate(published(10)):
            net.publish(i % 12, record)
        net.run(NOW + 100)
        return net.statistics(), tuple(net.node_statistics())

    assert run() == run()
