"""The two-agent experiment (design paper §7.5): does agent B stop making the mistakes only agent
A has met?

Two commons nodes, each with its own ``COMMONS_HOME``, transcripts folder and memory folder, on one
scripted clock that advances a day at a time. Every day each scripted agent
(``simulations.experiment.task_world``) works one session, written as a real Claude Code transcript; every
night each node ingests the day's transcripts and sleeps through the ordinary command line
(``commons --at NIGHT ingest|sleep``), then the two nodes meet through the link, then each renders
its memory folder, which the agent reads the next morning. Nothing but signed records ever goes from
one home to the other.

**Arms**, over the same seed: ``control`` (publishing off), ``trusted`` (B names A's author key in
``[trust] authors``: one person running two agents) and ``peer_review`` (no trust in A,
``[trust] required = 1``: B must confirm a lesson once itself before it is common).

**The link.** :class:`DaemonLink` runs both nodes as real daemons on loopback, each night, started
``--at`` the night's time, dialling each other through a byte-counting relay of this harness (which
is how the bytes that crossed the wire are measured) until each holds the other's records.
:class:`FileLink` (``--link file``: ``commons export`` piped into ``commons import``) is a fallback
for machines where daemons cannot listen, and is named as such in every output. The links live in
``simulations.experiment.links``, a home driven through the CLI in ``simulations.experiment.homes``, the
report in ``simulations.experiment.experiment_doc``.

Run ``python -m simulations.experiment --json`` (``make experiment`` also writes
``docs/experiment.md``); ``--a-transcripts DIR --b-transcripts DIR`` replays recorded sessions
instead of the scripted world.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from commons.node.report import accuracy
from simulations.experiment.task_world import (Encounter, Outcome, PitfallKind, Plan, ScriptedAgent, day_time, iso,
                                    make_plan)
from simulations.experiment.experiment_doc import write_doc
from simulations.experiment.homes import ExperimentError, Node
from simulations.experiment.links import DaemonLink, FileLink, Link, make_link

ARMS = ("control", "trusted", "peer_review")
__all__ = ["ARMS", "ExperimentError", "Node", "DaemonLink", "FileLink", "Link", "make_link", "run_arm",
           "run_experiment", "summarise", "replay_arm", "main"]


# --------------------------------------------------------------------------------------------
# One arm over the scripted world


def arm_sections(arm: str, a_author: str | None) -> dict[str, dict]:
    """Config of B per arm (A gets the same, with no trust in B's key)."""
    gossip = {"sync_interval": 0.3, "backoff_base": 0.2, "backoff_cap": 1.0, "discovery": False}
    if arm == "trusted":
        return {"gossip": gossip, "trust": {"authors": [a_author] if a_author else []}}
    if arm == "peer_review":
        return {"gossip": gossip, "trust": {"required": 1}}
    if arm == "control":
        return {"gossip": gossip}
    raise ValueError(f"unknown arm {arm!r}; expected one of {', '.join(ARMS)}")


@dataclass
class ArmRun:
    arm: str
    link: str
    a: Node
    b: Node
    encounters: list[Encounter]
    bytes_crossed: int
    exchange_seconds: list[float]
    seconds: float


def run_arm(arm: str, plan: Plan, seed: int, root: Path, *, prefer: str = "daemon",
            subprocess_cli: bool = False) -> ArmRun:
    started = time.monotonic()
    a, b = Node("ada", root / "ada", subprocess_cli), Node("bo", root / "bo", subprocess_cli)
    a_id = a.init(arm_sections("control" if arm == "trusted" else arm, None))
    b.init(arm_sections(arm, a_id["author"]))
    link = make_link(publish=arm != "control", prefer=prefer)
    link.start(a, b)
    agents = {n.name: ScriptedAgent(n.name, n.transcripts, n.memory, seed=seed) for n in (a, b)}
    try:
        for day in range(1, plan.days + 1):
            for node in (a, b):
                agents[node.name].work(day, plan.sessions.get((node.name, day), ()))
            for node in (a, b):
                node.night(iso(day_time(day + 1, 3)))
            link.exchange(iso(day_time(day + 1, 3, 30)))
            for node in (a, b):
                node.cli("render", "--json", at=iso(day_time(day + 1, 3, 45)))
    finally:
        link.close()
    return ArmRun(arm, link.kind, a, b, agents["ada"].encounters + agents["bo"].encounters,
                  link.bytes_crossed(), list(getattr(link, "seconds", [])), time.monotonic() - started)


# --------------------------------------------------------------------------------------------
# Measurements (design paper §7)


def per_day(encounters: Sequence[Encounter], node: Node, days: int, a_only: Sequence[str] = ()) -> list[dict]:
    """Per day of one agent: the §7 figures, from its encounters and from what its node saw."""
    out, met_before, cumulative = [], set(), {"confirmed": 0, "prevented": 0, "failed": 0}
    for day in range(1, days + 1):
        today = [e for e in encounters if e.day == day]
        errors = [e for e in today if e.kind is PitfallKind.ERROR and e.outcome is Outcome.MET]
        corrections = [e for e in today if e.kind is PitfallKind.CONVENTION and e.outcome is Outcome.MET]
        repeated_errors = sum(e.pitfall in met_before for e in errors)
        restated = sum(e.pitfall in met_before for e in corrections)
        met_before |= {e.pitfall for e in errors + corrections}
        seen = node.ingest_counts[day - 1] if day <= len(node.ingest_counts) else {}
        night = node.night_counts[day - 1] if day <= len(node.night_counts) else {}
        for verdict in cumulative:
            cumulative[verdict] += night.get(f"predictions_{verdict}", 0)
        out.append({
            "day": day, "sessions": 1,
            "repeat_yourself": restated, "repeated_errors": repeated_errors,
            "errors": len(errors), "corrections": len(corrections),
            "errors_on_a_only": sum(e.pitfall in a_only for e in errors),
            "avoided": sum(e.outcome is Outcome.AVOIDED for e in today),
            # What commons itself saw in the day's transcripts: surprises per session.
            "surprises_seen": seen.get("error", 0) + seen.get("correction", 0),
            "prediction_accuracy": accuracy(cumulative),
        })
    return out


def _records_summary(run: ArmRun) -> dict:
    """Lessons published, verifications signed and lessons made common, per node."""
    out = {}
    for node in (run.a, run.b):
        mine = node.author
        records = node.records()
        by = lambda t, own: sum(r["type"] == t and (r["record"].get("author") == mine) == own for r in records)
        common = []
        with contextlib.suppress(ExperimentError):
            common = node.cli("lessons", "--status", "common", "--json")
        out[node.name] = {
            "lessons_published": by("lesson", True), "lessons_received": by("lesson", False),
            "verifications_signed": by("verification", True), "verifications_received": by("verification", False),
            "lessons_common": len(common),
        }
    return out


def summarise(run: ArmRun, plan: Plan) -> dict:
    enc = run.encounters
    b_on_a_only = [e for e in enc if e.agent == "bo" and e.pitfall in plan.a_only]
    b_on_own = [e for e in enc if e.agent == "bo" and e.pitfall in plan.b_own]
    days = {n.name: per_day([e for e in enc if e.agent == n.name], n, plan.days, plan.a_only) for n in (run.a, run.b)}

    def rates(rows: list[dict]) -> dict:
        sessions = sum(r["sessions"] for r in rows) or 1
        return {"repeat_yourself_rate": round(sum(r["repeat_yourself"] for r in rows) / sessions, 4),
                "repeated_error_rate": round(sum(r["repeated_errors"] for r in rows) / sessions, 4),
                "surprises_per_session": round(sum(r["surprises_seen"] for r in rows) / sessions, 4),
                "prediction_accuracy": rows[-1]["prediction_accuracy"] if rows else None}

    return {
        "arm": run.arm, "link": run.link,
        "b_errors_on_a_only_pitfalls": sum(e.outcome is Outcome.MET for e in b_on_a_only),
        "b_encounters_with_a_only_pitfalls": len(b_on_a_only),
        "b_avoided_a_only_via_common": sum(e.outcome is Outcome.AVOIDED and e.layer == "common" for e in b_on_a_only),
        "b_errors_on_own_pitfalls": sum(e.outcome is Outcome.MET for e in b_on_own),
        "agents": {name: rates(rows) for name, rows in days.items()},
        "per_day": days,
        "records": _records_summary(run),
        "bytes_crossed": run.bytes_crossed,
        "seconds": round(run.seconds, 2),
        "exchange_seconds_mean": round(sum(run.exchange_seconds) / len(run.exchange_seconds), 3)
        if run.exchange_seconds else None,
    }


def run_experiment(seed: int = 7, days: int = 28, a_only: int = 5, b_own: int = 3, *,
                   arms: Sequence[str] = ARMS, workdir: Path | None = None, prefer: str = "daemon",
                   subprocess_cli: bool = False) -> dict:
    plan = make_plan(seed, days, a_only, b_own)
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="commons-experiment-"))
    result: dict = {"seed": seed, "days": days, "a_only_pitfalls": list(plan.a_only),
                    "b_own_pitfalls": list(plan.b_own), "workdir": str(root), "arms": {}}
    for arm in arms:
        if (root / arm).exists():
            shutil.rmtree(root / arm)
        summary = summarise(run_arm(arm, plan, seed, root / arm, prefer=prefer, subprocess_cli=subprocess_cli), plan)
        result["arms"][arm] = summary
        result[f"b_errors_on_a_only_pitfalls_{arm}"] = summary["b_errors_on_a_only_pitfalls"]
    result["link"] = sorted({s["link"] for s in result["arms"].values()})
    return result


