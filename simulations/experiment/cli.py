"""``python -m simulations.experiment``: the N-agent experiment's command line (``make experiment``)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from simulations.experiment.agent import PLAIN_TRY_DAYS, iso
from simulations.experiment.experiment_doc import write_doc
from simulations.experiment.homes import ExperimentError, Node
from simulations.experiment.links import Network
from simulations.experiment.n_agents import ARMS, configure
from simulations.experiment.one_seed import run_experiment, scratch_folder
from simulations.experiment import seeds_doc
from simulations.experiment.seeds import kept_results, parse_seeds, run_seeds, summarise_seeds

SEED_ARMS = ("control", "trusted", "peer_review", "placebo", "placebo_trusted")  # --seeds' default arms


def _first_time(path: Path) -> float | None:
    from commons.clock import parse_time

    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                stamp = json.loads(line).get("timestamp")
            except (json.JSONDecodeError, AttributeError):
                continue
            if isinstance(stamp, str):
                try:
                    return parse_time(stamp.replace("Z", "+00:00"))
                except ValueError:
                    continue
    return None


def replay(arm: str, folders: dict[str, Path], root: Path) -> dict:
    """Recorded sessions, each agent's on their own days in time order: which lessons cross, which
    are confirmed, which become common."""
    nodes = [Node(name, root / name) for name in folders]
    for node in nodes:
        node.init()
    configure(arm, nodes)
    sessions = [(at, node, path) for node in nodes for path in sorted(folders[node.name].rglob("*.jsonl"))
                if (at := _first_time(path)) is not None]
    days = sorted({datetime.fromtimestamp(at, timezone.utc).date() for at, _, _ in sessions})
    network = Network(nodes, publish=arm != "control")
    try:
        for day in days:
            for at, node, path in sessions:
                if datetime.fromtimestamp(at, timezone.utc).date() == day:
                    shutil.copy2(path, node.transcripts / f"{int(at)}-{path.name}")
            night = datetime(day.year, day.month, day.day, 3, tzinfo=timezone.utc) + timedelta(days=1)
            for node in nodes:
                node.night(iso(night))
            network.exchange(iso(night + timedelta(minutes=30)))
            for node in nodes:
                node.cli("render", "--json", at=iso(night + timedelta(minutes=45)))
    finally:
        network.close()
    out = {}
    for node in nodes:
        records = node.records()
        lessons = node.cli("lessons", "--status", "all", "--json")
        out[node.name] = {
            "sessions": sum(c.get("session", 0) for c in node.ingest_counts),
            "lessons_published": sum(r["type"] == "lesson" and r["record"].get("author") == node.author
                                     for r in records),
            "verifications_signed": sum(r["type"] == "verification" and r["record"].get("author") == node.author
                                        for r in records),
            "crossed": [l["text"] for l in lessons if l["origin"] != "own"],  # received from the others
            "confirmed": [l["text"] for l in lessons if l["origin"] != "own" and l.get("independent")],
            "common": [l["text"] for l in lessons if l["origin"] != "own" and l["status"] == "common"],
        }
    return {"arm": arm, "days": len(days), "agents": out, "bytes_on_the_wire": network.bytes_crossed()}


def headline(result: dict) -> dict:
    """What one seed's run comes to, for the table of seeds."""
    arms = result["arms"]
    return {"seed": result["seed"], "agents": result["agents"], "days": result["days"],
            "plain_try_days": result.get("plain_try_days", PLAIN_TRY_DAYS),
            "reduction": result["reduction"], "misled_by_wrong_lesson": result["misled_by_wrong_lesson"],
            "stale_days_to_leave_all": result["stale_days_to_leave_all"],
            "prediction_accuracy_by_week": result["prediction_accuracy_by_week"],
            "plain_try_errors_on_stable_pitfalls": {a: f.get("plain_try_errors_on_stable_pitfalls") for a, f in arms.items()},
            "wall_seconds": result.get("wall_seconds"), "cpu_seconds": result.get("cpu_seconds"),
            "load_average": result.get("load_average")}


