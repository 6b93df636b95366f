"""Spread and revoke at 10^5 nodes (issue #31 item 4): wall time, CPU time and peak RSS.

    .venv/bin/python -m tests.benchmarks.bench_simulations [--nodes 100000] [--json]

Each scenario runs in its own process (``python -m simulations S --nodes N --seed 1 --json``:
above 30,000 nodes, the model engine), so its peak RSS is its own; the goals -- at most 30
minutes and 4 GB on the project's 2 cores, every node reached -- are ``simulations.report``'s,
the ones docs/simulations.md states. The machine's load average is printed beside them: wall
time on a shared machine is not CPU time, which the scenario reports too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simulations.report import LARGE_NODES, scale_goals  # noqa: E402

SCENARIOS = ("spread", "revoke")


def run(scenario: str, nodes: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "simulations", scenario, "--nodes", str(nodes), "--seed", "1", "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def measure(nodes: int) -> dict:
    runs, goals = {}, []
    for scenario in SCENARIOS:
        load = os.getloadavg()[0]
        result = run(scenario, nodes)
        result.pop("curve", None)
        result["load_average_before"] = round(load, 2)
        runs[scenario] = result
        goals += scale_goals(result, f".venv/bin/python -m simulations {scenario} --nodes {nodes} --seed 1 --json")
    return {"nodes": nodes, "runs": runs, "goals": goals}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=LARGE_NODES, help=f"nodes (default {LARGE_NODES:,})")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    figures = measure(args.nodes)
    if args.json:
        print(json.dumps(figures))
    else:
        for name, r in figures["runs"].items():
            print(f"{name}: {r['nodes']:,} nodes ({r['details'].get('engine', 'real')} engine), rounds "
                  f"{r['rounds_to_99']} / {r['rounds_to_999']} / {r['rounds_to_100']}, {r['wall_seconds']:,.0f} s wall, "
                  f"{r['cpu_seconds']:,.0f} CPU-s, {r['peak_rss_mb']:,.0f} MB peak RSS (load {r['load_average_before']})")
        for g in figures["goals"]:
            print(f"  {'met' if g['met'] else 'MISSED'}: {g['goal']}: {g['figure']} ({g['target']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
