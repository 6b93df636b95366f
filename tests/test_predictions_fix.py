"""A lesson that names a fix is judged by it (issue #17): the fix failing or the failing command
working fails the lesson, even when it was rendered; the fix working prevents; the failure met
confirms it, whatever the session did next."""

from __future__ import annotations

import pytest

from commons.core.learning.episode import ErrorEpisode, SessionEpisode, ToolCall
from commons.core.learning.lessons import DAY, Lesson, LessonKind
from commons.core.learning.predictions import Cause, Prediction, PredictionStatus, named_fix, runs_fix, verify
from commons.core.records import Scope
from commons.core.learning.evidence import Evidence, Resolution

FAILURE = "npm error The 'npm ci' command can only install with an existing package-lock.json"
TEXT = f'`npm ci` failed with "{FAILURE}"; `npm install` succeeded after it (2 of 2 sessions).'
WRONG = f'`npm ci` failed with "{FAILURE}"; `npm ci --legacy-peer-deps` succeeded after it (2 of 2 sessions).'
MADE = 10 * DAY


def _lesson(text: str = TEXT) -> Lesson:
    return Lesson(id="l1", kind=LessonKind.ERROR, text=text, scope=Scope.SHARED, topics=(), gist="Bash npm ci",
                  triggers=("npm ci",), outcome=FAILURE, episodes=(), provenance=(), strength=1.5, strength_at=0.0,
                  touched=0.0, seen=2, created=0.0)


def _prediction() -> Prediction:
    return Prediction(id="p1", lesson_id="l1", situation="Bash npm ci", triggers=("npm ci",), outcome=FAILURE,
                      made=MADE, expires=MADE + 14 * DAY)


def _session(n: int, *commands: str) -> SessionEpisode:
    at = MADE + n * DAY
    return SessionEpisode(session=f"s{n}", uid=f"session-{n}", at=at, ended_at=at + 600, asked=("set up CI",),
                          tool_counts=(("Bash", len(commands)),), ended="Done.",
                          calls=tuple(ToolCall("Bash", c) for c in commands))


def _error(n: int, k: int, command: str, fixed_by: str | None) -> ErrorEpisode:
    resolution = Resolution(Evidence.RETRY_CHANGED, fixed_by, "Bash", confidence=0.8) if fixed_by else None
    return ErrorEpisode(session=f"s{n}", uid=f"error-{n}-{k}", at=MADE + n * DAY + 60 * k, tool="Bash",
                        target=command, failure=FAILURE, exit_code=1, resolution=resolution)


def _verdict(episodes, rendered: bool = True, text: str = TEXT):
    (verdict,) = verify([_prediction()], {"l1": _lesson(text)}, episodes, MADE + 20 * DAY,
                        rendered_since={"l1": MADE} if rendered else {})
    return verdict.status, verdict.cause


def test_followed_and_the_fix_it_names_failed_is_a_failure_though_the_error_met_was_predicted():
    episodes = [_session(1, "npm ci --legacy-peer-deps", "npm ci", "npm install"),
                _error(1, 1, "npm ci --legacy-peer-deps", "npm install"), _error(1, 2, "npm ci", "npm install")]
    assert _verdict(episodes, True, WRONG) == (PredictionStatus.FAILED, Cause.FIX_FAILED)
    # The same session judges the right lesson confirmed: the error met, then its fix worked.
    assert _verdict(episodes, True, TEXT) == (PredictionStatus.CONFIRMED, Cause.OUTCOME)


@pytest.mark.parametrize("episodes, rendered, expected", [
    # The named fix ran and worked: prevented (rendered or not: the fix is what is confirmed).
    ([_session(1, "npm install")], True, (PredictionStatus.PREVENTED, Cause.FIX_WORKED)),
    ([_session(1, "npm install")], False, (PredictionStatus.PREVENTED, Cause.FIX_WORKED)),
    # Its failing command ran and worked with the lesson rendered: wrong or stale, failed.
    ([_session(1, "npm ci")], True, (PredictionStatus.FAILED, Cause.COMMAND_SUCCEEDED)),
    # The failure met, and fixed with the named fix: confirmed.
    ([_session(1, "npm ci", "npm install"), _error(1, 1, "npm ci", "npm install")],
     False, (PredictionStatus.CONFIRMED, Cause.OUTCOME)),
], ids=["fix-worked-rendered", "fix-worked-unrendered", "command-worked-rendered", "met-and-fixed"])
def test_a_lesson_naming_a_fix_is_judged_by_it(episodes, rendered, expected):
    assert _verdict(episodes, rendered) == expected


