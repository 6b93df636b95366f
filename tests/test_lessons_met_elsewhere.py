"""A failure the commons met elsewhere has repeated: one meeting here, of a failure a lesson
received from a peer predicts, is a lesson after one session, with this node's own fix; a failure
nothing received predicts still waits for its repeat (``commons.core.learning.sleep``, pass 2)."""

from __future__ import annotations

from pathlib import Path

from commons.core.learning import ErrorEpisode, SleepState, run_night
from commons.core.learning.lessons import lesson_cluster_text
from commons.core.records import LessonKind
from commons.demo.sessions._build import Session, npm_ci_no_lockfile
from commons.ingest.lessons_report import read_all


def npm_ci_once(folder: Path) -> list:
    s = Session("x", 5, "npm-ci", "/home/dev/src/shop", "main", 10)
    s.path = folder / "npm-ci.jsonl"
    s.user("set up the CI install step and make sure it works locally")
    s.bash("npm ci", "Clean install dependencies", npm_ci_no_lockfile("/home/dev"), exit_code=1)
    s.bash("npm install", "Install and write the lockfile", "added 212 packages, and audited 213 packages in 4s")
    s.write()
    return read_all([s.path])


def _error_lessons(episodes: list, elsewhere: tuple[str, ...]) -> list:
    last = max(e.at for e in episodes)
    night = run_night(SleepState(), episodes, last + 3600, hash_episode=lambda uid: uid.encode(), elsewhere=elsewhere)
    return [l for l in night.state.lessons if l.kind is LessonKind.ERROR]


def test_one_meeting_of_a_failure_a_received_lesson_predicts_is_a_lesson_with_this_nodes_fix(tmp_path):
    episodes = npm_ci_once(tmp_path)
    # What a peer's lesson on it predicts: the same failure, met under another fix (a quirk's).
    (theirs,) = _error_lessons(episodes + npm_ci_once_more(tmp_path), ())
    (lesson,) = _error_lessons(episodes, (lesson_cluster_text(theirs),))
    assert "`npm install` succeeded after it (1 session)" in lesson.text
    assert lesson.seen == 1


def test_one_meeting_of_a_failure_nothing_received_predicts_waits_for_its_repeat(tmp_path):
    episodes = npm_ci_once(tmp_path)
    other = "shell\nerror: externally-managed-environment"
    assert [e for e in episodes if isinstance(e, ErrorEpisode)]
    assert _error_lessons(episodes, ()) == []
    assert _error_lessons(episodes, (other,)) == []


def npm_ci_once_more(folder: Path) -> list:
    s = Session("x", 6, "npm-ci-again", "/home/dev/src/atlas", "main", 10)
    s.path = folder / "npm-ci-again.jsonl"
    s.user("make the docs install step work")
    s.bash("npm ci", "Clean install dependencies", npm_ci_no_lockfile("/home/dev"), exit_code=1)
    s.bash("npm ci --legacy-peer-deps", "Try the legacy resolver", "added 212 packages in 5s")
    s.write()
    return read_all([s.path])
