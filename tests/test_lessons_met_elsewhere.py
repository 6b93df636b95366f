"""A failure the commons met elsewhere has repeated: one meeting here, of a failure a lesson
received from a peer predicts, is a lesson after one session, with this node's own fix; a failure
nothing received predicts still waits for its repeat (``commons.core.learning.sleep``, pass 2)."""

from __future__ import annotations

from pathlib import Path

from commons.core.learning import ErrorEpisode, SleepState, run_night
from commons.core.learning.lessons import lesson_cluster_text
from commons.core.records import LessonKind, Scope
from commons.demo.sessions._build import Session, npm_ci_no_lockfile
from commons.ingest.lessons_report import read_all


def npm_ci_met(folder: Path, day: int, project: str, fix: str) -> list:
    """One session in which ``npm ci`` fails for want of a lockfile and ``fix`` then works."""
    s = Session("x", day, f"npm-ci-{day}", f"/home/dev/src/{project}", "main", 10)
    s.path = folder / f"npm-ci-{day}.jsonl"
    s.user("set up the CI install step and make sure it works locally")
    s.bash("npm ci", "Clean install dependencies", npm_ci_no_lockfile("/home/dev"), exit_code=1)
    s.bash(fix, "Install another way", "added 212 packages, and audited 213 packages in 4s")
    s.write()
    return read_all([s.path])


def _error_lessons(episodes: list, elsewhere: tuple[str, ...]) -> list:
    last = max(e.at for e in episodes)
    night = run_night(SleepState(), episodes, last + 3600, hash_episode=lambda uid: uid.encode(), elsewhere=elsewhere)
    return [l for l in night.state.lessons if l.kind is LessonKind.ERROR]


def test_one_meeting_of_a_failure_a_received_lesson_predicts_is_a_lesson_with_this_nodes_fix(tmp_path):
    episodes = npm_ci_met(tmp_path, 5, "shop", "npm install")
    # What a peer's lesson on it predicts: the same failure, met under another fix (a quirk's).
    (theirs,) = _error_lessons(episodes + npm_ci_met(tmp_path, 6, "atlas", "npm ci --legacy-peer-deps"), ())
    (lesson,) = _error_lessons(episodes, (lesson_cluster_text(theirs),))
    assert "`npm install` succeeded after it (1 session)" in lesson.text
    assert lesson.seen == 1
    assert lesson.scope is Scope.SHARED  # offered to the commons, for the others to confirm


def test_one_meeting_of_a_failure_nothing_received_predicts_waits_for_its_repeat(tmp_path):
    episodes = npm_ci_met(tmp_path, 5, "shop", "npm install")
    other = "shell\nerror: externally-managed-environment"
    assert [e for e in episodes if isinstance(e, ErrorEpisode)]
    assert _error_lessons(episodes, ()) == []
    assert _error_lessons(episodes, (other,)) == []


def test_the_session_end_nap_learns_one_meeting_the_commons_met_elsewhere_and_waits_without_it(tmp_path):
    from commons.core.learning.nap import run_nap

    episodes = npm_ci_met(tmp_path, 5, "shop", "npm install")
    (theirs,) = _error_lessons(episodes + npm_ci_met(tmp_path, 6, "atlas", "npm ci --legacy-peer-deps"), ())
    surprises = [e for e in episodes if isinstance(e, ErrorEpisode)]
    nap = lambda elsewhere: run_nap([], surprises, max(e.at for e in episodes) + 60,
                                    hash_episode=lambda uid: uid.encode(), elsewhere=elsewhere)
    (lesson,) = nap((lesson_cluster_text(theirs),)).learned  # for the day's next session, not tomorrow's
    assert "`npm install` succeeded after it (1 session)" in lesson.text
    alone = nap(())
    assert alone.learned == () and alone.waiting == len(surprises)
