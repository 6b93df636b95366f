"""Controls that can fail (issue #29, item 3): break the product in one place and the experiment's
reductions must fall to about zero. Each sabotage is applied to the commons code the harness runs
in this process; the agents and the world are untouched. The same plan unsabotaged reduces errors
(trusted 1.0, peer review 0.5 at the time of writing), so these tests can tell."""

from __future__ import annotations

import dataclasses

import pytest

from commons.core.trust import evaluation, incremental
from commons.core.trust.evaluation import LessonStatus
from commons.node import rendering
from simulations.experiment.figures import summarise
from simulations.experiment.n_agents import run_arm
from simulations.experiment.schedule import make_plan

SEED = 5
PLAN = make_plan(SEED, agents=5, days=7, pitfalls=1, meets=2, changes=False)
AT_MOST = 0.05

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def control(tmp_path_factory):
    return run_arm("control", PLAN, SEED, tmp_path_factory.mktemp("control"))


def _reduction(control, run, key="errors_met_elsewhere_first") -> float:
    result = summarise({"control": control, run.arm: run}, PLAN, SEED)
    return result["reduction"][run.arm if key == "errors_met_elsewhere_first" else "peer_review_beyond_verifiers"]


def test_lessons_rendered_without_their_fix_reduce_nothing(control, tmp_path, monkeypatch):
    scrubbed = rendering._scrubbed

    def without_fix(item):  # every rendered lesson keeps its failure and loses what worked
        item = scrubbed(item)
        return dataclasses.replace(item, text=item.text.split(";")[0] + ".")

    monkeypatch.setattr(rendering, "_scrubbed", without_fix)
    assert control.encounters and _reduction(control, run_arm("trusted", PLAN, SEED, tmp_path / "t")) <= AT_MOST


def test_trust_that_never_promotes_reduces_nothing_under_peer_review(control, tmp_path, monkeypatch):
    state = evaluation._state

    def never_common(*args, **kwargs):
        s = state(*args, **kwargs)
        return dataclasses.replace(s, status=LessonStatus.CANDIDATE) if s.status is LessonStatus.COMMON else s

    monkeypatch.setattr(evaluation, "_state", never_common)
    monkeypatch.setattr(incremental, "_state", never_common)  # the same rule, where statuses are kept up to date
    assert _reduction(control, run_arm("peer_review", PLAN, SEED, tmp_path / "p")) <= AT_MOST
