"""The N-agent experiment (issue #17; design paper §7.5): do agents stop making the mistakes
another agent met first, when nothing but signed lessons crosses between them?

N commons nodes (default 8), each with its own ``COMMONS_HOME``, transcripts folder and memory
folder, on one scripted clock (``--at``) that advances a day at a time. Each day every scripted
agent (:mod:`simulations.experiment.agent`: no oracle, it reads its memory folder and follows a
lesson only when its text names a fix) works one session in the world
(:mod:`simulations.experiment.world`), written as a real Claude Code transcript. Each night each
node ingests and sleeps through the ordinary command line, then all N daemons gossip over
loopback (:class:`~simulations.experiment.links.Network`: a ring of bootstrap peers and peer
exchange), then each node renders its memory folder for the next morning.

Arms over the same seed: ``control`` (publishing off), ``trusted`` (every agent names every other
author key in ``[trust] authors``), ``peer_review`` (the default policy, ``required = 3``, a web of
trust built by every node vouching for the others), ``no_fix_seen`` (trusted, but no session ever
shows a fix: the negative control), and the placebo arms (issue #29 item 3): ``placebo`` is
peer_review with ``PLACEBO_AUTHORS`` bad authors among the nodes, whose machines make a wrong
(another pitfall's) or dangerous fix work, so their commons learns and publishes it; the honest
nodes vouch only for each other. ``placebo_trusted`` is the same world with every author trusted:
the damage a trusted bad author does.
"""

from __future__ import annotations

import functools
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from simulations.experiment.agent import PLAIN_TRY_DAYS, Agent, Encounter, ReadLesson, day_time, iso, read_memory
from simulations.experiment.homes import Node
from simulations.experiment.links import Network
from simulations.experiment.reader import read_note
from simulations.experiment.schedule import Plan

ARMS = ("control", "trusted", "peer_review", "no_fix_seen", "placebo", "placebo_trusted")
PLACEBO_AUTHORS = 2  # bad authors in the placebo arms: the last agents of the plan
GOSSIP = {"sync_interval": 0.2, "backoff_base": 0.1, "backoff_cap": 0.5, "discovery": False}


@dataclass
class ArmRun:
    arm: str
    nodes: list[Node]
    encounters: list[Encounter]
    bytes_crossed: int
    seconds: float
    exchange_seconds: list[float]
    states: list[dict] = field(default_factory=list)  # per night: lessons by state, summed over nodes
    memories: list[dict] = field(default_factory=list)  # per night: agent → failed-command heads in its folder
    # Per night: agent → the error lessons its node holds, as (origin, scope, status, head, names a fix).
    held: list[dict] = field(default_factory=list)
    skipped_nights: int = 0  # nights on which no node had anything new, so no daemon was started
    bad: frozenset[str] = frozenset()  # the bad authors among the agents (placebo arms)


def bad_authors(arm: str, agents: Sequence[str]) -> frozenset[str]:
    """The agents that are bad authors in ``arm`` (none outside the placebo arms)."""
    return frozenset(agents[-PLACEBO_AUTHORS:]) if arm.startswith("placebo") else frozenset()


def configure(arm: str, nodes: Sequence[Node]) -> None:
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; expected one of {', '.join(ARMS)}")
    authors = {n.name: n.author for n in nodes}
    bad = bad_authors(arm, [n.name for n in nodes])
    for node in nodes:
        sections: dict[str, dict] = {"gossip": GOSSIP}
        if arm in ("trusted", "no_fix_seen", "placebo_trusted"):
            sections["trust"] = {"authors": [a for name, a in authors.items() if name != node.name]}
        node.configure(sections)
    if arm in ("peer_review", "placebo"):  # the web of trust: every honest node vouches for the other honest ones
        for node in nodes:
            for name, author in authors.items():
                if name != node.name and name not in bad and node.name not in bad:
                    node.cli("vouch", author, "--json", at=iso(day_time(1)))


@functools.cache  # asked of every lesson held, every night: the same few texts again and again
def names_fix(text: str) -> bool:
    """The reader finds a fix in a lesson's text for the first command it quotes."""
    first = re.search(r"`([^`]+)`", text)
    return bool(first and read_note(text, first.group(1)).fix)