# --------------------------------------------------------------------------------------------
# Recorded sessions instead of the scripted world


def _first_time(path: Path) -> float | None:
    from commons.clock import parse_time

    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                stamp = json.loads(line).get("timestamp")
            except (json.JSONDecodeError, AttributeError):
                continue
            if isinstance(stamp, str):
                with contextlib.suppress(ValueError):
                    return parse_time(stamp.replace("Z", "+00:00"))
    return None


def replay_arm(arm: str, a_dir: Path, b_dir: Path, root: Path, *, prefer: str = "daemon") -> dict:
    """Recorded sessions, each on its own day in time order; the figures that apply to them."""
    from datetime import datetime, timedelta, timezone

    a, b = Node("a", root / "a"), Node("b", root / "b")
    a.init(arm_sections("control" if arm == "trusted" else arm, None))
    b.init(arm_sections(arm, a.author))
    sessions = []
    for node, folder in ((a, a_dir), (b, b_dir)):
        for path in sorted(Path(folder).rglob("*.jsonl")):
            at = _first_time(path)
            if at is not None:
                sessions.append((at, node, path))
    days = sorted({datetime.fromtimestamp(at, timezone.utc).date() for at, _, _ in sessions})
    link = make_link(publish=arm != "control", prefer=prefer)
    link.start(a, b)
    try:
        for day in days:
            for at, node, path in sessions:
                if datetime.fromtimestamp(at, timezone.utc).date() == day:
                    shutil.copy2(path, node.transcripts / f"{int(at)}-{path.name}")
            night = datetime(day.year, day.month, day.day, 3, tzinfo=timezone.utc) + timedelta(days=1)
            for node in (a, b):
                node.night(iso(night))
            link.exchange(iso(night + timedelta(minutes=30)))
            for node in (a, b):
                node.cli("render", "--json", at=iso(night + timedelta(minutes=45)))
    finally:
        link.close()
    agents = {}
    for node in (a, b):
        sessions_n = sum(c.get("session", 0) for c in node.ingest_counts) or 1
        totals = {v: sum(n.get(f"predictions_{v}", 0) for n in node.night_counts)
                  for v in ("confirmed", "prevented", "failed")}
        agents[node.name] = {
            "sessions": sum(c.get("session", 0) for c in node.ingest_counts),
            "surprises_per_session": round(sum(c.get("error", 0) + c.get("correction", 0)
                                               for c in node.ingest_counts) / sessions_n, 4),
            "repeated_error_rate": round(_repeated_errors(node) / sessions_n, 4),
            "prediction_accuracy": accuracy(totals),
        }
    run = ArmRun(arm, link.kind, a, b, [], link.bytes_crossed(), [], 0.0)
    return {"arm": arm, "link": link.kind, "days": len(days), "agents": agents,
            "records": _records_summary(run), "bytes_crossed": link.bytes_crossed()}