def keep_headline(path: Path, result: dict) -> list[dict]:
    """Add (or replace) this seed's headline in ``path``; every seed's, by seed."""
    try:
        kept = json.loads(path.read_text("utf-8")) if path.exists() else []
    except json.JSONDecodeError as error:
        raise ExperimentError(f"{path} is not the JSON list --seeds-file writes ({error}); remove it") from None
    mine = headline(result)
    same = lambda k: (k.get("seed"), k.get("agents"), k.get("days"), k.get("plain_try_days", PLAIN_TRY_DAYS))
    kept = sorted([k for k in kept if same(k) != same(mine)] + [mine],
                  key=lambda k: (k["agents"], k["days"], -(k.get("plain_try_days", PLAIN_TRY_DAYS) or 0), k["seed"]))
    path.write_text(json.dumps(kept, indent=1) + "\n", "utf-8")
    return kept


def _pair(text: str) -> tuple[str, Path]:
    name, sep, folder = text.partition("=")
    if not sep or not name or not Path(folder).is_dir():
        raise argparse.ArgumentTypeError(f"expected AGENT=DIR with DIR a folder of .jsonl transcripts, got {text!r}")
    return name, Path(folder)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m simulations.experiment",
        description="N scripted agents on real commons daemons: do they stop making the mistakes another "
                    "agent met first? Arms: " + ", ".join(ARMS) + ".")
    parser.add_argument("--seed", type=int, default=7, help="the schedule's seed (default 7)")
    parser.add_argument("--seeds", metavar="SPEC",
                        help="run many seeds (1-20, 3,7,11) in parallel processes and print one summary: per figure "
                             "its mean and 95%% interval, the goals, and each seed's run under 'runs'")
    parser.add_argument("--jobs", type=int, metavar="N", help="with --seeds: seeds at a time (default: two per CPU)")
    parser.add_argument("--agents", type=int, default=8, help="how many agents and nodes (default 8)")
    parser.add_argument("--days", type=int, default=28, help="days of the run (default 28)")
    parser.add_argument("--pitfalls", type=int, default=8, help="error pitfalls, each met first by one agent (default 8)")
    parser.add_argument("--meets", type=int, default=3, help="times every other agent meets each pitfall (default 3)")
    parser.add_argument("--stable", action="store_true", help="no upstream fix and no wrong fix (item 4 off)")
    parser.add_argument("--plain-try-days", type=int, default=PLAIN_TRY_DAYS, metavar="N",
                        help=f"an agent tries a lesson whose failure was last seen N or more days ago plainly first "
                             f"(default {PLAIN_TRY_DAYS}; 0 or less: never, so stale lessons stay)")
    parser.add_argument("--arms", help=f"comma-separated, of {', '.join(ARMS)} (default: all; with --seeds: "
                                       f"{', '.join(SEED_ARMS)})")
    parser.add_argument("--workdir", type=Path, help="keep the homes here (default: a temporary folder, removed; "
                                                     "in memory, under /dev/shm, where the machine has it)")
    parser.add_argument("--transcripts-for", type=_pair, action="append", default=[], metavar="AGENT=DIR",
                        help="replay recorded sessions as AGENT's (repeat for each agent) instead of the scripted world")
    parser.add_argument("--doc", type=Path, help="write the report (table and plots) to this markdown file")
    parser.add_argument("--seeds-file", type=Path, metavar="FILE",
                        help="keep this run's headline in FILE (JSON, one entry per seed); --doc shows every seed in it")
    parser.add_argument("--keep-seeds", type=Path, metavar="FILE",
                        help="with --seeds: append each seed's result to FILE (JSON lines) as it ends")
    parser.add_argument("--from-seeds", type=Path, metavar="FILE",
                        help="summarise the seeds a --keep-seeds FILE holds instead of running any (with --doc, --history)")
    parser.add_argument("--history", action="store_true",
                        help="with --seeds: also replay the labelled real sets (python -m simulations.experiment.history) "
                             "and report them beside the scripted world")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    arms = [a for a in (args.arms or ",".join(SEED_ARMS if args.seeds else ARMS)).split(",") if a]
    if unknown := [a for a in arms if a not in ARMS]:
        parser.error(f"unknown arm(s) {', '.join(unknown)}; expected {', '.join(ARMS)}")
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs: at least 1, got {args.jobs}")
    if args.seeds or args.from_seeds:
        try:
            if args.from_seeds:
                kept = kept_results(args.from_seeds)
                wall = max(r["ended_at"] for r in kept) - min(r["run_started_at"] for r in kept) if kept else 0.0
                summary = dict(summarise_seeds(kept, wall), jobs=kept[0]["jobs"] if kept else None)
                args.seeds = ",".join(str(r["seed"]) for r in kept)
            else:
                seeds = parse_seeds(args.seeds)
                summary = run_seeds(seeds, args.jobs, progress=lambda line: print(line, file=sys.stderr, flush=True),
                                    keep=args.keep_seeds, agents=args.agents, days=args.days, pitfalls=args.pitfalls,
                                    meets=args.meets, arms=arms, changes=not args.stable,
                                    plain_try_days=args.plain_try_days if args.plain_try_days > 0 else None)
        except (ExperimentError, ValueError, OSError) as error:
            print(f"experiment: {error}", file=sys.stderr)
            return 1
        if args.history:
            from commons.ingest.lessons_bench import DEFAULT_HELD_OUT, find_sets, set_roots
            from simulations.experiment import history

            sets = history.usable(find_sets(set_roots()))
            summary["history"] = history.run(sets, DEFAULT_HELD_OUT) if sets else None
        if args.doc:
            ran = (f"--from-seeds {args.from_seeds}" if args.from_seeds
                   else f"--seeds {args.seeds}")
            seeds_doc.write(summary, args.doc, f"python -m simulations.experiment {ran}"
                                               + (" --history" if args.history else ""))
        if args.json:
            print(json.dumps(summary, indent=2))
        else:
            for key, s in summary["summary"].items():
                print(f"{key:38} mean {s['mean']}  95% [{s['ci95'][0]}, {s['ci95'][1]}]  (n={s['n']})")
            print(f"seeds {summary['seeds']} in {summary['wall_s']} s")
        return 0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="commons-experiment-", dir=scratch_folder()))
    try:
        if args.transcripts_for:
            if len(args.transcripts_for) < 2:
                parser.error("--transcripts-for: give at least two agents")
            folders = dict(args.transcripts_for)
            result = {"mode": "replay", "arms": {arm: replay(arm, folders, workdir / arm)
                                                 for arm in arms if arm != "no_fix_seen"}}
        else:
            result = run_experiment(args.seed, args.agents, args.days, args.pitfalls, args.meets, arms=arms,
                                    changes=not args.stable, workdir=workdir,
                                    plain_try_days=args.plain_try_days if args.plain_try_days > 0 else None)
    except (ExperimentError, ValueError) as error:
        print(f"experiment: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    seeds = None
    if args.seeds_file and "mode" not in result:
        try:
            seeds = keep_headline(args.seeds_file, result)
        except ExperimentError as error:
            print(f"experiment: {error}", file=sys.stderr)
            return 1
    if args.doc and "mode" not in result:
        write_doc(result, args.doc, "make experiment", result.get("encounters"), seeds)
    if args.json:
        print(json.dumps(result, indent=2))
    elif "reduction" in result:
        for arm, figures in result["arms"].items():
            print(f"{arm:12} errors on pitfalls met elsewhere first: {figures['errors_met_elsewhere_first']} of "
                  f"{figures['encounters_met_elsewhere_first']}   bytes: {figures['bytes_on_the_wire']}")
        print("reduction:", json.dumps(result["reduction"]))
    else:
        print(json.dumps(result, indent=2))
    return 0