@functools.cache
def _about(text: str) -> str:
    """The program and subcommand a lesson's text is about, as the agent reads it."""
    return ReadLesson("", "", text).about


def _lessons(node: Node, at: str) -> list[dict]:
    return node.cli("lessons", "--status", "all", "--json", at=at)


def _shared(lessons: list[dict], publish: bool) -> frozenset:
    """The shared lessons a node's daemon would sign on start (none when publishing is off)."""
    return frozenset((l["id"], l["text"]) for l in lessons if publish and l["origin"] == "own"
                     and l["scope"] == "shared" and l["status"] == "active")


def run_arm(arm: str, plan: Plan, seed: int, root: Path, plain_try_days: int | None = PLAIN_TRY_DAYS, *,
            processes: bool = False) -> ArmRun:
    """One arm over ``plan``; ``processes``: each night's daemons as ``commons daemon`` processes
    (:class:`~simulations.experiment.links.Network`), not in this process."""
    started = time.monotonic()
    if root.exists():
        shutil.rmtree(root)
    nodes = [Node(name, root / name, secrets_from=f"{seed}/{name}") for name in plan.agents]
    for node in nodes:
        node.init()
    configure(arm, nodes)
    network = Network(nodes, publish=arm != "control", processes=processes, seed=seed)
    world = plan.world(shows_fix=arm != "no_fix_seen", bad_authors=bad_authors(arm, plan.agents), seed=seed)
    agents = {n.name: Agent(n.name, f"/home/{n.name}/src/{n.name}-app", n.transcripts, n.memory, world, seed,
                            plain_try_days=plain_try_days) for n in nodes}
    run = ArmRun(arm, nodes, [], 0, 0.0, [], bad=bad_authors(arm, plan.agents))
    moved: list[frozenset] | None = None
    try:
        for day in range(1, plan.days + 1):
            for node in nodes:
                agents[node.name].work(day, plan.tasks(node.name, day))
            for node in nodes:
                node.night(iso(day_time(day + 1, 3)))
            at = iso(day_time(day + 1, 3, 30))
            # What a night's gossip could carry: the records each node holds and the shared lessons its
            # daemon would sign on start. When nothing changed since the last exchange, the daemons
            # could move nothing, and the harness skips starting them (it says how many nights it did).
            # An exchange signs nothing new of a node's own, so after it only the records are read again.
            # With publishing off nothing can cross, so no daemon is started at all (control).
            shared = [_shared(_lessons(n, at), True) for n in nodes] if network.publish else []
            now = [frozenset(n.keys()) | s for n, s in zip(nodes, shared)] if network.publish else moved
            if now != moved:
                network.exchange(at)
                keys = [frozenset(n.keys()) for n in nodes]
                # A night that left a record short of some node is not one to skip after: the next
                # night exchanges again (a refused record keeps this so; it costs a night's daemons).
                moved = ([k | s for k, s in zip(keys, shared)]
                         if frozenset().union(*keys) == frozenset.intersection(*keys) else None)
            else:
                run.skipped_nights += 1
            at = iso(day_time(day + 1, 3, 45))
            states = {"own": 0, "common": 0, "candidate": 0}
            held = {}
            for node in nodes:
                node.cli("render", at=at, parse=False)  # what it rendered is read from the folder
                lessons = _lessons(node, at)
                for lesson in lessons:
                    key = "own" if lesson["origin"] == "own" else lesson["status"]
                    if key in states:
                        states[key] += 1
                held[node.name] = [(l["origin"], l["scope"], l["status"], _about(l["text"]), names_fix(l["text"]))
                                   for l in lessons if l["kind"] == "error"]
            run.states.append(states)
            run.held.append(held)
            run.memories.append({n.name: sorted({a for l in read_memory(n.memory) if (a := _about(l.text))})
                                 for n in nodes})
    finally:
        network.close()
    run.encounters = [e for a in agents.values() for e in a.encounters]
    run.bytes_crossed = network.bytes_crossed()
    run.exchange_seconds = network.seconds
    run.seconds = time.monotonic() - started
    return run
