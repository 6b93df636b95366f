"""Each branch of prediction verification (commons.core.learning.predictions.verify) for a lesson
that names no fix, and the expiry of one that does: the window bounds both the surprise met and the
situation arising, and "warned" means the lesson was rendered before the session began."""

from __future__ import annotations

from commons.core.learning.lessons import DAY
from commons.core.learning.predictions import Cause, PredictionStatus, RenderedWhere, verify
from tests.test_predictions_fix import FAILURE, MADE, TEXT, _error, _lesson, _prediction, _session

NO_FIX = f'`npm ci` failed with "{FAILURE}" (seen 2 times).'
EXPIRES = MADE + 14 * DAY  # _prediction()'s window


def judged(episodes, now: float, *, text: str = NO_FIX, rendered_since=None):
    verdicts = verify([_prediction()], {"l1": _lesson(text)}, episodes, now,
                      rendered_since={} if rendered_since is None else rendered_since)
    return [(v.status, v.cause) for v in verdicts]


def test_the_outcome_met_within_the_window_confirms_a_lesson_without_a_fix():
    assert judged([_error(3, 1, "npm ci", None)], MADE + 4 * DAY) == [(PredictionStatus.CONFIRMED, Cause.OUTCOME)]


def test_the_outcome_met_after_the_window_closed_does_not_confirm_it():
    assert judged([_error(15, 1, "npm ci", None)], MADE + 20 * DAY) == [(PredictionStatus.EXPIRED, Cause.EXPIRED)]


def test_the_situation_arising_while_the_lesson_was_rendered_is_a_prevention():
    session = _session(3, "npm ci")
    assert judged([session], MADE + 4 * DAY, rendered_since={"l1": MADE}) == [
        (PredictionStatus.PREVENTED, Cause.WARNED)]


def test_a_session_that_began_before_the_lesson_was_rendered_was_not_warned():
    session = _session(3, "npm ci")
    rendered_later = {"l1": session.at + 60}
    assert judged([session], MADE + 4 * DAY, rendered_since=rendered_later) == [
        (PredictionStatus.FAILED, Cause.UNWARNED)]


def test_a_session_that_began_the_moment_the_lesson_was_rendered_was_warned():
    session = _session(3, "npm ci")
    assert judged([session], MADE + 4 * DAY, rendered_since={"l1": session.at}) == [
        (PredictionStatus.PREVENTED, Cause.WARNED)]


def test_the_earliest_of_several_sessions_is_the_evidence_of_the_verdict():
    first, second = _session(2, "npm ci"), _session(5, "npm ci")
    for rendered_since in ({}, {"l1": MADE}):  # unwarned in both, warned in both
        (verdict,) = verify([_prediction()], {"l1": _lesson(NO_FIX)}, [second, first], MADE + 6 * DAY,
                            rendered_since=rendered_since)
        assert verdict.evidence == first.uid and verdict.at == first.at


def test_the_earliest_unwarned_session_decides_even_when_a_later_one_was_warned():
    first, second = _session(2, "npm ci"), _session(5, "npm ci")
    where = RenderedWhere({"l1": {"": second.at - 60}}, {})
    (verdict,) = verify([_prediction()], {"l1": _lesson(NO_FIX)}, [first, second], MADE + 6 * DAY,
                        rendered_since=where)
    assert (verdict.status, verdict.cause, verdict.evidence) == (PredictionStatus.FAILED, Cause.UNWARNED, first.uid)


def test_the_situation_arising_after_the_window_closed_is_no_verdict_but_expiry():
    assert judged([_session(15, "npm ci")], MADE + 20 * DAY) == [(PredictionStatus.EXPIRED, Cause.EXPIRED)]


def test_a_prediction_with_nothing_seen_stays_open_until_its_window_closes():
    assert judged([], EXPIRES - 1) == []
    assert judged([], EXPIRES) == [(PredictionStatus.EXPIRED, Cause.EXPIRED)]


def test_a_lesson_naming_a_fix_that_nothing_tested_expires_when_its_window_closes():
    unrelated = _session(3, "ls -la")
    assert judged([unrelated], EXPIRES - 1, text=TEXT) == []
    assert judged([unrelated], EXPIRES, text=TEXT) == [(PredictionStatus.EXPIRED, Cause.EXPIRED)]


def test_no_predictions_give_no_verdicts():
    assert verify([], {"l1": _lesson(NO_FIX)}, [_error(3, 1, "npm ci", None)], MADE + 4 * DAY,
                  rendered_since={}) == []
