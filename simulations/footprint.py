"""Where a spread's memory and time go, per node: python -m simulations.footprint --nodes 3000

    .venv/bin/python -m simulations.footprint --nodes 3000 [--engine real|model] [--top 15] [--time]

Runs ``spread`` (seed 1) under ``tracemalloc`` and prints, at its end (warm-up done, the lesson
held everywhere, the network still alive), the bytes per node held by each allocation site, most
first, and their total. ``--time`` runs it under ``cProfile`` instead and prints the functions
that spent the most time of their own. This is how docs/simulations.md ("Scale") found what a
real node costs, and so why 10^5 nodes need the model engine.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tracemalloc

from simulations import scenarios


def memory(nodes: int, engine: str, top: int) -> str:
    tracemalloc.start(1)
    snapshots = []
    scenarios.spread(nodes, 1, engine=engine, inspect=lambda net: snapshots.append(tracemalloc.take_snapshot()))
    tracemalloc.stop()
    stats = snapshots[0].statistics("lineno")
    total = sum(s.size for s in stats)
    lines = [f"spread, {nodes:,} nodes, {engine} engine: {total / 1e6:,.1f} MB traced, {total / nodes:,.0f} bytes a node",
             f"{'bytes/node':>11} {'objects/node':>13}  where"]
    for s in stats[:top]:
        frame = s.traceback[0]
        lines.append(f"{s.size / nodes:>11,.0f} {s.count / nodes:>13.1f}  {os.path.relpath(frame.filename)}:{frame.lineno}")
    return "\n".join(lines)


def cpu(nodes: int, engine: str, top: int) -> str:
    profile = cProfile.Profile()
    profile.runcall(scenarios.spread, nodes, 1, engine=engine)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulations.footprint", description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3000, help="nodes in the spread (default 3000)")
    parser.add_argument("--engine", choices=("real", "model"), default="real", help="which engine (default real)")
    parser.add_argument("--top", type=int, default=15, help="rows to print (default 15)")
    parser.add_argument("--time", action="store_true", help="profile CPU time instead of memory")
    args = parser.parse_args(argv)
    print((cpu if args.time else memory)(args.nodes, args.engine, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
