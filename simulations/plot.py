"""Plots of simulation results (optional: needs matplotlib, ``pip install '.[plot]'``).

Two kinds: reach over rounds, one line per spreading scenario (and the revocation of ``churn``);
reconciliation bytes against the size of the difference, on log-log axes. Without matplotlib
every function prints one line saying so and returns False; nothing else fails.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        print("plot skipped: matplotlib is not installed (pip install '.[plot]')", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _curves(result: dict[str, Any]) -> list[tuple[str, list[float]]]:
    curves = []
    if result.get("curve"):
        name = result["scenario"] + (" (lesson)" if result["scenario"] == "churn" else "")
        curves.append((name, result["curve"]))
    revoke = result.get("details", {}).get("revoke")
    if isinstance(revoke, dict) and revoke.get("curve"):
        curves.append((result["scenario"] + " (revocation)", revoke["curve"]))
    return curves


def plot_reach(results: Iterable[dict[str, Any]], path: str) -> bool:
    """Reach over rounds, every result with a curve on one figure."""
    plt = _pyplot()
    if plt is None:
        return False
    results = list(results)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for result in results:
        for name, curve in _curves(result):
            ax.plot(range(len(curve)), curve, marker="o", markersize=3, label=name)
    ax.axhline(0.999, color="grey", linewidth=0.6, linestyle="--")
    ax.axvline(12, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel("round (hops of gossip from the publisher)")
    ax.set_ylabel("fraction of live nodes holding the item")
    seeds = sorted({r["seed"] for r in results})
    nodes = sorted({r["nodes"] for r in results})
    ax.set_title(f"Reach over rounds, {', '.join(map(str, nodes))} nodes, seed {', '.join(map(str, seeds))}")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_reconcile(result: dict[str, Any], path: str) -> bool:
    """Bytes and round trips against the difference, log-log, with the linear fit."""
    plt = _pyplot()
    if plt is None:
        return False
    rows = result["details"]["rows"]
    xs = [r["difference"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.loglog(xs, [r["bytes"] for r in rows], marker="o", label="bytes (both directions)")
    slope = result["details"]["fit_bytes_per_key"]
    ax.loglog(xs, [slope * x for x in xs], linestyle="--", linewidth=0.8, label=f"{slope:.0f} bytes x difference")
    ax.set_xlabel("keys in the difference")
    ax.set_ylabel("bytes")
    twin = ax.twinx()
    twin.semilogx(xs, [r["round_trips"] for r in rows], color="tab:red", marker="s", markersize=3,
                  label="round trips")
    twin.set_ylabel("round trips")
    store = result["details"]["store"]
    ax.set_title(f"Reconciliation of two stores of {store:,} keys, seed {result['seed']}")
    lines = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_results(results: list[dict[str, Any]], path: str) -> bool:
    """What ``--plot`` draws: the reconcile figure for reconcile, reach over rounds otherwise."""
    if len(results) == 1 and results[0]["scenario"] == "reconcile":
        return plot_reconcile(results[0], path)
    return plot_reach(results, path)
