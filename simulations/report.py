"""Write docs/simulations.md (and its plots) from the JSON results of the scenarios.

    python -m simulations.report RESULTS_DIR DOCS_DIR

RESULTS_DIR holds one ``SCENARIO.json`` per scenario (``python -m simulations S --json``), and
``scale/SCENARIO-NODES-ENGINE.json`` for the runs at other sizes (``make simulations`` writes both).
The prose of the document is ``simulations/template.md``; this module fills in ``{{results}}``: one
table per scenario with its seed, the commit, the figures, and each goal met or missed by how much;
and ``{{scale}}``: the runs at every size side by side, against gossip theory (``simulations/theory.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulations import theory

ORDER = ("spread", "revoke", "churn", "partition", "sybil", "reconcile")
TEMPLATE = Path(__file__).with_name("template.md")
MAX_WALL_SECONDS = 600.0
MAX_RSS_MB = 4096.0
LARGE_NODES = 100_000  # issue #31: spread and revoke at 10^5 nodes ...
LARGE_MAX_SECONDS = 1800.0  # ... in at most 30 minutes on 2 cores ...
LARGE_MAX_RSS_MB = 4096.0  # ... and 4 GB

Goal = tuple[str, Callable[[dict[str, Any]], Any], str, Callable[[Any], bool], Callable[[Any], str]]


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _at_most(limit: float) -> Callable[[Any], bool]:
    return lambda v: v is not None and v <= limit


def _missed_by_rounds(limit: int) -> Callable[[Any], str]:
    return lambda v: "never reached" if v is None else f"{v - limit} round(s) over"


def _spread_goals(prefix: str, get: Callable[[dict], dict]) -> list[Goal]:
    return [
        (f"{prefix}reach", lambda r: get(r)["reach"], "1.0", lambda v: v == 1.0, lambda v: f"{1 - v:.2%} of nodes short"),
        (f"{prefix}rounds to 99.9%", lambda r: get(r)["rounds_to_999"], "<= 12", _at_most(12), _missed_by_rounds(12)),
        (f"{prefix}rounds to 100%", lambda r: get(r)["rounds_to_100"], "<= 20", _at_most(20), _missed_by_rounds(20)),
    ]


_TOP: Callable[[dict], dict] = lambda r: r  # noqa: E731
_DUPLICATES: Goal = ("duplicates per node", lambda r: r["duplicates_per_node"], "<= 2", _at_most(2),
                     lambda v: f"{v - 2:.2f} over")
_CASCADE: Goal = ("cascade (both lessons down)", lambda r: r["details"]["cascade"], "1.0", lambda v: v == 1.0,
                  lambda v: f"{1 - v:.2%} of nodes keep the derived lesson alive")

GOALS: dict[str, list[Goal]] = {
    "spread": [*_spread_goals("", _TOP), _DUPLICATES],
    "revoke": [*_spread_goals("revocation ", _TOP), _CASCADE, _DUPLICATES],
    "churn": [*_spread_goals("lesson ", _TOP), *_spread_goals("revocation ", lambda r: r["details"]["revoke"]),
              _CASCADE, _DUPLICATES],
    "partition": [("identical stores after the heal", lambda r: r["details"]["identical_stores"], "true",
                   lambda v: v is True, lambda v: "stores differ"), *_spread_goals("", _TOP)[:1], _DUPLICATES],
    "sybil": [("false promotion rate", lambda r: r["false_promotion_rate"], "< 1%", lambda v: v < 0.01,
               lambda v: f"{v - 0.01:.2%} over")],
    "reconcile": [("exponent of bytes ~ difference^k", lambda r: r["details"]["loglog_exponent"], "<= 1.05 (linear)",
                   lambda v: v <= 1.05, lambda v: f"{v - 1:.2f} above linear"),
                  ("every difference learned exactly", lambda r: all(x["correct"] for x in r["details"]["rows"]),
                   "true", lambda v: v is True, lambda v: "wrong difference")],
}
_COMMON: list[Goal] = [
    ("wall time (s)", lambda r: r["wall_seconds"], f"<= {MAX_WALL_SECONDS:.0f}", _at_most(MAX_WALL_SECONDS),
     lambda v: f"{v - MAX_WALL_SECONDS:.0f} s over"),
    ("peak RSS (MB)", lambda r: r["peak_rss_mb"], f"<= {MAX_RSS_MB:.0f}", _at_most(MAX_RSS_MB),
     lambda v: f"{v - MAX_RSS_MB:.0f} MB over"),
]

FIGURES = ("reach", "rounds_to_99", "rounds_to_999", "rounds_to_100", "seconds_to_99", "seconds_to_999",
           "seconds_to_100", "duplicates_per_node", "bytes_per_node", "false_promotion_rate")


def _fmt(value: Any) -> str:
    if value is None:
        return "--"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return str(value)


def scenario_section(result: dict[str, Any], rev: str) -> str:
    name = result["scenario"]
    lines = [f"### {name}", "", f"{result['nodes']:,} nodes, seed {result['seed']}, commit `{rev}`, "
             f"{result['wall_seconds']:,.1f} s wall, peak RSS {result['peak_rss_mb']:,.0f} MB.", ""]
    lines += ["| goal | value | target | met |", "| --- | --- | --- | --- |"]
    for label, get, target, ok, miss in [*GOALS.get(name, []), *_COMMON]:
        value = get(result)
        met = ok(value)
        lines.append(f"| {label} | {_fmt(value)} | {target} | {'yes' if met else 'no: ' + miss(value)} |")
    lines += ["", "| figure | value |", "| --- | --- |"]
    for key in FIGURES:
        if result.get(key) is not None:
            lines.append(f"| {key} | {_fmt(result[key])} |")
    for key, value in result.get("details", {}).items():
        if key == "rows":
            continue
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != "curve"}
        lines.append(f"| {key} | {_fmt(value)} |")
    rows = result.get("details", {}).get("rows")
    if rows:
        lines += ["", "| difference | bytes | bytes per key | round trips |", "| ---: | ---: | ---: | ---: |"]
        lines += [f"| {r['difference']:,} | {r['bytes']:,} | {r['bytes_per_difference']:,} | {r['round_trips']} |"
                  for r in rows]
    return "\n".join(lines) + "\n"


SCALED = ("spread", "revoke")  # the scenarios run at every size


def scale_runs(results_dir: Path) -> list[dict[str, Any]]:
    """The runs in ``results_dir/scale`` and the main spread and revoke runs, by scenario, then
    nodes, then engine (the real one first)."""
    paths = [*sorted((results_dir / "scale").glob("*.json")), *(results_dir / f"{s}.json" for s in SCALED)]
    runs = [json.loads(p.read_text()) for p in paths if p.exists()]
    return sorted(runs, key=lambda r: (ORDER.index(r["scenario"]), r["nodes"], _engine(r) != "real"))


def _engine(result: dict[str, Any]) -> str:
    return result.get("details", {}).get("engine", "real")


def scale_goals(result: dict[str, Any], command: str) -> list[dict[str, Any]]:
    """Issue #31's goals for one run at LARGE_NODES, in the shape ``make bench`` tabulates."""
    name, nodes = result["scenario"], result["nodes"]
    wall, cpu, rss = result["wall_seconds"], result.get("cpu_seconds"), result["peak_rss_mb"]
    cpu_text = "" if cpu is None else f" ({cpu:,.0f} CPU-s)"
    return [
        {"goal": f"{name} at {nodes:,} nodes: wall time, at most {LARGE_MAX_SECONDS / 60:.0f} minutes on 2 cores",
         "figure": f"{wall:,.0f} s{cpu_text}", "target": f"<= {LARGE_MAX_SECONDS:,.0f} s",
         "met": wall <= LARGE_MAX_SECONDS, "command": command},
        {"goal": f"{name} at {nodes:,} nodes: peak RSS, at most 4 GB", "figure": f"{rss:,.0f} MB",
         "target": f"<= {LARGE_MAX_RSS_MB:,.0f} MB", "met": rss <= LARGE_MAX_RSS_MB, "command": command},
        {"goal": f"{name} at {nodes:,} nodes: every node reached", "figure": f"{result['reach']:g}",
         "target": "1.0", "met": result["reach"] == 1.0, "command": command},
    ]