def test_the_failure_met_and_fixed_another_way_confirms_the_prediction_and_its_workaround_is_no_failure():
    # `.venv/bin/pip install` after `pip install` failed is the session's workaround, not the
    # failing command working: the failure the lesson predicts was met.
    episodes = [_session(1, "npm ci", "npm ci --prefix ./web"), _error(1, 1, "npm ci", "npm ci --prefix ./web")]
    assert _verdict(episodes, False) == (PredictionStatus.CONFIRMED, Cause.OUTCOME)


def test_a_preparation_fix_then_the_command_working_is_a_prevention_not_a_failure():
    text = '`git push` failed with "rejected"; `git pull --rebase origin main` succeeded after it.'
    assert named_fix(text) == "git pull --rebase origin main"
    pred = Prediction(id="p", lesson_id="l1", situation="Bash git push", triggers=("git push",), outcome="rejected",
                      made=MADE, expires=MADE + 14 * DAY)
    (verdict,) = verify([pred], {"l1": _lesson(text)}, [_session(1, "git pull --rebase origin main",
                                                                 "git push origin main")],
                        MADE + 20 * DAY, rendered_since={"l1": MADE})
    assert (verdict.status, verdict.cause) == (PredictionStatus.PREVENTED, Cause.FIX_WORKED)


def test_a_placeholder_of_the_named_fix_stands_for_one_word():
    assert runs_fix("uv add <package>", "uv add httpx")
    assert not runs_fix("uv add <package>", "uv add httpx rich")
    assert not runs_fix("npm install", "npm install --save-dev @types/node")


BLACK = "hook black failed: files were modified by this hook"
BLACK_TEXT = f'`git commit` failed with "{BLACK}"; `black <path>` succeeded after it (2 of 2 sessions).'


def _black_verdicts(episodes):
    """The pre-commit lesson as a received record carries it (its situation: the head alone)."""
    lesson = Lesson(id="b1", kind=LessonKind.ERROR, text=BLACK_TEXT, scope=Scope.SHARED, topics=(), gist="git commit",
                    triggers=("git commit",), outcome=BLACK, episodes=(), provenance=(), strength=1.0,
                    strength_at=0.0, touched=0.0, seen=1, created=0.0)
    pred = Prediction(id="pb", lesson_id="b1", situation="git commit", triggers=("git commit",), outcome=BLACK,
                      made=MADE, expires=MADE + 14 * DAY)
    return [(v.status, v.cause) for v in verify([pred], {"b1": lesson}, episodes, MADE + 3 * DAY, rendered_since={})]


def test_the_head_working_with_other_options_does_not_fail_a_lesson_naming_a_fix():
    # Experiment seed 1: an ordinary `git commit -am` that worked failed the black-hook lesson.
    assert _black_verdicts([_session(1, 'git commit -am "fix stuff"')]) == []


def test_the_invocation_this_node_saw_fail_working_without_the_fix_fails_it():
    earlier = ErrorEpisode(session="s0", uid="error-0", at=MADE - DAY, tool="Bash",
                           target='git commit -m "refactor parser"', failure=BLACK, exit_code=1)
    later = _session(1, 'git commit -am "fix stuff"', 'git commit -m "refactor cli"')
    assert _black_verdicts([earlier, later]) == [(PredictionStatus.FAILED, Cause.COMMAND_SUCCEEDED)]
    assert _black_verdicts([earlier, _session(1, 'git commit -am "fix stuff"')]) == []


