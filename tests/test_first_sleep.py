"""A first run learns from the history it finds: the first sleep over months of existing sessions
replays them night by night in their own time, and says what it archived and why."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from commons.core.learning import DAY, SleepParams, SleepState, carry_over, history_nights, sleep_through
from commons.core.learning import ErrorEpisode
from tests.conftest import SHARED_DIR
from tests.transcripts import cli, cli_json, pip_fails, session

TRANSCRIPTS = SHARED_DIR / "transcripts"
FIRST_NIGHT = "2026-12-02T03:00Z"


@pytest.fixture
def node(home, capsys, tmp_path):
    assert cli(capsys, "init")[0] == 0
    return tmp_path / "sessions"


def old_session(folder: Path, when: datetime, slug: str):
    s = session(folder, 1, slug)
    s.now = when
    s.path = folder / f"{when:%Y-%m-%d}-{slug}.jsonl"
    return s


def history(folder: Path) -> Path:
    """A correction in June 2025 that nothing meets again, then `pip install` failing the same way
    on two days of March 2026 (two sessions), `uv add` succeeding after it each time."""
    folder.mkdir(parents=True, exist_ok=True)
    s = old_session(folder, datetime(2025, 6, 3, 9, tzinfo=timezone.utc), "docs")
    s.user("write the changelog entry")
    s.say(("text", "I added the entry to CHANGELOG.md."))
    s.user("no, the changelog lives in docs/CHANGES.md, not CHANGELOG.md")
    s.write()
    for day, package in ((2, "httpx"), (9, "rich")):
        s = old_session(folder, datetime(2026, 3, day, 9, tzinfo=timezone.utc), f"add-{package}")
        s.user(f"add {package}")
        pip_fails(s, package)
        s.bash(f"uv add {package}", f"Add {package} with uv", f"Resolved 9 packages\n + {package}==1.0.0")
        s.write()
    return folder


def test_a_first_sleep_over_months_old_sessions_learns_their_lessons_and_keeps_them(node, capsys):
    assert cli(capsys, "ingest", str(history(node)), at=FIRST_NIGHT)[0] == 0
    night = cli_json(capsys, "sleep", at=FIRST_NIGHT)
    assert night["history"]["nights"] == 3 and night["history"]["to"] == "2026-03-10T00:00:00Z"
    found = cli_json(capsys, "lessons", at=FIRST_NIGHT)
    (pip,) = [lesson for lesson in found if lesson["text"].startswith("`pip install` failed")]
    # Learned on the night after the repeat, and as strong now as then: the months since are not counted.
    assert pip["created"] == "2026-03-10T00:00:00Z" and pip["strength"] > 1.4
    # The June correction decayed within the history itself (nine months unmet before March ended it).
    assert night["archived"]["lessons"] == {"decayed": 1}
    assert night["counts"]["lessons_learned"] == 2 and night["learned_still_active"] == 1
    # The next night runs on the clock again: a day later, nothing more decays away.
    again = cli_json(capsys, "sleep", at="2026-12-03T03:00Z")
    assert again["history"] is None and again["counts"]["lessons_archived"] == 0
    assert cli_json(capsys, "episodes", "--limit", "0", at="2026-12-03T04:00Z")["episodes"]


def test_the_first_sleep_says_what_it_archived_and_why(node, capsys):
    assert cli(capsys, "ingest", str(history(node)), at=FIRST_NIGHT)[0] == 0
    code, out, _ = cli(capsys, "sleep", at=FIRST_NIGHT)
    assert code == 0, out
    assert "first sleep: replayed 3 night(s)" in out
    assert "1 archived (1 decayed: untouched 123+ days)" in out
    assert "episodes archived: 2 (2 decayed: untouched 123+ days)" in out  # June's session and correction
    assert "[correction, local, archived since]" in out


def test_a_night_over_sessions_of_the_day_before_replays_nothing(node, capsys):
    s = session(node, 2, "rates")
    pip_fails(s, "httpx")
    pip_fails(s, "httpx==0.27")
    s.write()
    assert cli(capsys, "ingest", str(s.path), at="2026-11-02T18:00Z")[0] == 0
    night = cli_json(capsys, "sleep", at="2026-11-03T03:00Z")
    assert night["history"] is None


def test_only_days_that_ended_a_day_before_now_are_replayed():
    now = 30 * DAY + 3 * 3600
    times = [1 * DAY + 100, 1 * DAY + 200, 5 * DAY + 10, 29 * DAY + 50, 30 * DAY + 10]
    assert history_nights(times, now) == [2 * DAY, 6 * DAY]


def _error(uid: str, at: float) -> ErrorEpisode:
    return ErrorEpisode(uid=uid, at=at, session=f"s-{uid}", tool="Bash", target="cargo fmt --check",
                        failure="error: rustfmt is not installed")


def test_nothing_decays_across_the_time_carried_over():
    params = SleepParams()
    episodes = [_error("a", 1 * DAY), _error("b", 3 * DAY)]
    replayed = sleep_through(SleepState(), episodes, [2 * DAY, 4 * DAY], params, hash_episode=lambda u: u.encode())
    (lesson,) = replayed.state.lessons
    state, moved = carry_over(replayed.state, episodes, {}, 4 * DAY, 304 * DAY, params)
    (carried,) = state.lessons
    assert carried.strength_now(304 * DAY, params.half_life_days) == pytest.approx(
        lesson.strength_now(4 * DAY, params.half_life_days))
    assert moved == {"a": 301 * DAY, "b": 303 * DAY}


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason=f"real transcripts not found in {TRANSCRIPTS}")
def test_a_first_ingest_and_sleep_over_real_months_old_transcripts_makes_lessons(node, capsys, tmp_path):
    copy = tmp_path / "projects"
    shutil.copytree(TRANSCRIPTS, copy)
    assert cli(capsys, "ingest", str(copy))[0] == 0
    night = cli_json(capsys, "sleep")  # the real clock: months after the sessions
    assert night["history"]["nights"] >= 2 and night["learned_still_active"] >= 1
    assert sum(night["archived"]["episodes"].values()) == night["counts"]["episodes_archived"]
    assert cli_json(capsys, "lessons")
    code, out, _ = cli(capsys, "ingest", str(copy))
    assert code == 0 and out.startswith("nothing new: 4 transcripts read")


def test_the_replay_reports_each_night_it_sleeps_through():
    seen = []
    sleep_through(SleepState(), [_error("a", 1 * DAY), _error("b", 3 * DAY)], [2 * DAY, 4 * DAY],
                  hash_episode=lambda u: u.encode(), progress=lambda done, total, at: seen.append((done, total, at)))
    assert seen == [(1, 2, 2 * DAY), (2, 2, 4 * DAY)]
