"""One scenario over several seeds: each seed's figures and their mean, minimum and maximum.

A figure at one seed can move by a round when nothing got worse: rounds to 99.9% at 10,000 nodes
is decided by the last ten nodes, and any change that draws one random number more (or closes one
session more) sends the run down another path. Before saying a change moved a figure, compare
sweeps: ``python -m simulations spread --nodes 10000 --seeds 1-10`` before and after.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from simulations.measure import Result

# The figures a sweep summarises (each Result field that is a number, or None when never reached).
FIGURES = ("reach", "rounds_to_99", "rounds_to_999", "rounds_to_100", "seconds_to_99", "seconds_to_999",
           "seconds_to_100", "duplicates_per_node", "bytes_per_node", "false_promotion_rate")


@dataclass(frozen=True)
class Spread:
    """One figure over the seeds. ``missed``: seeds where it was never reached (None), left out of
    mean / lowest / highest, so a threshold some seeds never met is not averaged as if they had."""

    mean: float
    lowest: float
    highest: float
    missed: int

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "min": self.lowest, "max": self.highest, "missed": self.missed}


@dataclass(frozen=True)
class Sweep:
    scenario: str
    nodes: int
    seeds: tuple[int, ...]
    runs: tuple[Result, ...]
    summary: dict[str, Spread]

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "nodes": self.nodes, "seeds": list(self.seeds),
                "summary": {name: s.to_json() for name, s in self.summary.items()},
                "runs": [r.as_json() for r in self.runs]}


def summarise(runs: Sequence[Result]) -> dict[str, Spread]:
    """Mean, minimum and maximum of each figure some run reported."""
    out: dict[str, Spread] = {}
    for name in FIGURES:
        values = [getattr(r, name) for r in runs]
        reached = [v for v in values if v is not None]
        if not reached:
            continue  # the scenario does not report this figure
        out[name] = Spread(round(statistics.fmean(reached), 4), min(reached), max(reached), len(values) - len(reached))
    return out


def sweep(run: Callable[[int, int], Result], scenario: str, nodes: int, seeds: Sequence[int]) -> Sweep:
    """Run ``run(nodes, seed)`` for each seed, one after another (each 10,000-node run holds ~0.5 GB)."""
    runs = tuple(run(nodes, seed) for seed in seeds)
    return Sweep(scenario, nodes, tuple(seeds), runs, summarise(runs))


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"1-10"`` or ``"1,4,7"`` (or both: ``"1-3,9"``) as a tuple of seeds, in the order given."""
    seeds: list[int] = []
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            low = int(first)
            high = int(last) if dash else low
        except ValueError:
            raise ValueError(f"--seeds {text!r}: expected seeds like 1-10 or 1,4,7, got {part.strip()!r}") from None
        if high < low:
            raise ValueError(f"--seeds {text!r}: the range {part.strip()!r} runs backwards")
        seeds.extend(range(low, high + 1))
    return tuple(seeds)
