"""Who meets which pitfall on which day, by seed: the N-agent experiment's plan.

Each error pitfall is met first by one agent (a different agent for each pitfall, on different
days), twice, so that its error repeats into a lesson; every other agent meets it ``meets`` times
later in the run, on days of its own. Each agent also meets its project's two conventions three
times. The changing world (``changes=True``) fixes one pitfall upstream two thirds of the way in
and gives the first meeter of ``npm-ci-no-lockfile`` the quirk under which a wrong fix works.
Every meeting draws its own value (the package, the service, the branch's topic).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from simulations.experiment.world import CONVENTIONS, ERRORS, PITFALLS, WRONG_FIXES, Pitfall, World

QUIRKY = next(iter(WRONG_FIXES))  # the pitfall whose first meeter's machine has the quirk


@dataclass(frozen=True)
class Plan:
    days: int
    agents: tuple[str, ...]
    pitfalls: tuple[str, ...]  # the error pitfalls of this run
    first: Mapping[str, str]  # pitfall → the agent that meets it first
    fills: Mapping[tuple[str, int, str], str]  # (agent, day, pitfall) → its value at that meeting
    sessions: Mapping[tuple[str, int], tuple[str, ...]]  # (agent, day) → pitfalls met that day
    fixed_upstream: Mapping[str, int]  # pitfall → the day its command starts working
    quirk: tuple[str, str] | None  # (agent, pitfall)

    def tasks(self, agent: str, day: int) -> list[tuple[Pitfall, str]]:
        return [(PITFALLS[n], self.fills[(agent, day, n)]) for n in self.sessions.get((agent, day), ())]

    def world(self, shows_fix: bool = True, bad_authors: frozenset[str] = frozenset(), seed: int = 0) -> World:
        # The first meeter of a pitfall with a dangerous way round takes it; nobody else does.
        hasty = frozenset(self.first[n] for n in self.pitfalls if PITFALLS[n].dangerous_fix)
        return World(dict(self.fixed_upstream), self.quirk, shows_fix, bad_authors, hasty, seed)


def agent_names(n: int) -> tuple[str, ...]:
    base = ("ada", "bo", "cy", "dee", "eli", "fay", "gus", "hal", "ivy", "jo", "kit", "lu")
    return tuple(base[i] if i < len(base) else f"agent{i}" for i in range(n))


def make_plan(seed: int, agents: int = 8, days: int = 28, pitfalls: int = 8, meets: int = 3,
              changes: bool = True) -> Plan:
    if not 2 <= agents:
        raise ValueError(f"make_plan(): at least 2 agents, got {agents}")
    if not 1 <= pitfalls <= len(ERRORS):
        raise ValueError(f"make_plan(): between 1 and {len(ERRORS)} error pitfalls, got {pitfalls}")
    first_span = max(1, days // 3)
    if days < first_span + 2 + meets:
        raise ValueError(f"make_plan(): {days} days are too few for {meets} later meetings")
    rng = random.Random(seed)
    names = agent_names(agents)
    pool = [p.name for p in ERRORS]
    rng.shuffle(pool)
    chosen = pool[:pitfalls]
    if changes and QUIRKY not in chosen:
        chosen[-1] = QUIRKY
    sessions: dict[tuple[str, int], list[str]] = {}
    first, fills = {}, {}
    for i, name in enumerate(chosen):
        who = names[i % agents]
        first[name] = who
        d1 = rng.randint(1, first_span)
        d2 = d1 + rng.randint(1, 2)
        for day in (d1, d2):
            sessions.setdefault((who, day), []).append(name)
        for other in names:
            if other != who:
                for day in rng.sample(range(d2 + 1, days + 1), meets):
                    sessions.setdefault((other, day), []).append(name)
    for i, agent in enumerate(names):
        for conv in CONVENTIONS[i % len(CONVENTIONS)]:
            for day in rng.sample(range(1, days + 1), 3):
                sessions.setdefault((agent, day), []).append(conv.name)
    # Each meeting has its own value (another package, another service): a lesson must generalise.
    for (agent, day), met in sorted(sessions.items()):
        for name in met:
            fills[(agent, day, name)] = rng.choice(PITFALLS[name].fills)
    fixed = {}
    quirk = None
    if changes:
        quirk = (first[QUIRKY], QUIRKY)
        stable = [n for n in chosen if n != QUIRKY]
        if stable:
            fixed[stable[0]] = max(2, (2 * days) // 3)
    return Plan(days, names, tuple(chosen), first, fills, {k: tuple(v) for k, v in sessions.items()}, fixed, quirk)
