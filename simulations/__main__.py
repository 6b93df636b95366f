"""python -m simulations SCENARIO --nodes N --seed S [--json] [--plot FILE.png]

Scenarios: spread, revoke, churn, partition, sybil, reconcile (docs/simulations.md says what each
models and how its figures are defined).
"""

from __future__ import annotations

import argparse
import json
import sys

from simulations.report import commit
from simulations.scenarios import SCENARIOS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulations", description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS), help="what to simulate")
    parser.add_argument("--nodes", type=int, default=1000, help="number of nodes (default 1000; reconcile: ignored)")
    parser.add_argument("--seed", type=int, default=1, help="the seed every random draw derives from (default 1)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the result (needs matplotlib: pip install '.[plot]')")
    args = parser.parse_args(argv)
    if args.nodes < 2:
        parser.error("--nodes must be at least 2")

    result = SCENARIOS[args.scenario](args.nodes, args.seed)
    figures = {**result.as_json(), "commit": commit()}
    if args.json:
        print(json.dumps(figures))
    else:
        _print(figures)
    if args.plot:
        from simulations.plot import plot_results

        plot_results([figures], args.plot)
    return 0


def _print(figures: dict) -> None:
    print(f"{figures['scenario']}: {figures['nodes']} nodes, seed {figures['seed']}")
    for name, value in figures.items():
        if name in ("scenario", "nodes", "seed", "curve", "details", "round_definition", "commit"):
            continue
        print(f"  {name:<22} {value}")
    for name, value in figures["details"].items():
        print(f"  {name:<22} {value}")


if __name__ == "__main__":
    sys.exit(main())
