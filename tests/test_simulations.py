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
