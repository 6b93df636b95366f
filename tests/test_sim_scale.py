"""docs/simulations.md's "Scale" section: the runs at every size, gossip theory, issue #31's goals."""

from __future__ import annotations

import json
import math

from simulations import report, theory


def _run(scenario: str, nodes: int, engine: str, *, rss: float = 800.0, wall: float = 300.0) -> dict:
    curve = [0.001, 0.01, 0.2, 0.6, 0.99, 1.0]
    return {"scenario": scenario, "nodes": nodes, "seed": 1, "reach": 1.0, "rounds_to_99": 4, "rounds_to_999": 5,
            "rounds_to_100": 5, "seconds_to_999": 2.9, "bytes_per_node": 1500.0, "duplicates_per_node": 1.0,
            "wall_seconds": wall, "cpu_seconds": 100.0, "peak_rss_mb": rss, "curve": curve, "commit": "abc1234",
            "details": {"engine": engine, "sessions_per_node": 9.3}}


def test_theory_orders_the_reference_curves_as_the_papers_do():
    n = 100_000
    assert theory.flood_depth(n, 9.3) < theory.push_pull(n) < theory.push(n)
    assert theory.flood_depth(n, 9.3) < theory.first_passage_hops(n, 9.3)
    assert math.isclose(theory.push_pull(3 ** 10), 10 + math.log(math.log(3 ** 10)))
    assert math.isclose(theory.push(2 ** 10), 10 + math.log(2 ** 10))


def test_median_round_is_the_first_round_holding_half():
    assert theory.median_round([0.1, 0.4, 0.5, 1.0]) == 2
    assert theory.median_round([0.1, 0.4]) is None


def test_scale_section_puts_every_size_in_one_table_with_theory_and_goals(tmp_path):
    (tmp_path / "scale").mkdir()
    (tmp_path / "spread.json").write_text(json.dumps(_run("spread", 10_000, "real")))
    (tmp_path / "scale" / "spread-100000-model.json").write_text(json.dumps(_run("spread", 100_000, "model")))
    (tmp_path / "scale" / "revoke-100000-model.json").write_text(
        json.dumps(_run("revoke", 100_000, "model", rss=5000.0)))
    runs = report.scale_runs(tmp_path)
    assert [(r["scenario"], r["nodes"]) for r in runs] == [("spread", 10_000), ("spread", 100_000), ("revoke", 100_000)]
    text = report.scale_section(runs)
    assert "| spread | 100,000 | model | `abc1234` | 3 / 4 / 5 / 5 |" in text
    assert f"| 100,000 | 9.3 | {theory.push_pull(100_000):.1f} |" in text
    assert "| revoke at 100,000 nodes: peak RSS, at most 4 GB | 5,000 MB | <= 4,096 MB | no |" in text
    assert "| spread at 100,000 nodes: peak RSS, at most 4 GB | 800 MB | <= 4,096 MB | yes |" in text


def test_scale_goals_take_the_shape_make_bench_tabulates():
    goals = report.scale_goals(_run("spread", 100_000, "model", wall=2000.0), "python -m simulations spread")
    assert all(set(g) == {"goal", "figure", "target", "met", "command"} for g in goals)
    assert [g["met"] for g in goals] == [False, True, True]
    assert goals[0]["figure"] == "2,000 s (100 CPU-s)"
