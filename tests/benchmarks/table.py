"""``docs/benchmarks.md`` from ``.bench/bench_*.json``: one table of goals and figures, no figure by hand.

    .venv/bin/python -m tests.benchmarks.table                   # after `make bench` (which runs it)
    .venv/bin/python -m tests.benchmarks.table --bench DIR --out FILE

Each bench's figures (``.bench/<bench>.json``, its ``--json`` output) may carry ``"goals"``, a list of
``{"goal", "figure", "target", "met", "command"}`` (``tests/benchmarks/goals.py``); its run record
(``.bench/<bench>.run.json``, written by ``tests/benchmarks/run.py``) says when it ran, in which mode,
under what load, on which processor and commit. The page holds the goals table (each row naming its
bench and run), the runs, the benches that failed or state no goal, and then the hand-written prose of
``docs/benchmarks-notes.md``, which holds no figure.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTES = ROOT / "docs" / "benchmarks-notes.md"
FIELDS = ("goal", "figure", "target", "met", "command")


class BenchFileError(ValueError):
    """A file in the bench folder that is not what a bench writes (the bench's fault, named)."""


@dataclass(frozen=True)
class Bench:
    """One bench's figures and run record as found in the folder."""

    name: str
    goals: list[dict[str, Any]]
    run: dict[str, Any]  # {} when the figures came without a record (a bench run by hand)
    failed: str  # the end of its error, '' when it ran
    problems: list[str]  # goals not in the shape FIELDS says, named


def _goals(name: str, figures: Any) -> tuple[list[dict[str, Any]], list[str]]:
    if not isinstance(figures, dict) or "goals" not in figures:
        return [], []
    if not isinstance(figures["goals"], list):
        return [], [f"{name}: \"goals\" is a {type(figures['goals']).__name__}, not a list"]
    good, problems = [], []
    for n, g in enumerate(figures["goals"]):
        missing = [f for f in FIELDS if not isinstance(g, dict) or f not in g]
        if missing or not isinstance(g["met"], bool):
            problems.append(f"{name}: goal {n + 1} lacks {', '.join(missing) or 'a true/false met'}")
            continue
        good.append(g)
    return good, problems


def read(folder: Path) -> list[Bench]:
    """Every bench that left figures or a run record in ``folder``, by name."""
    # bench_* only: `make fuzz`, `make mutation` and `make experiment` write their own files there too.
    names = sorted({p.name.removesuffix(".run.json").removesuffix(".json") for p in folder.glob("bench_*.json")})
    found = []
    for name in names:
        figures_path, run_path = folder / f"{name}.json", folder / f"{name}.run.json"
        try:
            run = json.loads(run_path.read_text()) if run_path.exists() else {}
            figures = json.loads(figures_path.read_text()) if figures_path.exists() else None
        except json.JSONDecodeError as error:
            raise BenchFileError(f"{folder}/{name}: not JSON ({error}); run the bench again") from None
        if not run and figures_path.exists():
            run = {"started": figures_path.stat().st_mtime, "mode": figures.get("mode", "unknown")
                   if isinstance(figures, dict) else "unknown"}
        goals, problems = _goals(name, figures)
        failed = run.get("error", "") if figures is None else ""
        found.append(Bench(name, goals, run, failed.strip().splitlines()[-1] if failed else "", problems))
    return found


def _when(seconds: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds)) if seconds else "unknown"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(benches: list[Bench], notes: str, made: float) -> str:
    modes = sorted({b.run.get("mode", "unknown") for b in benches})
    loads = [x for b in benches for x in (b.run.get("load_before", [None])[0], b.run.get("load_after", [None])[0])
             if x is not None]
    cpus = sorted({f"{b.run['cpu']} ({b.run.get('cpus')} CPUs)" for b in benches if b.run.get("cpu")})
    commits = sorted({b.run["commit"] for b in benches if b.run.get("commit")})
    goals = [(b, g) for b in benches for g in b.goals]
    lines = [
        "# Benchmarks", "",
        "<!-- Made by `python -m tests.benchmarks.table` (`make bench` runs it) from .bench/bench_*.json: do not edit."
        " The prose is docs/benchmarks-notes.md. -->", "",
        f"Made {_when(made)} from the figures of {len(benches)} benches, mode "
        f"**{' and '.join(modes) or 'none'}** (`BENCH_QUICK=1` is the quick one); "
        f"processor {', '.join(cpus) or 'unknown'}; commit {', '.join(commits) or 'unknown'}; "
        + (f"load average (1 minute) from {min(loads):g} to {max(loads):g} while they ran." if loads
           else "load not recorded (figures from benches run by hand)."), "",
        f"## Goals: {sum(g['met'] for _, g in goals)} of {len(goals)} met", "",
        "| goal | figure | target | met | bench, mode, run | command |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for b, g in goals:
        run = f"`{b.name}`, {b.run.get('mode', 'unknown')}, {_when(b.run.get('started'))}"
        lines.append(f"| {_cell(g['goal'])} | {_cell(g['figure'])} | {_cell(g['target'])} | "
                     f"{'yes' if g['met'] else '**no**'} | {run} | `{_cell(g['command'])}` |")
    lines += ["", "## Runs", "", "| bench | mode | started | wall (s) | CPU (s) | load before → after | commit | goals |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for b in benches:
        r = b.run
        load = f"{r['load_before'][0]:g} → {r['load_after'][0]:g}" if "load_before" in r else "not recorded"
        state = f"failed: {_cell(b.failed)}" if b.failed else (str(len(b.goals)) if b.goals else "none stated")
        lines.append(f"| `{b.name}` | {r.get('mode', 'unknown')} | {_when(r.get('started'))} | {r.get('wall_s', '')} | "
                     f"{r.get('cpu_s', '')} | {load} | {r.get('commit', 'unknown')} | {state} |")
    problems = [p for b in benches for p in b.problems]
    if problems:
        lines += ["", "## Goals the table could not read", ""] + [f"- {_cell(p)}" for p in problems]
    return "\n".join(lines) + "\n\n" + notes.strip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=ROOT / ".bench", help="the folder of bench figures")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--notes", type=Path, default=NOTES)
    args = parser.parse_args(argv)
    benches = read(args.bench)
    if not benches:
        parser.error(f"{args.bench} holds no bench figures: run `make bench` (or BENCH_QUICK=1 make bench) first")
    args.out.write_text(render(benches, args.notes.read_text(), time.time()))
    print(f"{args.out}: {sum(len(b.goals) for b in benches)} goals from {len(benches)} benches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
