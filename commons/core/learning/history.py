"""History: the first sleep over sessions that happened before commons was there to sleep on them
(docs/design.md, "Time").

A person who installs commons with a year of sessions behind them has lessons on day one. One
night at today's date over that year would learn nothing: every episode older than about 123 days
is already under the decay floor (strength halves every 45 days; archived below 0.15), and the rest
would be judged as if it had all happened tonight. So the first sleep replays the history night by
night in the sessions' own time (``history_nights``, ``sleep_through``): a night at the end of each
day that holds episodes, seeing only what had happened by then, so an error repeats across days and
becomes a lesson, a prediction made one night is verified by the sessions of the next, and decay
is measured between the sessions themselves.

The time between the last replayed night and the first real one is time no session was watched in:
nothing decays across it (``carry_over``), so a history that ended months ago keeps the strength it
had at its end. From the first real night on, decay runs on the clock as before.

Pure functions over the core's frozen data, like ``sleep``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from commons.core.learning.episode import Episode
from commons.core.learning.lessons import DAY, LessonStatus, WriteText
from commons.core.learning.sleep import Event, SleepParams, SleepResult, SleepState, run_night

# The sessions of the last day are tonight's: a day is replayed once it ended this long before now.
SETTLE_DAYS = 1.0

Progress = Callable[[int, int, float], None]  # (nights done, nights in all, the night's time)


def history_nights(times: Sequence[float], now: float, *, settle_days: float = SETTLE_DAYS) -> list[float]:
    """The nights a first sleep replays, oldest first: midnight (UTC) after each day that holds an
    episode, for the days that ended ``settle_days`` or more before ``now``."""
    nights = {(math.floor(t / DAY) + 1) * DAY for t in times}
    return sorted(n for n in nights if n <= now - settle_days * DAY)


def sleep_through(state: SleepState, episodes: Sequence[Episode], nights: Sequence[float],
                  params: SleepParams = SleepParams(), *, hash_episode: Callable[[str], bytes],
                  write_text: WriteText | None = None, episode_touched: Mapping[str, float] | None = None,
                  project_names: Sequence[str] = (), progress: Progress | None = None) -> SleepResult:
    """Every night of ``nights`` in turn, each over the episodes that had happened by then; the
    events of all of them, in order. Nothing was rendered during that history, so no prediction of
    it counts as prevented."""
    ordered = sorted(episodes, key=lambda e: e.at)
    times = [e.at for e in ordered]
    events: list[Event] = []
    for done, night in enumerate(nights, 1):
        seen = ordered[:bisect.bisect_right(times, night)]
        result = run_night(state, seen, night, params, hash_episode=hash_episode, write_text=write_text,
                           episode_touched=episode_touched, project_names=project_names)
        state = result.state
        events += result.events
        if progress is not None:
            progress(done, len(nights), night)
    return SleepResult(state, tuple(events))


def carry_over(state: SleepState, episodes: Sequence[Episode], touched: Mapping[str, float], since: float,
               until: float, params: SleepParams = SleepParams()) -> tuple[SleepState, dict[str, float]]:
    """(state, episode touches) with the time from ``since`` to ``until`` not counted toward decay:
    each active lesson holds at ``until`` the strength it had at ``since``, and each live episode
    last touched by ``since`` decays from a time moved on by the gap (the touches to record).
    Open predictions keep their windows: one that passes unmet expires, which changes no strength."""
    gap = until - since
    if gap <= 0:
        return state, {}
    lessons = tuple(
        replace(lesson, strength=lesson.strength_now(since, params.half_life_days), strength_at=until)
        if lesson.status is LessonStatus.ACTIVE else lesson
        for lesson in state.lessons)
    moved = {}
    for episode in episodes:
        base = max(episode.at, touched.get(episode.uid, episode.at))
        if episode.uid not in state.archived_episodes and base <= since:
            moved[episode.uid] = base + gap
    return replace(state, lessons=lessons), moved
