"""The nap keeps only what needs no night: corrections, and failures already seen with a fix."""

from __future__ import annotations

from commons.core.learning.lessons import LessonKind
from commons.core.learning.nap import run_nap
from commons.core.learning.sleep import SleepState, run_night
from tests.test_sleep import DAY, UV_ADD, corr, err, hash_uid


def test_a_correction_is_a_lesson_at_once():
    result = run_nap([], [corr("c1", 1)], 1.1 * DAY, hash_episode=hash_uid)
    assert [lesson.kind for lesson in result.learned] == [LessonKind.CORRECTION]
    assert result.waiting == 0


def test_a_failure_seen_once_or_with_no_fix_waits_for_the_night():
    assert run_nap([], [err("e1", 1)], 1.1 * DAY, hash_episode=hash_uid).learned == ()
    twice = run_nap([], [err("e1", 0), err("e2", 1, target="pip install flask")], 1.1 * DAY, hash_episode=hash_uid)
    assert twice.learned == () and twice.waiting == 2
    # The night learns that lesson ("no fix was seen"): the nap did not take the night's work.
    night = run_night(SleepState(), [err("e1", 0), err("e2", 1, target="pip install flask")], 2 * DAY,
                  hash_episode=hash_uid)
    assert [lesson.text for lesson in night.state.lessons][0].endswith("no fix was seen (2 times in 2 sessions).")


def test_a_repeated_failure_with_its_fix_is_learned_at_once():
    result = run_nap([], [err("e1", 0), err("e2", 1, resolution=UV_ADD)], 1.1 * DAY, hash_episode=hash_uid)
    [lesson] = result.learned
    assert "uv add" in lesson.text and lesson.episodes == ("e1", "e2")


def test_a_failure_already_in_a_lesson_joins_it_and_nothing_else_changes():
    night = run_night(SleepState(), [err("e1", 0), err("e2", 1, resolution=UV_ADD)], 2 * DAY, hash_episode=hash_uid)
    [before] = night.state.lessons
    result = run_nap(night.state.lessons, [err("e1", 0), err("e2", 1, resolution=UV_ADD),
                                       err("e3", 3, target="pip install rich")], 3.1 * DAY, hash_episode=hash_uid)
    [after] = result.lessons
    assert result.learned == () and after.id == before.id
    assert after.seen == 3 and after.episodes[-1] == "e3" and after.strength > before.strength_now(3.1 * DAY, 45)


def test_prevented_counts_only_where_the_lesson_was_rendered():
    """#14 item 7: the lesson sits in project A's memory; a session in project B that meets the
    situation without the error ran without it, so the prediction fails there."""
    from commons.core.learning.predictions import RenderedWhere
    from commons.core.learning.sleep import PredictionFailed, PredictionPrevented
    from tests.test_sleep import learned_pip_lesson, night, of, sess

    state, eps, lesson = learned_pip_lesson()
    later = [sess("s1", 5, "pip install httpx")]
    in_b = RenderedWhere({lesson.id: {"/src/a": 2 * DAY}}, {"s1": "/src/b"})
    assert [e.evidence for e in of(night(state, eps + later, 6, rendered_since=in_b).events, PredictionFailed)] == ["s1"]
    in_a = RenderedWhere({lesson.id: {"/src/a": 2 * DAY}}, {"s1": "/src/a"})
    assert [e.evidence for e in of(night(state, eps + later, 6, rendered_since=in_a).events, PredictionPrevented)] == ["s1"]
    everywhere = RenderedWhere({lesson.id: {"": 2 * DAY}}, {"s1": "/src/b"})  # the plain folder: every session reads it
    assert of(night(state, eps + later, 6, rendered_since=everywhere).events, PredictionPrevented)
