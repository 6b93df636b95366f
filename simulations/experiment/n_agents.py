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
shows a fix: the negative control).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from simulations.experiment.agent import PLAIN_TRY_DAYS, Agent, Encounter, day_time, iso, read_memory
from simulations.experiment.homes import Node
from simulations.experiment.links import Network
from simulations.experiment.schedule import Plan

ARMS = ("control", "trusted", "peer_review", "no_fix_seen")
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
    skipped_nights: int = 0  # nights on which no node had anything new, so no daemon was started


def configure(arm: str, nodes: Sequence[Node]) -> None:
    authors = {n.name: n.author for n in nodes}
    for node in nodes:
        sections: dict[str, dict] = {"gossip": GOSSIP}
        if arm in ("trusted", "no_fix_seen"):
            sections["trust"] = {"authors": [a for name, a in authors.items() if name != node.name]}
        elif arm not in ("control", "peer_review"):
            raise ValueError(f"unknown arm {arm!r}; expected one of {', '.join(ARMS)}")
        node.configure(sections)
    if arm == "peer_review":  # the web of trust: every node vouches for every other's author key
        for node in nodes:
            for name, author in authors.items():
                if name != node.name:
                    node.cli("vouch", author, "--json", at=iso(day_time(1)))


def _lessons(node: Node, at: str) -> list[dict]:
    return node.cli("lessons", "--status", "all", "--json", at=at)


def _movable(node: Node, lessons: list[dict], publish: bool) -> frozenset:
    """What a night's gossip could carry from or to this node: the records it holds and the
    shared lessons its daemon would sign on start. When no node's changed, a night's daemons
    could move nothing, and the harness skips starting them (it says how many nights it did)."""
    shared = {(l["id"], l["text"]) for l in lessons if l["origin"] == "own" and l["scope"] == "shared"
              and l["status"] == "active" and publish}
    return frozenset(node.keys()) | frozenset(shared)


def run_arm(arm: str, plan: Plan, seed: int, root: Path, plain_try_days: int | None = PLAIN_TRY_DAYS) -> ArmRun:
    started = time.monotonic()
    if root.exists():
        shutil.rmtree(root)
    nodes = [Node(name, root / name) for name in plan.agents]
    for node in nodes:
        node.init()
    configure(arm, nodes)
    network = Network(nodes, publish=arm != "control")
    world = plan.world(shows_fix=arm != "no_fix_seen")
    agents = {n.name: Agent(n.name, f"/home/{n.name}/src/{n.name}-app", n.transcripts, n.memory, world, seed,
                            plain_try_days=plain_try_days) for n in nodes}
    run = ArmRun(arm, nodes, [], 0, 0.0, [])
    moved: list[frozenset] | None = None
    try:
        for day in range(1, plan.days + 1):
            for node in nodes:
                agents[node.name].work(day, plan.tasks(node.name, day))
            for node in nodes:
                node.night(iso(day_time(day + 1, 3)))
            at = iso(day_time(day + 1, 3, 30))
            now = [_movable(n, _lessons(n, at), network.publish) for n in nodes]
            if now != moved:
                network.exchange(at)
                moved = [_movable(n, _lessons(n, at), network.publish) for n in nodes]
            else:
                run.skipped_nights += 1
            at = iso(day_time(day + 1, 3, 45))
            states = {"own": 0, "common": 0, "candidate": 0}
            for node in nodes:
                node.cli("render", "--json", at=at)
                for lesson in _lessons(node, at):
                    key = "own" if lesson["origin"] == "own" else lesson["status"]
                    if key in states:
                        states[key] += 1
            run.states.append(states)
            run.memories.append({n.name: sorted({l.about for l in read_memory(n.memory) if l.about}) for n in nodes})
    finally:
        network.close()
    run.encounters = [e for a in agents.values() for e in a.encounters]
    run.bytes_crossed = network.bytes_crossed()
    run.exchange_seconds = network.seconds
    run.seconds = time.monotonic() - started
    return run
