"""Many seeds (issue #29, item 4): each seed's result kept as it ends, summarised once per seed, and
the doc's sections computed from the figures (where the errors went, the ceiling, the time)."""

from __future__ import annotations

import json

from simulations.experiment.seeds import kept_results, summarise_seeds
from simulations.experiment.seeds_doc import render


def _arm(errors: int, by_stage: dict, misled: int = 0) -> dict:
    return {"errors_met_elsewhere_first": errors, "encounters_met_elsewhere_first": 20,
            "misled": {"agents": misled, "encounters": misled, "harmed": 0, "who": [f"a{i}" for i in range(misled)]},
            "bad_authors": [], "losses": {"errors": errors, "by_stage": by_stage, "by_kind": {"plain": by_stage}}}


def _seed(seed: int, trusted_errors: int) -> dict:
    reduction = round(1 - trusted_errors / 10, 3)
    return {"seed": seed, "agents": 8, "days": 28, "cpus": 2, "cpu_seconds": 100.0, "wall_seconds": 300.0,
            "load_average": 3.0, "run_started_at": 1000.0, "ended_at": 1000.0 + 300 * seed, "jobs": 4,
            "reader": {"follows_paraphrase": 1.0, "follows_other_command": 0.0, "paraphrases": 55, "other_commands": 15},
            "reduction": {"trusted": reduction, "peer_review": 0.5, "peer_review_beyond_verifiers": 0.6},
            "arms": {"control": _arm(10, {"flaky": 2, "not_received": 8}),
                     "trusted": _arm(trusted_errors, {"flaky": 2, "compliance": trusted_errors - 2}),
                     "peer_review": _arm(5, {"flaky": 2, "held_not_rendered": 3}),
                     "placebo": _arm(5, {"flaky": 2, "held_not_rendered": 3}, misled=1)}}


def test_each_kept_seed_is_summarised_once_in_seed_order(tmp_path):
    kept = tmp_path / "seeds.jsonl"
    kept.write_text("".join(json.dumps(r) + "\n" for r in (_seed(2, 4), _seed(1, 3), _seed(2, 3))))
    results = kept_results(kept)
    assert [r["seed"] for r in results] == [1, 2] and results[1]["arms"]["trusted"]["errors_met_elsewhere_first"] == 3
    summary = summarise_seeds(results, 600.0)
    assert summary["summary"]["trusted"]["mean"] == 0.7 and summary["goals"]["trusted"]["met"] is False


def test_the_doc_says_where_the_errors_went_and_the_ceiling_the_world_puts_on_every_arm():
    summary = dict(summarise_seeds([_seed(1, 3), _seed(2, 4)], 600.0), jobs=4)
    doc = render(summary, "python -m simulations.experiment --seeds 1-2")
    assert "| found the fix, and went its own way this time (compliance) | 0 | 3 | 0 | 0 |" in doc
    assert "| **all errors** | 20 | 7 | 10 | 10 |" in doc
    # 2 of control's 10 errors flaky, compliance 0.9: 0.9 * 0.8 = 0.72, under the trusted goal of 0.85.
    assert "a ceiling of 0.720" in doc and "cannot meet it whatever the product does" in doc
    assert "Under peer review, 6 errors" in doc
    assert "A seed (every arm) took 100 CPU-seconds on average: 20 seeds are 2000 CPU-seconds, 16.7 minutes" in doc


def test_the_ceiling_counts_declined_advice_on_every_encounter_not_only_on_control_errors():
    # Control's agents learn from their own sessions: 10 errors of 20 encounters. With every lesson
    # perfect, an agent still declines 1 in 10 of its 18 advisable encounters, plus 2 flaky errors:
    # 3.8 errors at best, so the most any arm avoids is 1 - 3.8 / 10 = 0.62, not 0.9 * 0.8 = 0.72.
    runs = [_seed(1, 3), _seed(2, 4)]
    for run in runs:
        run["arms"]["control"]["fewest_errors_met_elsewhere_first"] = 3.8
    doc = render(dict(summarise_seeds(runs, 600.0), jobs=4), "python -m simulations.experiment --seeds 1-2")
    assert "a ceiling of 0.620" in doc and "avoids at most 0.620 of control's" in doc


def test_fewest_errors_are_the_flaky_ones_and_the_declined_share_of_what_still_fails():
    from simulations.experiment.agent import Encounter, Outcome
    from simulations.experiment.figures import fewest_errors
    from simulations.experiment.schedule import make_plan
    from simulations.experiment.world import PitfallKind

    plan = make_plan(1)
    (fixed, day), = plan.fixed_upstream.items()
    meet = lambda pitfall, d, outcome=Outcome.MET: Encounter("x", d, pitfall, PitfallKind.ERROR, outcome)
    encounters = ([meet("npm-flaky-registry", 5), meet("npm-flaky-registry", 6, Outcome.CLEAN)]
                  + [meet("go-mod-tidy", d, Outcome.AVOIDED) for d in range(5, 15)]
                  + [meet(fixed, day - 1), meet(fixed, day, Outcome.CLEAN), meet(fixed, day + 1, Outcome.CLEAN)])
    # One flaky error; 11 encounters whose command still fails (the fixed one only before its day).
    assert fewest_errors(encounters, plan) == round(1 + 0.1 * 11, 1)
