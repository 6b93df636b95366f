"""The scenarios: each builds a SimNetwork, drives the real gossip code, and returns a Result.

Every scenario starts the same way: ``nodes`` nodes, each bootstrapped with 4 random peers (plus
its ring neighbour, so the bootstrap graph is connected), all started at once, and
``WARMUP`` virtual seconds for connections, Hellos and peer exchange to settle before anything is
published. Publishers are drawn from the seed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from commons.config import TrustConfig
from commons.core import records as rec
from commons.core.gossip import GossipParams
from commons.core.reconcile import KeySet, Reconciler, make_key, run_in_memory
from commons.core.trust import LessonStatus, TrustPolicy, evaluate
from simulations import authors
from simulations.measure import Reach, Result, peak_rss_mb, reach_of, traffic
from simulations.model import ModelNetwork
from simulations.sim import Churn, LinkChurn, SimNetwork, drive
from simulations.webs import Web, sybil_label

WARMUP = 10.0  # virtual seconds before the first publication
BOOTSTRAP_DEGREE = 4
SETTLE = 5.0  # virtual seconds run after the last node took the item, for bodies still in flight
HORIZON = 600.0  # the longest a spread is followed (virtual seconds)


# Above this many nodes, spread and revoke run on the model engine (simulations/model.py): the
# real engine holds ~60 KB a node (590 MB peak at 10^4, ~1.8 GB at 3 * 10^4: docs/simulations.md).
MODEL_ABOVE = 30_000
ENGINES = ("auto", "real", "model")


def _network(nodes: int, seed: int, **kwargs) -> SimNetwork:
    net = SimNetwork(nodes, seed=seed, **kwargs)
    net.random_bootstrap(BOOTSTRAP_DEGREE)
    return net


def engine_for(nodes: int, engine: str = "auto") -> str:
    """Which engine runs a spread or revoke of ``nodes``: ``auto`` is the real one up to MODEL_ABOVE."""
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine == "auto":
        return "real" if nodes <= MODEL_ABOVE else "model"
    return engine


def _spreading(nodes: int, seed: int, engine: str, records: list[rec.SignedRecord],
               revocations: bool = False) -> SimNetwork | ModelNetwork:
    """The started network a spread or revoke runs on, from either engine."""
    if engine_for(nodes, engine) == "model":
        net = ModelNetwork(nodes, seed=seed, records=records, revocations=revocations,
                           bootstrap_degree=BOOTSTRAP_DEGREE)
    else:
        net = _network(nodes, seed, revocations=revocations)
    net.start()
    return net


def _until_all(net: SimNetwork, keys: list[bytes], until: float, nodes: list[int] | None = None) -> None:
    """Run until every node (of ``nodes``) holds ``keys``, or ``until``; then SETTLE seconds more."""
    watch = list(range(net.size)) if nodes is None else nodes

    def done(n: SimNetwork) -> bool:
        nonlocal watch
        watch = [i for i in watch if not all(n.holds(i, k) for k in keys)]
        return not watch

    net.run(until, stop=done, check_every=0.1)
    net.run(net.now + SETTLE)


def _started(fn: Callable[..., Result]) -> Callable[..., Result]:
    """Time the scenario and stamp wall time, CPU time and peak RSS on its result."""

    def run(*args, **kwargs) -> Result:
        started, cpu = time.perf_counter(), time.process_time()
        result = fn(*args, **kwargs)
        return Result(**{**result.__dict__, "wall_seconds": round(time.perf_counter() - started, 2),
                         "cpu_seconds": round(time.process_time() - cpu, 2), "peak_rss_mb": peak_rss_mb()})

    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    return run


def _lesson_triple(tag: str) -> tuple[rec.SignedRecord, rec.SignedRecord, rec.SignedRecord]:
    """A lesson, a lesson derived from it (another author), and its author's revocation of the first."""
    first = authors.lesson(f"{tag}/author", f"uv sync fails on an old lock file ({tag})")
    derived = authors.lesson(f"{tag}/deriver", f"uv sync fails on old lock files; run uv lock first ({tag})",
                             parents=(first.id,))
    return first, derived, authors.revocation(f"{tag}/author", first)


def _cascade(net, first: rec.SignedRecord, derived: rec.SignedRecord, nodes: list[int]) -> dict:
    """Where neither lesson is alive (not held, refused at intake, or dead by what the node holds)."""
    down = refused = 0
    for i in nodes:
        dead = net.takedowns(i)
        if not any(net.serves(i, r.key) and r.id not in dead for r in (first, derived)):  # none alive
            down += 1
        refused += net.is_withheld(i, first.key)
    return {"cascade": round(down / len(nodes), 6), "refused_at_intake": round(refused / len(nodes), 6)}


# -- spread and revoke --------------------------------------------------------------------------


