"""The nap: what a session's end can teach at once, without waiting for the night (issue #16).

Sleep's lessons pass (``commons.core.learning.sleep.learn``) is run over the surprises not yet in a lesson,
and of what it would do only what needs no night is kept:

* a **correction** is a lesson on its own (the person said so), learned or joined now;
* an **error that joins a lesson** already learned (the failure was seen before) is absorbed now;
* a **new error lesson** is kept only when it names what worked (a repeated failure *with a fix*,
  or one met once here that the commons met elsewhere, as at night: ``elsewhere``); a failure with
  no fix seen waits for the night, which may find its fix in a later session.

Decay, verification and predictions are the night's alone: a nap never archives, judges or
predicts, so a day of naps followed by a night ends where the night alone would have. Pure, like
the rest of the core: the store loads, this decides, the node applies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from commons.core.learning.episode import CorrectionEpisode, Episode, ErrorEpisode
from commons.core.learning.lessons import Lesson, LessonKind, WriteText, is_resolved
from commons.core.learning.sleep import LessonLearned, LessonStrengthened, SleepParams, learn


@dataclass(frozen=True)
class NapResult:
    learned: tuple[Lesson, ...]  # new lessons, in the order learned
    joined: tuple[LessonStrengthened, ...]  # existing lessons that absorbed surprises
    waiting: int  # surprises left for the night (an error seen once, a failure with no fix)

    @property
    def lessons(self) -> tuple[Lesson, ...]:
        """Every lesson the nap changed, each once, in its final state."""
        final = {lesson.id: lesson for lesson in self.learned}
        for event in self.joined:
            final[event.lesson.id] = event.lesson
        return tuple(final.values())


def _fixed(lesson: Lesson, episodes: dict[str, Episode]) -> bool:
    return any(isinstance(e, ErrorEpisode) and is_resolved(e)
               for e in (episodes.get(uid) for uid in lesson.episodes))


def run_nap(lessons: Sequence[Lesson], surprises: Sequence[Episode], now: float,
        params: SleepParams = SleepParams(), *, hash_episode: Callable[[str], bytes],
        write_text: WriteText | None = None, project_names: Sequence[str] = (),
        elsewhere: Sequence[str] = ()) -> NapResult:
    """``surprises``: the live error and correction episodes (those already in a lesson are skipped).
    ``elsewhere``: the failures lessons received from peers predict, as sleep takes them: one meeting
    here of one of them, with its fix, is a lesson now, not the next morning."""
    state = {lesson.id: lesson for lesson in lessons}
    before = set(state)
    events = learn(state, surprises, now, params, hash_episode=hash_episode, write_text=write_text,
                   project_names=project_names, elsewhere=elsewhere)
    by_uid = {e.uid: e for e in surprises}
    learned, joined = [], []
    for event in events:
        if isinstance(event, LessonLearned):
            lesson = event.lesson
            if lesson.kind is LessonKind.CORRECTION or _fixed(lesson, by_uid):
                learned.append(lesson)
        elif isinstance(event, LessonStrengthened) and event.lesson.id in before:
            joined.append(LessonStrengthened(state[event.lesson.id], event.by, event.reason, event.evidence))
    # A lesson joined twice in one pass appears once, in its final state (``lessons``).
    taken = {uid for lesson in learned for uid in lesson.episodes} | {uid for e in joined for uid in e.evidence}
    absorbed = {uid for lesson in lessons for uid in lesson.episodes}
    waiting = sum(1 for e in surprises if isinstance(e, ErrorEpisode | CorrectionEpisode)
                  and e.uid not in absorbed and e.uid not in taken)
    return NapResult(tuple(learned), tuple(joined), waiting)

