"""The simulator: the real gossip code on a modelled network, a virtual clock, churn and partitions.

:class:`SimNetwork` extends :class:`commons.core.gossip.memnet.Network` (its one event heap carries every
frame, timer, dial and hang-up, each at a virtual time) with what a real network does to it:

* **Latency** per link: each node sits in one of ``len(REGIONS)`` regions and has its own access
  latency; a link costs both access latencies plus the backbone latency between the two regions.
* **Loss** per node's access link: a frame it sends is lost with that node's rate, and as under TCP
  it arrives ``retransmit`` seconds late with the frames behind it waiting (memnet's model).
* **Churn**: :meth:`SimNetwork.go_offline` cuts every connection of a node (its peers see the
  connection drop, in-flight frames are lost) and stops its timers; :meth:`SimNetwork.go_online`
  lets it dial again with the records it had. :class:`Churn` drives both with exponential
  online/offline times so that a chosen fraction is offline at any moment.
* **Partitions**: :meth:`SimNetwork.partition` cuts every connection between two sides and fails
  dials across; :meth:`SimNetwork.heal` lets them through again.
* **Free riders**: :class:`SimNode` with ``free_rider=True`` is a ``GossipNode(free_rider=True)``:
  it takes records but never announces them and answers every Want with "missing" (a peer then
  asks someone else); the behaviour is the core's, configured, not patched in.
* **Tracking**: :class:`Tracker` records, for chosen record keys, when and at which hop each node
  first took them (hop = body transfers from the publisher; the publisher is hop 0).

Environment changes (churn, partitions) are applied between slices of ``Network.run``: the gossip
events stay in memnet's heap; the environment steps on a fixed ``step`` of virtual time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from commons.core import records as rec
from commons.core.gossip import Accepted, GossipNode, GossipParams, Refused
from commons.core.gossip import PeerSession, SessionState
from commons.core.gossip import HANGUP, Network
from commons.core.trust import resolve

NOW = 1_800_000_000.0  # virtual start time (2027-01-15)

# One-way backbone latency (seconds) between regions: same region, then a ring of continents.
REGIONS = ("europe", "us-east", "us-west", "asia", "south-america", "oceania")
_REGION_RING_MS = (40, 35, 60, 90, 70, 110)  # neighbour-to-neighbour around the ring
_SAME_REGION = 0.008


def _backbone() -> list[list[float]]:
    n = len(REGIONS)
    table = [[0.0] * n for _ in range(n)]
    for a in range(n):
        for b in range(n):
            if a == b:
                table[a][b] = _SAME_REGION
                continue
            forward = sum(_REGION_RING_MS[(a + k) % n] for k in range((b - a) % n))
            backward = sum(_REGION_RING_MS[(b + k) % n] for k in range((a - b) % n))
            table[a][b] = min(forward, backward) / 1000
    return table


@dataclass(frozen=True)
class LinkModel:
    """Per-node region, access latency and access loss, drawn from the seed."""

    regions: tuple[int, ...]
    access: tuple[float, ...]  # one-way access latency, seconds
    loss: tuple[float, ...]  # probability that a frame this node sends is lost (and retransmitted)

    @classmethod
    def draw(cls, size: int, rng: random.Random, mean_loss: float = 0.01) -> LinkModel:
        regions = tuple(rng.randrange(len(REGIONS)) for _ in range(size))
        access = tuple(rng.uniform(0.002, 0.040) for _ in range(size))
        loss = tuple(min(0.2, rng.expovariate(1 / mean_loss)) if mean_loss > 0 else 0.0 for _ in range(size))
        return cls(regions, access, loss)

    def latency_function(self) -> Callable[[int, int], float]:
        table, regions, access = _backbone(), self.regions, self.access
        return lambda i, j: access[i] + access[j] + table[regions[i]][regions[j]]


class SimNode(GossipNode):
    """A GossipNode with the two behaviours a scenario may switch on.

    ``revocations``: records a death certificate takes down are refused (``is_dead``), as
    ``commons.core.trust.revocation`` rules over the records this node holds -- the real rules, applied
    at intake as the daemon's store does. ``free_rider``: see the module doc.
    """

    def __init__(self, *args, free_rider: bool = False, revocations: bool = False, **kwargs) -> None:
        if revocations:
            kwargs["is_dead"] = self._dead
        super().__init__(*args, free_rider=free_rider, **kwargs)
        self.refused_dead: set[bytes] = set()  # ids refused as dead: what the daemon keeps in `refused`

    def revocations(self):
        held = [r for r in map(self.get, self.record_keys()) if r is not None]
        return resolve(held, refused=self.refused_dead)

    def _dead(self, signed: rec.SignedRecord) -> bool:
        if self.revocations().refusal(signed) is None:
            return False
        self.refused_dead.add(signed.id)
        return True



class Tracker:
    """When, and at which hop, each node first took each tracked key (accepted or refused)."""

    def __init__(self, network: SimNetwork) -> None:
        self._net = network
        self.hops: dict[bytes, list[int]] = {}
        self.times: dict[bytes, list[float]] = {}

    def track(self, key: bytes, publisher: int, now: float) -> None:
        size = len(self._net.nodes)
        self.hops[key] = [-1] * size
        self.times[key] = [math.inf] * size
        self.hops[key][publisher] = 0
        self.times[key][publisher] = now

    def __call__(self, index: int, event, now: float) -> None:
        if isinstance(event, Accepted):
            keys = [r.key for r in event.records]
        elif isinstance(event, Refused):
            keys = [event.key]
        else:
            return
        sender = None
        for key in keys:
            hops = self.hops.get(key)
            if hops is None or hops[index] >= 0:
                continue
            if sender is None:
                sender = self._net.index_of(event.from_peer)
            hops[index] = hops[sender] + 1 if hops[sender] >= 0 else 1
            self.times[key][index] = now

    def node_hop(self, keys: Iterable[bytes], index: int) -> int:
        """The hop at which the node held all of ``keys`` (-1: not all)."""
        worst = 0
        for key in keys:
            hop = self.hops[key][index]
            if hop < 0:
                return -1
            worst = max(worst, hop)
        return worst

    def node_time(self, keys: Iterable[bytes], index: int) -> float:
        return max(self.times[key][index] for key in keys)


class SimNetwork(Network):
    """memnet's Network plus the modelled environment (see the module doc)."""

    def __init__(
        self,
        size: int,
        *,
        seed: int,
        params: GossipParams | None = None,
        mean_loss: float = 0.01,
        free_riders: Iterable[int] = (),
        revocations: bool = False,
    ) -> None:
        rng = random.Random(f"links/{seed}")
        self.links = LinkModel.draw(size, rng, mean_loss)
        self.free_riders = frozenset(free_riders)
        self.tracker = Tracker(self)
        self._side: list[int] | None = None
        keys_made = [0]

        def factory(*args, **kwargs) -> SimNode:
            index = keys_made[0]  # memnet builds nodes in index order
            keys_made[0] += 1
            return SimNode(*args, free_rider=index in self.free_riders, revocations=revocations, **kwargs)

        super().__init__(
            size,
            seed=seed,
            params=params,
            latency=self.links.latency_function(),
            loss=0.0,
            start_time=NOW,
            node_factory=factory,
            observer=self.tracker,
        )

    @property
    def size(self) -> int:
        return len(self.nodes)

    def index_of(self, transport_key: bytes) -> int:
        return self._index[transport_key]

    # -- loss per sender -------------------------------------------------------------------------

    def _flush(self, i: int) -> None:
        self._loss = self.links.loss[i]
        super()._flush(i)

    # -- churn -----------------------------------------------------------------------------------

    def go_offline(self, i: int) -> None:
        """Node i disappears: every connection drops, its timers stop, its records stay."""
        if not self.running[i]:
            return
        self.running[i] = False
        self._tick_at[i] = math.inf
        node = self.nodes[i]
        for session in node.sessions():
            self._cut(i, session)
        node.drain_outboxes()
        node.events()

    def go_online(self, i: int) -> None:
        if not self.running[i]:
            self.start([i])

    def _cut(self, i: int, session: PeerSession) -> None:
        """Drop one connection under both ends (no Bye: the link is gone)."""
        link = session.context
        session.connection_lost(self.now)
        session.context = None
        if link is not None:
            j, other, _ = link
            self._push(self.now + self._link_latency(i, j), HANGUP, other, None)

    # -- partitions ------------------------------------------------------------------------------

    def partition(self, side: list[int]) -> None:
        """Split the network: node i is on ``side[i]``; connections across are cut, dials fail."""
        self._side = side
        for i, node in enumerate(self.nodes):
            cut = False
            for session in node.sessions():
                link = session.context
                if link is not None and side[link[0]] != side[i]:
                    self._cut(i, session)
                    cut = True
            if cut and self.running[i]:
                self._after(node, i)

    def heal(self) -> None:
        self._side = None

    def _connected(self, i: int, j: int) -> None:
        if self._side is not None and self._side[i] != self._side[j] and self.running[i]:
            self.nodes[i].dial_failed(self.keys[j], self.now)
            self._reschedule(i)
            return
        super()._connected(i, j)

    # -- measuring -------------------------------------------------------------------------------

    def live(self) -> list[int]:
        return [i for i, up in enumerate(self.running) if up]

    def holds(self, i: int, key: bytes) -> bool:
        """The key is in node i's key set (held, or refused and withheld)."""
        return key in self.nodes[i].keyset

    def serves(self, i: int, key: bytes) -> bool:
        return self.nodes[i].get(key) is not None

    def is_withheld(self, i: int, key: bytes) -> bool:
        return self.nodes[i].keyset.is_withheld(key)

    def takedowns(self, i: int):
        """Ids node i's revocations take down (over what it holds and refused)."""
        return self.nodes[i].revocations().takedowns

    def traffic_counters(self) -> tuple[list[int], list[int]]:
        """(bodies received, gossip bytes sent) per node, so far."""
        stats = self.node_statistics()
        return [s.bodies_received for s in stats], [s.bytes_out for s in stats]

    def publish_tracked(self, index: int, *signed: rec.SignedRecord) -> None:
        for record in signed:
            self.tracker.track(record.key, index, self.now)
        self.publish(index, *signed)

    def open_sessions(self) -> int:
        return sum(1 for n in self.nodes for s in n.sessions() if s.state is SessionState.OPEN)


