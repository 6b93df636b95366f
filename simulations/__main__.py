"""python -m simulations SCENARIO --nodes N (--seed S | --seeds 1-10) [--json] [--plot FILE.png]

Scenarios: spread, revoke, churn, partition, sybil, reconcile (docs/simulations.md says what each
models and how its figures are defined). ``--engine``: spread and revoke run the real gossip code up
to 30,000 nodes and the model engine (simulations/model.py) beyond, unless told. ``--seeds`` runs the scenario once per seed and prints
each seed's figures and their mean, minimum and maximum: a round gained or lost at one seed is often
noise (simulations/sweep.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys

from simulations.report import commit
from simulations.scenarios import ENGINES, MODEL_ABOVE, MODELLED, SCENARIOS
from simulations.sweep import Sweep, parse_seeds, sweep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulations", description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS), help="what to simulate")
    parser.add_argument("--nodes", type=int, default=1000, help="number of nodes (default 1000; reconcile: ignored)")
    parser.add_argument("--seed", type=int, default=1, help="the seed every random draw derives from (default 1)")
    parser.add_argument("--seeds", metavar="1-10",
                        help="run once per seed (a range, a list, or both: 1-3,9) and summarise; replaces --seed")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="spread and revoke: the real gossip nodes, or the model engine that holds 10^5 "
                             f"(default auto: real up to {MODEL_ABOVE:,} nodes)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the result (needs matplotlib: pip install '.[plot]')")
    args = parser.parse_args(argv)
    if args.nodes < 2:
        parser.error("--nodes must be at least 2")
    run = SCENARIOS[args.scenario]
    if args.engine != "auto":
        if args.scenario not in MODELLED:
            parser.error(f"--engine applies to {' and '.join(MODELLED)}; {args.scenario} runs the real engine only")
        run = functools.partial(run, engine=args.engine)
    if args.seeds is not None:
        try:
            seeds = parse_seeds(args.seeds)
        except ValueError as error:
            parser.error(str(error))
        if args.plot:
            parser.error("--plot draws one run: use --seed")
        result = sweep(run, args.scenario, args.nodes, seeds)
        print(json.dumps({**result.to_json(), "commit": commit()}) if args.json else _sweep_text(result))
        return 0

    result = run(args.nodes, args.seed)
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


def _sweep_text(result: Sweep) -> str:
    names = [n for n in ("rounds_to_99", "rounds_to_999", "rounds_to_100", "seconds_to_999", "bytes_per_node")
             if n in result.summary]
    lines = [f"{result.scenario}: {result.nodes} nodes, seeds {', '.join(map(str, result.seeds))}",
             f"  {'seed':>6} " + " ".join(f"{n:>15}" for n in names)]
    for run in result.runs:
        cells = ("--" if getattr(run, n) is None else str(getattr(run, n)) for n in names)
        lines.append(f"  {run.seed:>6} " + " ".join(f"{c:>15}" for c in cells))
    for label, pick in (("mean", lambda s: s.mean), ("min", lambda s: s.lowest), ("max", lambda s: s.highest)):
        lines.append(f"  {label:>6} " + " ".join(f"{pick(result.summary[n]):>15g}" for n in names))
    missed = {n: s.missed for n, s in result.summary.items() if s.missed}
    if missed:
        lines.append("  never reached (seeds): " + ", ".join(f"{n} {k}" for n, k in missed.items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