@pytest.mark.parametrize("command, kind", [
    ('git commit -am "fix stuff"', ("git commit", {"-am"})),
    ('git commit -m "refactor -x parser"', ("git commit", {"-m"})),  # a quoted argument is no option
    ("cd app && npm ci --omit=dev", ("npm ci", {"--omit"})),
    ("terraform plan", ("terraform plan", set())),
])
def test_an_invocation_is_the_head_and_its_options(command, kind):
    from commons.core.learning.predictions import invocation

    assert invocation(command) == (kind[0], frozenset(kind[1]))


MANAGED = "error: externally-managed-environment"
PG = "Error: pg_config executable not found."


def _pip_lesson(lid: str, failure: str, fix: str) -> Lesson:
    return Lesson(id=lid, kind=LessonKind.ERROR, text=f'`pip install` failed with "{failure}"; `{fix}` succeeded after it.',
                  scope=Scope.SHARED, topics=(), gist="pip install", triggers=("pip install",), outcome=failure,
                  episodes=(), provenance=(), strength=1.0, strength_at=0.0, touched=0.0, seen=2, created=0.0)


def _pip_verdicts(*commands: str, with_pg_lesson: bool = True) -> list:
    lessons = {"uv": _pip_lesson("uv", MANAGED, "uv add <package>")}
    if with_pg_lesson:
        lessons["pg"] = _pip_lesson("pg", PG, "pip install <package>-binary")
    pred = Prediction(id="pu", lesson_id="uv", situation="pip install", triggers=("pip install",), outcome=MANAGED,
                      made=MADE, expires=MADE + 14 * DAY)
    earlier = ErrorEpisode(session="s0", uid="error-0", at=MADE - DAY, tool="Bash", target="pip install httpx",
                           failure=MANAGED, exit_code=1)
    return [(v.status, v.cause) for v in verify([pred], lessons, [earlier, _session(1, *commands)], MADE + 3 * DAY,
                                                rendered_since={})]


def test_the_fix_another_lesson_names_working_is_no_plain_run_of_this_lessons_command():
    # Experiment seed 3: `pip install psycopg-binary`, followed from the pg_config lesson, failed
    # the externally-managed lesson at that node, and with it out of the folder the pg_config
    # lesson was followed for httpx.
    assert _pip_verdicts("pip install psycopg-binary") == []
    # Without the other lesson, the same success is a plain `pip install` that worked.
    assert _pip_verdicts("pip install psycopg-binary", with_pg_lesson=False) == [
        (PredictionStatus.FAILED, Cause.COMMAND_SUCCEEDED)]
    # And a plain install that worked still fails it, beside the other lesson.
    assert _pip_verdicts("pip install rich") == [(PredictionStatus.FAILED, Cause.COMMAND_SUCCEEDED)]


def test_its_fix_failing_where_the_command_then_met_another_failure_is_no_verdict_on_the_lesson():
    # Followed for psycopg2 (`uv add psycopg2`), the externally-managed lesson's fix failed, and
    # `pip install psycopg2` then failed for want of pg_config: another pitfall of the command.
    lesson = _pip_lesson("uv", MANAGED, "uv add <package>")
    pred = Prediction(id="pu", lesson_id="uv", situation="pip install", triggers=("pip install",), outcome=MANAGED,
                      made=MADE, expires=MADE + 14 * DAY)
    at = MADE + DAY

    def error(k: int, command: str, failure: str) -> ErrorEpisode:
        return ErrorEpisode(session="s1", uid=f"error-1-{k}", at=at + 60 * k, tool="Bash", target=command,
                            failure=failure, exit_code=1)

    session = _session(1, "uv add psycopg2", "pip install psycopg2", "pip install psycopg2-binary")
    other = [session, error(1, "uv add psycopg2", "error: unexpected argument 'psycopg2'"),
             error(2, "pip install psycopg2", PG)]
    assert verify([pred], {"uv": lesson}, other, MADE + 3 * DAY, rendered_since={}) == []
    # Where its own failure came after its fix failed, the fix failed where it is due.
    same = [session, error(1, "uv add psycopg2", "error: unexpected argument 'psycopg2'"),
            error(2, "pip install psycopg2", MANAGED)]
    (verdict,) = verify([pred], {"uv": lesson}, same, MADE + 3 * DAY, rendered_since={})
    assert (verdict.status, verdict.cause) == (PredictionStatus.FAILED, Cause.FIX_FAILED)
