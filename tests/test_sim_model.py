"""The model engine (simulations/model.py) against the real gossip nodes on small networks.

The model is what runs spread and revoke at 10^5 nodes, where the real engine does not fit in
4 GB; these tests hold it to the real engine's figures where both run (docs/simulations.md, "The
model engine"), and check the parts it claims to take from the real code.
"""

from __future__ import annotations

import json
import statistics

import pytest

from simulations import authors, scenarios
from simulations.__main__ import main
from simulations.model import ModelNetwork
from simulations.sim import SimNetwork

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def spreads() -> dict[str, list]:
    return {engine: [scenarios.spread(400, seed, engine=engine) for seed in SEEDS] for engine in ("real", "model")}


@pytest.fixture(scope="module")
def revokes() -> dict[str, list]:
    return {engine: [scenarios.revoke(300, seed, engine=engine) for seed in SEEDS[:2]] for engine in ("real", "model")}


def _mean(results, name: str) -> float:
    return statistics.fmean(getattr(r, name) for r in results)


def test_model_spread_takes_the_rounds_seconds_and_bytes_of_the_real_engine(spreads):
    real, model = spreads["real"], spreads["model"]
    assert all(r.reach == 1.0 for r in real + model)
    assert all(r.details["engine"] == "model" for r in model)
    assert abs(_mean(model, "rounds_to_99") - _mean(real, "rounds_to_99")) <= 1
    assert abs(_mean(model, "rounds_to_100") - _mean(real, "rounds_to_100")) <= 2
    assert abs(_mean(model, "seconds_to_99") - _mean(real, "seconds_to_99")) <= 0.5
    assert _mean(model, "bytes_per_node") == pytest.approx(_mean(real, "bytes_per_node"), rel=0.1)
    degree = [statistics.fmean(r.details["sessions_per_node"] for r in rs) for rs in (real, model)]
    assert degree[1] == pytest.approx(degree[0], rel=0.05)
    assert all(0.99 <= r.duplicates_per_node <= 1.1 for r in model)


def test_model_revocation_races_and_takes_lessons_down_as_the_real_engine_does(revokes):
    real, model = revokes["real"], revokes["model"]
    assert all(r.reach == 1.0 and r.details["cascade"] == 1.0 for r in real + model)
    assert abs(_mean(model, "rounds_to_99") - _mean(real, "rounds_to_99")) <= 1
    refused = [statistics.fmean(r.details["refused_at_intake"] for r in rs) for rs in (real, model)]
    assert refused[1] == pytest.approx(refused[0], abs=0.15)
    assert _mean(model, "bytes_per_node") == pytest.approx(_mean(real, "bytes_per_node"), rel=0.25)


def test_model_bootstrap_lists_are_memnets_draw_for_draw():
    record = authors.lesson("model/author", "a lesson")
    model = ModelNetwork(300, seed=5, records=[record])
    real = SimNetwork(300, seed=5)
    real.random_bootstrap(scenarios.BOOTSTRAP_DEGREE)
    for i in range(300):
        assert model.known[i] == [real.index_of(p.transport_key) for p in real.nodes[i].known_peers()]


def test_model_is_deterministic_for_a_seed():
    first, again = (scenarios.spread(300, 4, engine="model") for _ in range(2))
    costs = {"wall_seconds": 0, "peak_rss_mb": 0, "cpu_seconds": 0}  # what the machine spent, not the run
    assert first.as_json() | costs == again.as_json() | costs


def test_model_sessions_stay_within_the_core_limits():
    record = authors.lesson("model/author", "a lesson")
    net = ModelNetwork(500, seed=2, records=[record])
    net.start()
    net.run(net.now + 30.0)
    degrees = [len(s) for s in net.sessions]
    assert max(degrees) <= net.params.max_sessions
    assert statistics.fmean(degrees) >= net.params.max_peers  # every node filled its dialed slots
    assert all(j in net.sessions[i] for i, s in enumerate(net.sessions) for j in s)  # both ends agree


def test_model_reconciliation_runs_the_real_reconcilers_on_the_two_key_sets():
    record = authors.lesson("model/author", "a lesson")
    net = ModelNetwork(10, seed=1, records=[record])
    exchange = net._run_reconcilers(1, 0, 0, 0, True, True)  # the initiator holds it, the responder lacks it
    assert sum(size for _, size, _, _ in exchange.messages) > 0
    # the responder learns it lacks the record, or the initiator learns it must push it
    learned = [(sender, need, push) for sender, _, need, push in exchange.messages if need or push]
    assert learned and all(need | push == 1 for _, need, push in learned)
    same = net._run_reconcilers(1, 0, 1, 0, True, True)
    assert not any(need or push for _, _, need, push in same.messages)


def test_auto_engine_is_the_real_one_up_to_the_limit():
    assert scenarios.engine_for(scenarios.MODEL_ABOVE) == "real"
    assert scenarios.engine_for(scenarios.MODEL_ABOVE + 1) == "model"
    assert scenarios.engine_for(100, "model") == "model"
    with pytest.raises(ValueError, match="engine"):
        scenarios.engine_for(100, "fast")


def test_cli_runs_the_model_engine_when_asked(capsys):
    assert main(["spread", "--nodes", "200", "--engine", "model", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["details"]["engine"] == "model" and figures["reach"] == 1.0


def test_cli_refuses_an_engine_for_scenarios_only_the_real_one_runs(capsys):
    with pytest.raises(SystemExit):
        main(["churn", "--nodes", "200", "--engine", "model"])
    assert "--engine applies to spread and revoke" in capsys.readouterr().err