@_started
def spread(nodes: int, seed: int, *, engine: str = "auto", inspect: Callable[..., None] | None = None) -> Result:
    """One lesson, published by one node, reaching every node. ``inspect``: called with the network
    at the end, while it is still alive (simulations/footprint.py measures it there)."""
    rng = random.Random(f"spread/{seed}")
    record = authors.lesson("spread/author", f"uv sync fails on an old lock file (seed {seed})")
    net = _spreading(nodes, seed, engine, [record])
    net.run(net.now + WARMUP)
    before, t0 = net.traffic_counters(), net.now
    net.publish_tracked(rng.randrange(nodes), record)
    _until_all(net, [record.key], t0 + HORIZON)
    if inspect is not None:
        inspect(net)
    everyone = list(range(nodes))
    dup, sent = traffic(net, before, everyone, 1)
    return Result.of("spread", nodes, seed, reach_of(net, [record.key], everyone, t0),
                     duplicates_per_node=dup, bytes_per_node=sent, wall_seconds=0, peak_rss_mb=0,
                     details={"virtual_seconds": round(net.now - t0, 3),
                              "sessions_per_node": round(net.open_sessions() / nodes, 2),
                              "engine": engine_for(nodes, engine)})


RACE_DELAY = 0.2  # seconds between the lessons and the revocation (about one hop)


@_started
def revoke(nodes: int, seed: int, *, engine: str = "auto") -> Result:
    """A lesson and a lesson derived from it, then (RACE_DELAY later, from another node) the
    revocation of the first: the revocation races the lessons it takes down."""
    rng = random.Random(f"revoke/{seed}")
    first, derived, revocation = _lesson_triple(f"revoke/{seed}")
    net = _spreading(nodes, seed, engine, [first, derived, revocation], revocations=True)
    net.run(net.now + WARMUP)
    a, b = rng.sample(range(nodes), 2)
    before, t0 = net.traffic_counters(), net.now
    net.publish_tracked(a, first, derived)
    net.run(t0 + RACE_DELAY)
    net.publish_tracked(b, revocation)
    keys = [first.key, derived.key, revocation.key]
    _until_all(net, keys, t0 + HORIZON)
    everyone = list(range(nodes))
    dup, sent = traffic(net, before, everyone, 3)
    details = {**_cascade(net, first, derived, everyone), "race_delay_s": RACE_DELAY,
               "lessons": _reach_json(reach_of(net, [first.key, derived.key], everyone, t0)),
               "engine": engine_for(nodes, engine)}
    return Result.of("revoke", nodes, seed, reach_of(net, [revocation.key], everyone, t0 + RACE_DELAY),
                     duplicates_per_node=dup, bytes_per_node=sent, wall_seconds=0, peak_rss_mb=0, details=details)


def _reach_json(r: Reach) -> dict:
    return {k: v for k, v in r.__dict__.items() if k != "curve"}


# -- churn --------------------------------------------------------------------------------------

OFFLINE = 0.2
FREE_RIDERS = 0.3
CHURN_BEFORE = 120.0  # churn runs this long before the publication (to reach its steady state)
CHURN_AFTER = 300.0  # and this long after it
CALM = 300.0  # then churn stops (who is offline stays offline) and the network runs this long


@_started
def churn(nodes: int, seed: int) -> Result:
    """``spread`` and ``revoke`` at once, with 20% of nodes offline at any time (exponential online
    and offline times, 120 s mean offline) and 30% free riders. Reach is over the live nodes."""
    rng = random.Random(f"churn/{seed}")
    publishers = rng.sample(range(nodes), 3)
    riders = rng.sample([i for i in range(nodes) if i not in publishers], round(FREE_RIDERS * nodes))
    net = _network(nodes, seed, free_riders=riders, revocations=True)
    driver = Churn(net, OFFLINE, rng, pinned=publishers)
    away = set(driver.initial_offline(OFFLINE))
    net.start([i for i in range(nodes) if i not in away])
    drive(net, net.now + WARMUP + CHURN_BEFORE, [driver])

    lesson = authors.lesson("churn/author", f"pip install hangs behind the proxy (seed {seed})")
    first, derived, revocation = _lesson_triple(f"churn/{seed}")
    before, t0 = net.traffic_counters(), net.now
    net.publish_tracked(publishers[0], lesson)
    net.publish_tracked(publishers[1], first, derived)
    drive(net, t0 + RACE_DELAY, [driver], step=RACE_DELAY)
    net.publish_tracked(publishers[2], revocation)
    drive(net, t0 + CHURN_AFTER, [driver])
    live = net.live()
    during = reach_of(net, [lesson.key], live, t0)
    during_revoke = reach_of(net, [revocation.key], live, t0)
    net.run(net.now + CALM)
    live = net.live()
    everyone = list(range(nodes))
    dup, sent = traffic(net, before, everyone, 4)
    revoked = reach_of(net, [revocation.key], live, t0 + RACE_DELAY)
    details = {
        "offline_fraction": OFFLINE, "free_rider_fraction": FREE_RIDERS,
        "live_at_end": len(live), "departures": driver.departures, "returns": driver.returns,
        "reach_when_churn_stopped": round(during.reach, 6),
        "revoke_reach_when_churn_stopped": round(during_revoke.reach, 6),
        "revoke": {**_reach_json(revoked), "curve": list(revoked.curve)},
        **_cascade(net, first, derived, live),
        "free_riders_reached": round(sum(lesson.key in net.nodes[i].keyset for i in riders if net.running[i])
                                     / max(1, sum(net.running[i] for i in riders)), 6),
    }
    return Result.of("churn", nodes, seed, reach_of(net, [lesson.key], live, t0),
                     duplicates_per_node=dup, bytes_per_node=sent, wall_seconds=0, peak_rss_mb=0, details=details)


