"""Every simulation scenario at 200 nodes: the figures it reports are sane.

The 10,000-node runs are ``make simulations`` (docs/simulations.md); these are smoke tests of the
same code, small enough for the suite.
"""

from __future__ import annotations

import json

import pytest

from simulations import scenarios
from simulations.__main__ import main
from simulations.measure import Result
from simulations.plot import plot_results
from simulations.sim import SimNetwork
from simulations.sweep import Spread, parse_seeds, summarise, sweep

NODES = 200
SEED = 3


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    out = {name: scenarios.SCENARIOS[name](NODES, SEED) for name in ("spread", "revoke", "churn", "partition")}
    out["reconcile"] = scenarios.reconcile(2, SEED, store=20_000, differences=(1, 10, 100, 1000))
    return out


def test_spread_reaches_every_node_with_about_one_body_each(results):
    r = results["spread"]
    assert r.reach == 1.0
    assert r.rounds_to_99 <= r.rounds_to_999 <= r.rounds_to_100 <= 20
    assert 0.9 <= r.duplicates_per_node <= 2
    assert r.curve[0] == 1 / NODES and r.curve[-1] == 1.0
    assert list(r.curve) == sorted(r.curve)


def test_revocation_reaches_every_node_and_takes_its_lesson_down(results):
    r = results["revoke"]
    assert r.reach == 1.0 and r.rounds_to_100 is not None
    assert r.details["lessons"]["reach"] > 0.9  # held, or refused because the revocation came first
    # The parent is down everywhere; the derived lesson survives only where the parent was refused.
    assert r.details["cascade"] + r.details["refused_at_intake"] >= 0.99


def test_churn_reaches_every_live_node_in_the_end(results):
    r = results["churn"]
    # Five sync intervals after churn stops; a node whose syncs all drew free riders may still lack it.
    assert r.reach >= 0.99 and r.details["revoke"]["reach"] >= 0.99
    assert r.details["departures"] > 0 and r.details["returns"] > 0
    assert r.details["live_at_end"] < NODES
    assert r.details["free_riders_reached"] >= 0.99


def test_partition_heals_to_identical_stores(results):
    r = results["partition"]
    assert r.details["side_0_reach_own"] == 1.0 and r.details["side_1_reach_own"] == 1.0
    assert r.details["records_across_the_cut_while_apart"] == 0
    assert r.details["identical_stores"] is True and r.reach == 1.0


def test_no_false_promotion_at_the_default_policy_with_one_attack_edge():
    r = scenarios.sybil(NODES, SEED, sybils=300, attack_edges=1, verifiers=299)
    assert r.reach == 1.0  # every honest node held the false lesson and all its confirmations
    assert r.false_promotion_rate == 0.0


def test_false_promotions_stay_within_what_the_caps_allow():
    r = scenarios.sybil(NODES, SEED, sybils=300, attack_edges=10, verifiers=299)
    assert r.details["promoted_nodes"] <= r.details["exposed_nodes"]
    assert r.false_promotion_rate <= r.details["exposed_nodes"] / NODES


def test_reconcile_bytes_grow_with_the_difference(results):
    rows = results["reconcile"].details["rows"]
    assert all(row["correct"] for row in rows)
    sizes = [row["bytes"] for row in rows]
    assert sizes == sorted(sizes) and sizes[-1] > 10 * sizes[1]
    assert results["reconcile"].details["loglog_exponent"] <= 1.05  # at most linear in the difference


def test_offline_node_loses_its_connections_and_catches_up_when_back():
    net = SimNetwork(30, seed=1)
    net.random_bootstrap(4)
    net.start()
    net.run(net.now + 10)
    net.go_offline(5)
    net.run(net.now + 1)
    assert not net.nodes[5].sessions()
    assert all(net.keys[5] not in {s.peer_key for s in n.sessions()} for n in net.nodes)
    record = scenarios.authors.lesson("test/author", "a lesson published while node 5 was away")
    net.publish_tracked(0, record)
    net.run(net.now + 30)
    assert record.key not in net.nodes[5].keyset
    net.go_online(5)
    net.run(net.now + 200)  # its next anti-entropy round (sync_interval 60 s, +-25%) fetches it
    assert record.key in net.nodes[5].keyset


def test_cli_prints_json_with_the_required_figures(capsys):
    assert main(["spread", "--nodes", "50", "--seed", "2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    for key in ("nodes", "seed", "reach", "rounds_to_99", "rounds_to_999", "rounds_to_100",
                "duplicates_per_node", "bytes_per_node"):
        assert key in figures
    assert figures["nodes"] == 50 and figures["reach"] == 1.0


def test_plot_skips_cleanly_or_writes_a_png(results, tmp_path, capsys):
    path = tmp_path / "reach.png"
    drawn = plot_results([results["spread"].as_json()], str(path))
    if drawn:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "matplotlib is not installed" in capsys.readouterr().err


def test_a_sweep_runs_each_seed_as_a_single_run_would_and_summarises_them():
    swept = sweep(scenarios.spread, "spread", 50, (1, 2, 3))
    singles = [scenarios.spread(50, seed) for seed in (1, 2, 3)]
    assert [r.seed for r in swept.runs] == [1, 2, 3]
    assert [r.curve for r in swept.runs] == [r.curve for r in singles]  # the same paths, seed by seed
    rounds = [r.rounds_to_100 for r in singles]
    summary = swept.summary["rounds_to_100"]
    assert (summary.lowest, summary.highest, summary.missed) == (min(rounds), max(rounds), 0)
    assert summary.mean == round(sum(rounds) / 3, 4)
    assert "false_promotion_rate" not in swept.summary  # spread does not report it


def test_a_threshold_some_seeds_never_reach_is_counted_as_missed_not_averaged():
    def run(rounds: int | None, seed: int) -> Result:
        return Result("spread", 10, seed, 1.0, 3, 4, rounds, 1.0, 1.5, None if rounds is None else 2.0,
                      1.0, 100.0, wall_seconds=0, peak_rss_mb=0)

    summary = summarise([run(5, 1), run(None, 2), run(7, 3)])
    assert summary["rounds_to_100"] == Spread(mean=6.0, lowest=5, highest=7, missed=1)
    assert summary["rounds_to_99"].missed == 0


def test_seeds_are_read_as_ranges_and_lists_and_a_bad_one_is_named():
    assert parse_seeds("1-3,9") == (1, 2, 3, 9)
    assert parse_seeds("4") == (4,)
    with pytest.raises(ValueError, match="'x'"):
        parse_seeds("1,x")
    with pytest.raises(ValueError, match="backwards"):
        parse_seeds("3-1")


def test_cli_sweep_prints_each_seed_and_the_summary_as_json(capsys):
    assert main(["spread", "--nodes", "40", "--seeds", "1-2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seeds"] == [1, 2] and [r["seed"] for r in out["runs"]] == [1, 2]
    assert out["summary"]["reach"] == {"mean": 1.0, "min": 1.0, "max": 1.0, "missed": 0}