def scale_section(runs: list[dict[str, Any]]) -> str:
    """The runs at every size in one table, then the rounds theory gives for those sizes."""
    if not runs:
        return "No runs at other sizes (`make simulations` writes them to .bench/simulations/scale).\n"
    lines = ["| scenario | nodes | engine | commit | rounds to 50 / 99 / 99.9 / 100% | seconds to 99.9% | bytes per node"
             " | duplicates per node | wall s | CPU s | peak RSS MB |",
             "| --- | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in runs:
        rounds = " / ".join(_fmt(v) for v in (theory.median_round(r["curve"]), r["rounds_to_99"],
                                               r["rounds_to_999"], r["rounds_to_100"]))
        lines.append(f"| {r['scenario']} | {r['nodes']:,} | {_engine(r)} | `{r.get('commit', '?')}` | {rounds} | "
                     f"{_fmt(r['seconds_to_999'])} | {_fmt(r['bytes_per_node'])} | {_fmt(r['duplicates_per_node'])} | "
                     f"{r['wall_seconds']:,.1f} | {_fmt(r.get('cpu_seconds'))} | {r['peak_rss_mb']:,.0f} |")
    spreads = {}
    for r in runs:
        if r["scenario"] == "spread":
            spreads.setdefault(r["nodes"], r)  # the real engine's where both ran (sorted first)
    if spreads:
        lines += ["", "| nodes | sessions per node | push-pull: log3 N + ln ln N | push: log2 N + ln N "
                  "| flooding depth: ln N / ln(d - 1) | first-passage hops: (d - 1) / (d - 2) ln N | spread: rounds to 50 / 99% |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for nodes, r in sorted(spreads.items()):
            degree = r["details"]["sessions_per_node"]
            lines.append(f"| {nodes:,} | {degree:g} | {theory.push_pull(nodes):.1f} | {theory.push(nodes):.1f} | "
                         f"{theory.flood_depth(nodes, degree):.1f} | {theory.first_passage_hops(nodes, degree):.1f} | "
                         f"{_fmt(theory.median_round(r['curve']))} / {_fmt(r['rounds_to_99'])} |")
    large = [r for r in runs if r["nodes"] >= LARGE_NODES]
    if large:
        lines += ["", "| goal | figure | target | met |", "| --- | --- | --- | --- |"]
        for r in large:
            for g in scale_goals(r, ""):
                lines.append(f"| {g['goal']} | {g['figure']} | {g['target']} | {'yes' if g['met'] else 'no'} |")
    return "\n".join(lines) + "\n"


def write(results_dir: Path, docs_dir: Path) -> Path:
    results = {}
    for name in ORDER:
        path = results_dir / f"{name}.json"
        if path.exists():
            results[name] = json.loads(path.read_text())
    rev = commit()
    sections = [scenario_section(results[name], results[name].get("commit", rev)) for name in ORDER if name in results]
    missing = [name for name in ORDER if name not in results]
    if missing:
        sections.append(f"Not run: {', '.join(missing)}.\n")
    from simulations.plot import plot_reach, plot_reconcile

    spreading = [results[n] for n in ("spread", "revoke", "churn", "partition") if n in results]
    if spreading:
        plot_reach(spreading, str(docs_dir / "simulations_reach.png"))
    if "reconcile" in results:
        plot_reconcile(results["reconcile"], str(docs_dir / "simulations_reconcile.png"))
    text = (TEMPLATE.read_text().replace("{{results}}", "\n".join(sections)).replace("{{commit}}", rev)
            .replace("{{scale}}", scale_section(scale_runs(results_dir))))
    out = docs_dir / "simulations.md"
    out.write_text(text)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m simulations.report RESULTS_DIR DOCS_DIR", file=sys.stderr)
        return 2
    print(write(Path(args[0]), Path(args[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