# -- partition ----------------------------------------------------------------------------------

SPLIT = 300.0  # virtual seconds the halves stay apart after publishing
LINK_LIFETIME = 600.0  # mean lifetime of a connection (without it a cut never heals: see the docs)
PER_SIDE = 5  # records published on each side
HEAL_LIMIT = 3600.0


@_started
def partition(nodes: int, seed: int) -> Result:
    """Two halves, cut apart; each publishes its own records; the cut heals; stores reconcile."""
    rng = random.Random(f"partition/{seed}")
    net = _network(nodes, seed)
    net.start()
    net.run(net.now + WARMUP)
    links = LinkChurn(net, LINK_LIFETIME, rng)
    side = [0] * nodes
    for i in rng.sample(range(nodes), nodes // 2):
        side[i] = 1
    net.partition(side)
    net.run(net.now + 10.0)
    halves = [[i for i in range(nodes) if side[i] == s] for s in (0, 1)]
    made = {s: [authors.lesson(f"partition/{s}/{k}", f"side {s} lesson {k} (seed {seed})") for k in range(PER_SIDE)]
            for s in (0, 1)}
    before, t0 = net.traffic_counters(), net.now
    for s in (0, 1):
        net.publish_tracked(rng.choice(halves[s]), *made[s])
    drive(net, t0 + SPLIT, [links])
    apart = {f"side_{s}_reach_own": round(reach_of(net, [r.key for r in made[s]], halves[s], t0).reach, 6)
             for s in (0, 1)}
    leaked = sum(r.key in net.nodes[i].keyset for s in (0, 1) for r in made[1 - s] for i in halves[s])
    net.heal()
    healed_at = net.now
    keys = [r.key for s in (0, 1) for r in made[s]]
    everyone = list(range(nodes))
    while net.now < healed_at + HEAL_LIMIT and not all(all(k in n.keyset for k in keys) for n in net.nodes):
        drive(net, net.now + 10.0, [links])
    net.run(net.now + SETTLE)
    dup, sent = traffic(net, before, everyone, 2 * PER_SIDE)
    details = {**apart, "records_across_the_cut_while_apart": leaked, "identical_stores": net.converged(),
               "split_seconds": SPLIT, "heal_virtual_seconds": round(net.now - healed_at - SETTLE, 3),
               "link_lifetime_s": LINK_LIFETIME, "links_dropped": links.dropped}
    return Result.of("partition", nodes, seed, reach_of(net, keys, everyone, healed_at),
                     duplicates_per_node=dup, bytes_per_node=sent, wall_seconds=0, peak_rss_mb=0, details=details)


# -- sybil --------------------------------------------------------------------------------------

SYBILS = 1000
ATTACK_EDGES = 10
SYBIL_VERIFIERS = 100
ATTACKER_NODES = 10


@_started
def sybil(nodes: int, seed: int, *, sybils: int = SYBILS, attack_edges: int = ATTACK_EDGES,
          verifiers: int = SYBIL_VERIFIERS) -> Result:
    """An attacker with ``sybils`` keys, joined to the honest web by ``attack_edges`` vouches, gossips
    a false lesson and ``verifiers`` confirmations of it (the gateways' first); every honest node
    then evaluates what it holds with the default trust policy, its own key as ``me``."""
    rng = random.Random(f"sybil/{seed}")
    web = Web.build(nodes, sybils, attack_edges, rng)
    liar = sybil_label(sybils - 1)  # signs the lesson, never verifies it
    false = authors.lesson(liar, f"run rm -rf .venv whenever uv sync fails (seed {seed})")
    confirmations = [authors.verification(sybil_label(k), false, rng.randbytes(32))
                     for k in range(min(verifiers, sybils - 1))]
    net = _network(nodes + ATTACKER_NODES, seed)
    net.start()
    net.run(net.now + WARMUP)
    honest = list(range(nodes))
    before, t0 = net.traffic_counters(), net.now
    net.publish_tracked(nodes, false, *confirmations)  # from the attacker's first gossip node
    keys = [false.key, *(c.key for c in confirmations)]
    _until_all(net, keys, t0 + HORIZON, honest)
    dup, sent = traffic(net, before, honest, len(keys))
    reach = reach_of(net, keys, honest, t0)

    policy = TrustConfig().trust_policy()
    promoted = exposed = 0
    started = time.perf_counter()
    for i in honest:
        me = web.honest_keys[i]
        node = net.nodes[i]
        held = [r for r in map(node.get, keys) if r is not None]
        view = evaluate([*web.relevant_vouches(me, policy.max_depth), *held], me=me, policy=policy)
        promoted += view.status(false.id) is LessonStatus.COMMON
        exposed += web.exposure(i, policy.max_per_voucher) >= policy.required
    details = {
        "sybils": sybils, "attack_edges": attack_edges, "verifiers": len(confirmations),
        "attacker_gossip_nodes": ATTACKER_NODES, "honest_vouch_degree": 4, "rewire": 0.2,
        "promoted_nodes": promoted,
        "exposed_nodes": exposed,  # where the policy's caps allow `required` attacker outcomes at all
        "evaluate_seconds": round(time.perf_counter() - started, 2),
        "policy": {"required": policy.required, "max_depth": policy.max_depth,
                   "max_per_voucher": policy.max_per_voucher, "policy": policy.policy.value},
    }
    return Result.of("sybil", nodes, seed, reach, duplicates_per_node=dup, bytes_per_node=sent,
                     wall_seconds=0, peak_rss_mb=0, false_promotion_rate=round(promoted / nodes, 6),
                     details=details)


# -- reconcile ----------------------------------------------------------------------------------

STORE = 100_000
DIFFERENCES = (1, 3, 10, 30, 100, 300, 1000, 3000, 10000)


@_started
def reconcile(nodes: int, seed: int, *, store: int = STORE, differences: tuple[int, ...] = DIFFERENCES) -> Result:
    """Two nodes' key sets of ``store`` shared keys, differing by each of ``differences`` keys (split
    between the sides), reconciled by the real Reconciler with gossip's frame limit."""
    rng = random.Random(f"reconcile/{seed}")

    def keys(count: int) -> list[bytes]:
        return [make_key(rng.randrange(4), rng.randbytes(32)) for _ in range(count)]

    shared = keys(store)
    frame = GossipParams().reconcile_frame_bytes
    rows = []
    for diff in differences:
        extra = keys(diff)
        half = (diff + 1) // 2
        a, b = KeySet(shared + extra[:half]), KeySet(shared + extra[half:])
        exchange = run_in_memory(Reconciler(a, frame_size_limit=frame), Reconciler(b, frame_size_limit=frame))
        have, need, _ = exchange.learned(initiator=True)
        correct = sorted(have) == sorted(extra[:half]) and sorted(need) == sorted(extra[half:])
        total = sum(len(m) for m in exchange.messages)
        rows.append({"difference": diff, "bytes": total, "round_trips": exchange.round_trips,
                     "bytes_per_difference": round(total / diff, 1), "correct": correct})
    xs, ys = [r["difference"] for r in rows], [r["bytes"] for r in rows]
    slope, intercept, r2 = _linear_fit(xs, ys)
    exponent = _linear_fit([math.log(x) for x in xs], [math.log(y) for y in ys])[0]
    details = {"store": store, "frame_size_limit": frame, "rows": rows, "fit_bytes_per_key": round(slope, 1),
               "fit_intercept_bytes": round(intercept, 1), "fit_r2": round(r2, 5),
               # bytes ~ difference ** exponent: 1 is linear, below 1 each extra key costs less
               "loglog_exponent": round(exponent, 3)}
    everything_learned = all(r["correct"] for r in rows)
    reach = Reach(1.0 if everything_learned else 0.0, None, None, None, None, None, None, ())
    return Result.of("reconcile", 2, seed, reach, duplicates_per_node=None,
                     bytes_per_node=round(ys[-1] / 2, 1), wall_seconds=0, peak_rss_mb=0, details=details)


def _linear_fit(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - slope * mx
    ss_res = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return slope, intercept, 1 - ss_res / ss_tot if ss_tot else 1.0


MODELLED = ("spread", "revoke")  # the scenarios the model engine runs

SCENARIOS: dict[str, Callable[..., Result]] = {
    "spread": spread,
    "revoke": revoke,
    "churn": churn,
    "partition": partition,
    "sybil": sybil,
    "reconcile": reconcile,
}
