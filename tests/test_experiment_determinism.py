"""A seed's run of the N-agent experiment is reproducible: its nodes' secrets come from the seed
(``f"{seed}/{name}"``), and its nights run in virtual time with the daemons' gossip and trio's
scheduling seeded, so twice the same seed makes the same records, the same bytes on the wire and
the same figures."""

from __future__ import annotations

from simulations.experiment.one_seed import run_experiment

TIMINGS = ("wall_seconds", "cpu_seconds", "load_average", "cpus")


def _figures(result: dict) -> dict:
    """What the run did, less how long it took and how busy the machine was."""
    out = {k: v for k, v in result.items() if k not in TIMINGS}
    out["arms"] = {arm: {k: v for k, v in figures.items() if k not in ("seconds", "exchange_seconds_mean")}
                   for arm, figures in result["arms"].items()}
    return out


def test_the_same_seed_run_twice_gives_the_same_figures(tmp_path):
    runs = [run_experiment(3, agents=4, days=5, pitfalls=2, meets=1, arms=("trusted", "peer_review"),
                           workdir=tmp_path / str(i)) for i in range(2)]
    first, second = (_figures(r) for r in runs)
    assert first["arms"]["trusted"]["encounters_met_elsewhere_first"] > 0, "nothing was met: nothing was tested"
    assert first == second