def _repeated_errors(node: Node) -> int:
    """Error episodes that resemble (cosine ≥ 0.55, sleep's join rule) one of an earlier session."""
    from commons.core.embed import embed_many

    episodes = node.cli("episodes", "--kind", "error", "--limit", "0", "--json")["episodes"]
    episodes.sort(key=lambda e: e["at"])
    if not episodes:
        return 0
    vectors = embed_many([f"{e['tool']} {e['target']}\n{e['failure']}" for e in episodes])
    sims = vectors @ vectors.T
    return sum(any(sims[i, j] >= 0.55 and episodes[j]["session"] != episodes[i]["session"] for j in range(i))
               for i in range(len(episodes)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulations.experiment", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--a-only", type=int, default=5, help="error pitfalls A meets first (default 5)")
    parser.add_argument("--b-own", type=int, default=3, help="error pitfalls only B meets (default 3)")
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    parser.add_argument("--workdir", type=Path, help="keep the homes here (default: a temporary folder)")
    parser.add_argument("--link", choices=("daemon", "file"), default="daemon",
                        help="daemon (the experiment) or file (the export/import fallback)")
    parser.add_argument("--subprocess", action="store_true", help="run every command in its own process")
    parser.add_argument("--a-transcripts", type=Path, help="replay these recorded sessions as agent A's")
    parser.add_argument("--b-transcripts", type=Path, help="… and these as agent B's")
    parser.add_argument("--doc", type=Path, help="write the report (table and plots) to this markdown file")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a]
    if unknown := [a for a in arms if a not in ARMS]:
        parser.error(f"unknown arm(s) {', '.join(unknown)}; expected {', '.join(ARMS)}")
    if bool(args.a_transcripts) != bool(args.b_transcripts):
        parser.error("--a-transcripts and --b-transcripts go together")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="commons-experiment-"))
    try:
        if args.a_transcripts:
            result = {"mode": "replay", "arms": {arm: replay_arm(arm, args.a_transcripts, args.b_transcripts,
                                                                  workdir / arm, prefer=args.link) for arm in arms}}
        else:
            result = run_experiment(args.seed, args.days, args.a_only, args.b_own, arms=arms, workdir=workdir,
                                    prefer=args.link, subprocess_cli=args.subprocess)
    except ExperimentError as error:
        print(f"two_agents: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.doc and "mode" not in result:
        write_doc(result, args.doc, "make experiment")
    if args.json:
        slim = json.loads(json.dumps(result))
        print(json.dumps(slim, indent=2))
    else:
        for arm, s in result["arms"].items():
            print(f"{arm:12} B errors on A-only pitfalls: {s.get('b_errors_on_a_only_pitfalls', '–')}"
                  f"   link: {s['link']}   bytes: {s['bytes_crossed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
