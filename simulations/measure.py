"""What a scenario measures: reach over rounds and seconds, and the frozen result it returns.

A **round** is one hop of gossip: the publisher holds a record at round 0, and a node that takes
the record's body from a peer holding it at round r holds it at round r + 1, whether the body came
after an announcement or after an anti-entropy reconciliation. ``rounds_to_X`` is the first round
by which a fraction X of the live nodes held the item; ``seconds_to_X`` is the same in virtual
seconds (from the publication, or from the heal for ``partition``). Both are reported because
they answer different questions: rounds count relays, seconds show waits (a node that was
offline takes the record at a low round but late).
"""

from __future__ import annotations

import math
import resource
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

ROUND_DEFINITION = (
    "one hop of gossip: the publisher holds the item at round 0; a node that takes its body from "
    "a peer that held it at round r holds it at round r+1 (after an announcement or a reconciliation)"
)


@dataclass(frozen=True)
class Reach:
    """How far a set of records got among a set of nodes (a node counts once it holds all of them)."""

    reach: float
    rounds_to_99: int | None
    rounds_to_999: int | None
    rounds_to_100: int | None
    seconds_to_99: float | None
    seconds_to_999: float | None
    seconds_to_100: float | None
    curve: tuple[float, ...]  # curve[r]: fraction of the nodes holding everything by round r


def reach_of(net, keys: Sequence[bytes], nodes: Iterable[int], origin: float) -> Reach:
    """``net``: a SimNetwork or a ModelNetwork (``holds(i, key)`` and a ``tracker``)."""
    nodes = list(nodes)
    total = len(nodes)
    if total == 0:
        return Reach(0.0, None, None, None, None, None, None, ())
    holding = [i for i in nodes if all(net.holds(i, k) for k in keys)]
    tracker = net.tracker
    hops = sorted(h for h in (tracker.node_hop(keys, i) for i in holding) if h >= 0)
    times = sorted(t - origin for t in (tracker.node_time(keys, i) for i in holding) if math.isfinite(t))
    curve: list[float] = []
    pos = 0
    for r in range(hops[-1] + 1 if hops else 0):
        while pos < len(hops) and hops[pos] <= r:
            pos += 1
        curve.append(pos / total)

    def first(values: list, fraction: float):
        need = math.ceil(fraction * total - 1e-9)
        return values[need - 1] if 0 < need <= len(values) else None

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(max(0.0, value), 3)

    return Reach(
        reach=len(holding) / total,
        rounds_to_99=first(hops, 0.99),
        rounds_to_999=first(hops, 0.999),
        rounds_to_100=first(hops, 1.0),
        seconds_to_99=rounded(first(times, 0.99)),
        seconds_to_999=rounded(first(times, 0.999)),
        seconds_to_100=rounded(first(times, 1.0)),
        curve=tuple(round(c, 6) for c in curve),
    )


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@dataclass(frozen=True)
class Result:
    """One scenario's figures; ``as_json()`` is what ``--json`` prints."""

    scenario: str
    nodes: int
    seed: int
    reach: float
    rounds_to_99: int | None
    rounds_to_999: int | None
    rounds_to_100: int | None
    seconds_to_99: float | None
    seconds_to_999: float | None
    seconds_to_100: float | None
    duplicates_per_node: float | None  # full record bodies received per node per record
    bytes_per_node: float | None  # gossip bytes sent per node during the measured window
    wall_seconds: float
    peak_rss_mb: float
    curve: tuple[float, ...] = ()
    false_promotion_rate: float | None = None
    cpu_seconds: float | None = None  # user + system CPU of the process while the scenario ran
    details: dict[str, Any] = field(default_factory=dict)
    round_definition: str = ROUND_DEFINITION

    @classmethod
    def of(cls, scenario: str, nodes: int, seed: int, reach: Reach, **kwargs: Any) -> Result:
        fields = asdict(reach)
        return cls(scenario=scenario, nodes=nodes, seed=seed, **fields, **kwargs)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["curve"] = list(self.curve)
        return out


def traffic(net, before: tuple, nodes: Iterable[int], records: int) -> tuple[float, float]:
    """(duplicates_per_node, bytes_per_node) since ``before`` (a ``traffic_counters()`` snapshot).

    duplicates_per_node: full bodies received per node per record (1.0 is one body each); the
    33-byte announcements and reconciliation ids do not count. bytes_per_node: every gossip byte
    the nodes sent in the window (announcements, Wants, bodies, reconciliation, peer exchange).
    """
    nodes = list(nodes)
    (bodies_before, sent_before), (bodies_after, sent_after) = before, net.traffic_counters()
    bodies = sum(bodies_after[i] - bodies_before[i] for i in nodes)
    sent = sum(sent_after[i] - sent_before[i] for i in nodes)
    return round(bodies / (len(nodes) * records), 4), round(sent / len(nodes), 1)
