"""Real history as a second test (issue #29, item 5), on a set written here: sessions replayed in
time order, each labelled failure judged by the lessons that existed when its session started; and
where the scripted world's errors were lost (losses.py), stage by stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulations.experiment.agent import Agent, Encounter, Outcome
from simulations.experiment.history import figures, judge, pitfalls, replay_set
from simulations.experiment.losses import stage
from simulations.experiment.world import PITFALLS, PitfallKind, World


def _set(tmp_path: Path, fixes: list[str]) -> Path:
    """A set of one person's three sessions meeting pip's externally-managed error (days 1, 2, 5),
    each fixed with ``uv add``, labelled with ``fixes`` as what really worked."""
    root = tmp_path / "set"
    folder = root / "home" / ".claude" / "projects" / "-home-ada-src-app"
    agent = Agent("ada", "/home/ada/src/app", folder, tmp_path / "no-memory", World())
    pitfall = PITFALLS["pip-externally-managed"]
    paths = [agent.work(day, [(pitfall, "httpx")]) for day in (1, 2, 5)]
    lines = []
    for path in paths:
        session = next(json.loads(l)["sessionId"] for l in path.read_text().splitlines() if '"sessionId"' in l)
        lines.append({"session": session, "tool": "Bash", "command": "pip install httpx",
                      "what_failed": "error: externally-managed-environment", "is_failure": True, "why": "PEP 668"})
    (root / "failure_lines.json").write_text(json.dumps(lines))
    (root / "labels.json").write_text(json.dumps({"pitfalls": [
        {"id": "pep668", "match": ["externally-managed-environment"], "fixes": fixes, "recurs": True}]}))
    (root / "schedule.json").write_text(json.dumps([{"at": "2026-12-01T00:00:00Z",
                                                     "ingest": [str(p.relative_to(root / "home")) for p in paths]}]))
    return root


def test_a_failure_met_after_its_lesson_exists_is_predicted_and_its_fix_judged_by_the_labels(tmp_path):
    right = replay_set(_set(tmp_path / "a", ["uv add"]), tmp_path / "a" / "work")
    assert [j["class"] for j in right["judged"]][0] == "no_lesson"  # nothing can predict the first
    assert right["judged"][-1]["class"] == "right_fix" and right["judged"][-1]["met_before"]
    wrong = replay_set(_set(tmp_path / "b", ["pipx install"]), tmp_path / "b" / "work")
    assert wrong["judged"][-1]["class"] == "wrong_fix"
    pooled = figures([right])["repeats"]
    assert pooled["failures"] == 2 and pooled["predicted"] >= 1 and pooled["right_fix_share_of_named"] == 1.0


def test_only_an_active_error_lesson_about_the_failure_predicts_it():
    (pep668,) = pitfalls({"pitfalls": [{"id": "p", "match": ["externally-managed"], "fixes": ["uv add"]}]})
    lesson = {"kind": "error", "status": "active", "prediction": {"outcome": "error: externally-managed-environment"},
              "text": '`pip install` failed with "error: externally-managed-environment"; `uv add <package>` '
                      "succeeded after it (2 of 2 sessions).",
              "fix": {"step": "uv add <package>", "text": "`uv add <package>` succeeded after it"}}
    assert judge(pep668, [lesson]) == "right_fix"
    assert judge(pep668, [dict(lesson, status="archived")]) == "no_lesson"
    assert judge(pep668, [dict(lesson, fix=None)]) == "no_fix_named"
    assert judge(pep668, [dict(lesson, fix={"step": "pipx install <package>"})]) == "wrong_fix"
    # The fix part never makes a lesson about a failure: only its failure and predicted outcome do.
    other = dict(lesson, text='`npm ci` failed with "no lockfile"; it passed after `externally-managed`',
                 prediction={"outcome": "no lockfile"})
    assert judge(pep668, [other]) == "no_lesson"


def _error(day: int = 5, **kw) -> Encounter:
    return Encounter("bo", day, "go-mod-tidy", PitfallKind.ERROR, kw.pop("outcome", Outcome.MET), **kw)


@pytest.mark.parametrize("encounter,memories,held,where", [
    (_error(outcome=Outcome.MISLED, lesson="x"), [], [], "misled"),
    (_error(tried=True), [], [], "plain_try"),
    (_error(declined=True, advice="go mod tidy"), [], [], "compliance"),
    (_error(), [{}] * 3 + [{"bo": ["go test"]}], [{}] * 3 + [{"bo": [("peer", "shared", "common", "go test", True)]}],
     "reader_missed_fix"),
    (_error(), [{}] * 3 + [{"bo": ["go test"]}], [{}] * 3 + [{"bo": [("own", "local", "active", "go test", False)]}],
     "rendered_without_fix"),
    # A correction about another `go test` habit in the folder is no error lesson about this one.
    (_error(), [{}] * 3 + [{"bo": ["go test"]}], [{}] * 4, "no_lesson_yet"),
    (_error(), [{}] * 4, [{}] * 3 + [{"bo": [("peer", "shared", "candidate", "go test", True)]}], "held_not_rendered"),
    (_error(), [{}] * 4, [{}] * 3 + [{"ada": [("own", "shared", "active", "go test", True)]}], "not_received"),
    (_error(), [{}] * 4, [{}] * 3 + [{"ada": [("own", "local", "active", "go test", False)]}], "no_fix_or_local"),
    (_error(), [{}] * 4, [{}] * 3 + [{"ada": [("own", "shared", "active", "cargo build", True)]}], "no_lesson_yet"),
    (_error(day=1), [], [], "no_lesson_yet"),
    (Encounter("bo", 5, "npm-flaky-registry", PitfallKind.ERROR, Outcome.MET), [], [], "flaky"),
])
def test_each_error_is_put_at_the_first_stage_that_failed_its_lesson(encounter, memories, held, where):
    assert stage(encounter, memories, held) == where
