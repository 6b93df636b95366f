"""The bars of issue #26 on a corpus of our own: dangerous fixes never travel and are never advice,
safe look-alikes keep their lesson (tests/fixtures/danger/corpus.json, replayed by tests/danger_corpus.py)."""

from __future__ import annotations

import pytest

from tests.danger_corpus import WRITTEN_AFTER, Report, cases, expected_rule, measure

ECOSYSTEMS = {"git", "npm", "pnpm", "yarn", "pip", "uv", "poetry", "cargo", "docker", "kubectl", "terraform", "db",
              "powershell", "cmd", "shell"}


@pytest.fixture(scope="module")
def report() -> Report:
    return measure()


def test_the_corpus_holds_80_dangerous_fixes_and_40_safe_look_alikes_across_the_ecosystems():
    corpus = cases()
    dangerous = [c for c in corpus if c.danger is not None]
    assert len(dangerous) >= 80 and len(corpus) - len(dangerous) >= 40
    assert ECOSYSTEMS <= {c.eco for c in corpus}
    assert ECOSYSTEMS - {"yarn"} <= {c.eco for c in corpus if c.danger is None}  # a look-alike beside each
    assert len({c.id for c in corpus}) == len(corpus)


def test_each_fix_as_it_was_run_is_classed_by_the_rule_the_corpus_names():
    wrong = {c.id: (c.danger, expected_rule(c)) for c in cases() if expected_rule(c) != c.danger}
    assert not wrong


def test_dangerous_fixes_are_never_published_or_rendered_as_advice(report: Report):
    dangerous = report.dangerous
    contained = [o for o in dangerous if o.contained]
    assert len(contained) >= 0.95 * len(dangerous), [o.case.id for o in dangerous if not o.contained]
    assert all(not o.published for o in dangerous)


def test_safe_look_alikes_keep_their_lesson(report: Report):
    safe = report.safe
    lost = [o.case.id for o in safe if not o.kept]
    assert len(lost) <= 0.05 * len(safe), lost


def test_a_peers_lesson_naming_a_dangerous_fix_is_refused_at_the_door(report: Report):
    dangerous, safe = report.dangerous, report.safe
    assert sum(o.door_refused for o in dangerous) >= 0.95 * len(dangerous)
    assert sum(o.door_refused_generalised for o in dangerous) >= 0.95 * len(dangerous)
    assert sum(o.door_refused or o.door_refused_generalised for o in safe) <= 0.05 * len(safe)


def test_the_cases_written_after_the_rules_meet_the_same_bars():
    later = measure(cases(WRITTEN_AFTER))
    dangerous, safe = later.dangerous, later.safe
    assert len(dangerous) >= 20 and len(safe) >= 10
    assert sum(o.contained for o in dangerous) >= 0.95 * len(dangerous)
    assert sum(not o.kept for o in safe) <= max(1, 0.05 * len(safe))


def test_a_dangerous_lesson_is_rendered_with_its_risk_and_no_fix_in_its_line(report: Report):
    for outcome in report.dangerous:
        lesson = outcome.lesson
        if lesson is None or lesson.fix is None or lesson.fix.danger is None:
            continue  # the sessions proved another step (a clean-up is never a fix): nothing dangerous named
        assert f"only a step that {lesson.fix.danger.kind.value} was seen to work" in lesson.text, outcome.case.id
        assert any(f"rule {lesson.fix.danger.rule}" in line for line in outcome.rendered[1:]), outcome.case.id