class Churn:
    """Nodes leave and come back with exponential online/offline times (a stationary churn).

    With mean offline time ``off`` and ``offline`` the fraction offline at any time, the mean
    online time is ``off * (1 - offline) / offline``. Steps of ``step`` seconds: in each, an
    online node leaves with probability step / mean_online, an offline one returns with step / off.
    Nodes in ``pinned`` never leave (the publishers: a record must first get out).
    """

    def __init__(self, net: SimNetwork, offline: float, rng: random.Random, *, off: float = 120.0,
                 step: float = 1.0, pinned: Iterable[int] = ()) -> None:
        self.net, self.rng = net, rng
        self.p_return = step / off
        self.p_leave = step / (off * (1 - offline) / offline) if offline > 0 else 0.0
        self.pinned = frozenset(pinned)
        self.departures = self.returns = 0

    def initial_offline(self, fraction: float) -> list[int]:
        candidates = [i for i in range(len(self.net.nodes)) if i not in self.pinned]
        return self.rng.sample(candidates, round(fraction * len(self.net.nodes)))

    def advance(self) -> None:
        net, rng = self.net, self.rng
        for i, up in enumerate(net.running):
            if up:
                if i not in self.pinned and rng.random() < self.p_leave:
                    net.go_offline(i)
                    self.departures += 1
            elif rng.random() < self.p_return:
                net.go_online(i)
                self.returns += 1



class LinkChurn:
    """Connections end on their own (NAT timeouts, sleeping laptops, restarts) after an exponential
    lifetime of mean ``lifetime``: each step, about sessions * step / lifetime random connections
    drop, and their nodes dial whom they know -- the only way the gossip core makes new links."""

    def __init__(self, net: SimNetwork, lifetime: float, rng: random.Random, step: float = 1.0) -> None:
        self.net, self.rng, self.lifetime, self.step = net, rng, lifetime, step
        self.dropped = 0
        self._debt = 0.0

    def advance(self) -> None:
        net, rng = self.net, self.rng
        self._debt += net.open_sessions() / 2 * self.step / self.lifetime
        while self._debt >= 1:
            self._debt -= 1
            i = rng.randrange(len(net.nodes))
            sessions = [s for s in net.nodes[i].sessions() if s.context is not None]
            if not sessions:
                continue
            net._cut(i, rng.choice(sessions))
            net._after(net.nodes[i], i)
            self.dropped += 1


def drive(net: SimNetwork, until: float, actors: Iterable, step: float = 1.0) -> None:
    """Run the network to ``until``, letting each actor (Churn, LinkChurn) act every ``step``."""
    actors = list(actors)
    while net.now + step <= until:
        net.run(net.now + step)
        for actor in actors:
            actor.advance()
    net.run(until)
