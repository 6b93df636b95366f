"""Sleep: the nightly passes that turn episodes into lessons and keep lessons honest (design
paper §4.5, docs/design.md "Predictions and verification", "Numbers from the seeds").

``sleep(state, episodes, now, params, ...)`` is a pure function: plain frozen data in, a new
state and a list of change events out. The store applies the events; a morning report reads them.
Running it twice at the same ``now`` — with the new state, or with the old state after a crash —
yields the same lessons under the same ids and no second set of changes.

The passes, in order:

1. **Decay.** Strength halves every 45 days (continuously, ``s·2^(−Δt/45 d)``); an episode or a
   lesson below 0.15 is archived. Episodes start at strength 1 when they happen and are renewed
   only by a touch the caller reports (``episode_touched``, e.g. from recall).
2. **Lessons.** Surprises (errors, corrections) not yet inside a lesson join the active lesson
   whose founding episode they most resemble (cosine ≥ 0.55: +0.5 strength, +1 seen), or cluster
   among themselves, in time order, around the first of their kind (leader clustering); errors and
   corrections cluster and join apart, so an error lesson keeps what worked after the failure. A
   correction is a lesson (the person said so); a cluster of errors is one only when the error
   repeated (≥ 2 episodes), and not when it is one session's work in progress. A single error waits, unabsorbed, for its repeat —
   until it decays away — unless the commons met it elsewhere: a failure a lesson received from a
   peer predicts (``elsewhere``) has repeated, there and here, and is a lesson after one meeting,
   with this node's own fix.
3. **Verify.** Open predictions are judged against later episodes (see ``predictions``).
   Confirmed or prevented: +0.5; failed: −0.5; expired: no change. A lesson *contradicted* where it
   was acted on (the fix it names failed, or its failing command ran and did not fail) is archived
   at once: it stops rendering before the next session. A surprise that joins a lesson
   in pass 2 may also confirm its prediction in pass 3: the first records that it was met again,
   the second that it was *anticipated*; the paper counts both.
4. **Predict.** Each active lesson with strength ≥ 1 and no open prediction makes one, unless its
   situation would arise in most recent sessions (too generic to test anything).

Vectorised with numpy so that a night over 100,000 episodes takes seconds: every text is
embedded once and compared by matrix products (``tests/benchmarks/bench_sleep.py``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from commons.core.embedding import DIM, embed_many
from commons.core.learning.episode import CorrectionEpisode, Episode, ErrorEpisode, SessionEpisode
from commons.core.learning.lessons import (Lesson, LessonKind, LessonStatus, Surprise, WriteText, absorb, adjust,
                      cluster_block, cluster_text, decayed, head_of, lesson_cluster_blocks, lesson_cluster_text,
                      new_lesson, uncounted)
from commons.core.learning.evidence import EDIT_TOOLS, Evidence, fixed_by_setup, is_proven, is_setup_step, is_shell
from commons.core.learning.scope import command_head
from commons.core.learning.wrappers import wrapped
from commons.core.learning.predictions import (Prediction, PredictionStatus, make_prediction, too_generic, verify)


@dataclass(frozen=True)
class SleepParams:
    """Every threshold of sleep; defaults are the seeds' numbers (design paper §4.5)."""

    half_life_days: float = 45.0  # strength halves this often without a touch
    archive_below: float = 0.15  # strength under which an episode or lesson is archived
    join_cosine: float = 0.55  # a surprise joins a lesson / cluster at this similarity
    join_gain: float = 0.5  # strength a lesson gains per surprise that joins it
    new_lesson_strength: float = 1.0  # a lesson's strength from its founding episode alone
    error_min_repeats: int = 2  # errors in a cluster before it is a lesson
    predict_min_strength: float = 1.0  # a lesson this strong, with no open prediction, predicts
    verify_cosine: float = 0.5  # a later surprise meets the predicted outcome at this similarity
    situation_cosine: float = 0.5  # a later session line meets the situation at this similarity
    confirm_gain: float = 0.5  # confirmed or prevented
    fail_loss: float = 0.5  # failed
    window_days: float = 14.0  # a prediction not met by then expires
    generic_max_fraction: float = 0.5  # refused when the situation arises in more recent sessions
    generic_sample: int = 200  # recent sessions the generic check measures against
    generic_min_sample: int = 10  # below this many, the check cannot judge and accepts

    def __post_init__(self) -> None:
        if self.half_life_days <= 0 or self.window_days <= 0:
            raise ValueError("SleepParams: half_life_days and window_days must be positive")
        if not 0 <= self.join_cosine <= 1 or not 0 <= self.verify_cosine <= 1:
            raise ValueError("SleepParams: cosine thresholds must lie in [0, 1]")
        if self.error_min_repeats < 1:
            raise ValueError("SleepParams: error_min_repeats must be at least 1")


@dataclass(frozen=True)
class SleepState:
    lessons: tuple[Lesson, ...] = ()  # active and archived, in the order they were learned
    predictions: tuple[Prediction, ...] = ()  # the open ones
    archived_episodes: frozenset[str] = frozenset()  # uids sleep has already archived


class Reason(enum.Enum):
    JOINED = "joined"
    CONFIRMED = "confirmed"
    PREVENTED = "prevented"
    FAILED = "failed"


# Change events. Lesson events carry the lesson as it is after the change, so the store can
# upsert it as it stands.


@dataclass(frozen=True)
class LessonLearned:
    lesson: Lesson


@dataclass(frozen=True)
class LessonStrengthened:
    lesson: Lesson
    by: float
    reason: Reason
    evidence: tuple[str, ...]  # episode uids that caused it


@dataclass(frozen=True)
class LessonWeakened:
    lesson: Lesson
    by: float
    reason: Reason
    evidence: tuple[str, ...]


class ArchiveReason(enum.Enum):
    """Why sleep archived a lesson or an episode (what `commons sleep` counts them by)."""

    DECAYED = "decayed"  # untouched so long its strength fell under the floor
    CONTRADICTED = "contradicted"  # acted on, and wrong there (its fix failed, or its failure did not come)


@dataclass(frozen=True)
class LessonArchived:
    lesson: Lesson
    strength: float  # the decayed strength (under the floor, unless contradicted)
    reason: ArchiveReason = ArchiveReason.DECAYED


@dataclass(frozen=True)
class EpisodeArchived:
    uid: str
    strength: float


@dataclass(frozen=True)
class PredictionMade:
    prediction: Prediction


@dataclass(frozen=True)
class PredictionConfirmed:
    prediction: Prediction
    evidence: str
    at: float


@dataclass(frozen=True)
class PredictionPrevented:
    prediction: Prediction
    evidence: str  # the session that met the situation with the lesson rendered
    at: float


@dataclass(frozen=True)
class PredictionFailed:
    prediction: Prediction
    evidence: str
    at: float


@dataclass(frozen=True)
class PredictionExpired:
    prediction: Prediction
    at: float


Event = (LessonLearned | LessonStrengthened | LessonWeakened | LessonArchived | EpisodeArchived
         | PredictionMade | PredictionConfirmed | PredictionPrevented | PredictionFailed
         | PredictionExpired)


@dataclass(frozen=True)
class SleepResult:
    state: SleepState
    events: tuple[Event, ...] = field(default=())


# --------------------------------------------------------------------------------------------
# Pass 1: decay


def decay_episodes(episodes: Sequence[Episode], archived: frozenset[str], now: float,
                   params: SleepParams, touched: Mapping[str, float]) -> tuple[list[Episode], list[EpisodeArchived]]:
    """(live episodes, archive events) — episodes under the floor at ``now`` are archived."""
    live, events = [], []
    for ep in episodes:
        if ep.uid in archived:
            continue
        strength = decayed(1.0, max(ep.at, touched.get(ep.uid, ep.at)), now, params.half_life_days)
        if strength < params.archive_below:
            events.append(EpisodeArchived(ep.uid, strength))
        else:
            live.append(ep)
    return live, events


def archive_weak(lessons: dict[str, Lesson], now: float, params: SleepParams) -> list[LessonArchived]:
    events = []
    for lid, lesson in lessons.items():
        if lesson.status is LessonStatus.ACTIVE:
            strength = lesson.strength_now(now, params.half_life_days)
            if strength < params.archive_below:
                lessons[lid] = replace(lesson, status=LessonStatus.ARCHIVED)
                events.append(LessonArchived(lessons[lid], strength))
    return events


# --------------------------------------------------------------------------------------------
# Pass 2: lessons


def _leader_clusters(vectors: np.ndarray, threshold: float, block: int = 512) -> list[list[int]]:
    """Rows grouped around leaders, in order: each row joins its most similar earlier leader at
    ``threshold`` or becomes a leader. Blocked so that comparisons are matrix products."""
    n = len(vectors)
    leaders: list[int] = []
    leader_vecs = np.zeros((max(n, 1), DIM), dtype=np.float32)
    members: list[list[int]] = []
    for b0 in range(0, n, block):
        b1 = min(n, b0 + block)
        chunk = vectors[b0:b1]
        n_before = len(leaders)
        if n_before:
            sims = chunk @ leader_vecs[:n_before].T
            best_prev, arg_prev = sims.max(axis=1), sims.argmax(axis=1)
        else:
            best_prev = np.full(b1 - b0, -np.inf, dtype=np.float32)
            arg_prev = np.zeros(b1 - b0, dtype=np.int64)
        inner = chunk @ chunk.T
        new_rows: list[int] = []  # rows of this block that became leaders (block-relative)
        for r in range(b1 - b0):
            best, target = float(best_prev[r]), int(arg_prev[r])
            if new_rows:
                row_sims = inner[r, new_rows]
                k = int(row_sims.argmax())
                if row_sims[k] > best:
                    best, target = float(row_sims[k]), n_before + k
            if best >= threshold:
                members[target].append(b0 + r)
            else:
                leader_vecs[len(leaders)] = chunk[r]
                leaders.append(b0 + r)
                members.append([b0 + r])
                new_rows.append(r)
    return members


def learn(lessons: dict[str, Lesson], live: Sequence[Episode], now: float, params: SleepParams, *,
          hash_episode: Callable[[str], bytes], write_text: WriteText | None,
          project_names: Sequence[str], elsewhere: Sequence[str] = ()) -> list[Event]:
    """Pass 2: absorb unabsorbed surprises into lessons (mutates ``lessons``), return events.
    ``elsewhere``: failures met elsewhere, as `lesson_cluster_text` gives a received lesson's."""
    absorbed = {uid for lesson in lessons.values() for uid in lesson.episodes}
    pending: list[Surprise] = sorted(
        (e for e in live if isinstance(e, ErrorEpisode | CorrectionEpisode) and e.uid not in absorbed),
        key=lambda e: (e.at, e.uid))
    if not pending:
        return []
    events: list[Event] = []
    vecs = embed_many([cluster_text(e, project_names) for e in pending])
    blocks = [cluster_block(e, project_names) for e in pending]
    by_uid = {e.uid: e for e in live if isinstance(e, ErrorEpisode | CorrectionEpisode)}
    active = [lesson for lesson in lessons.values() if lesson.status is LessonStatus.ACTIVE]
    joined: dict[str, list[Surprise]] = {}
    rest = np.arange(len(pending))
    is_error = np.array([isinstance(e, ErrorEpisode) for e in pending], dtype=bool)
    if active:
        sims = vecs @ embed_many([lesson_cluster_text(lesson) for lesson in active]).T
        # An error joins error lessons and a correction correction lessons: an error lesson says
        # what worked after the failure, which a correction's text (the person's claim) would lose.
        other_kind = np.array([lesson.kind is (LessonKind.CORRECTION) for lesson in active], dtype=bool)
        sims[np.ix_(is_error, other_kind)] = -1.0
        sims[np.ix_(~is_error, np.array([lesson.kind is LessonKind.ERROR for lesson in active], dtype=bool))] = -1.0
        # A failure line that names nothing of its own joins only a lesson met under the same command.
        lesson_blocks = [lesson_cluster_blocks(lesson) for lesson in active]
        for i, block in enumerate(blocks):
            for j, allowed in enumerate(lesson_blocks):
                if block not in allowed:
                    sims[i, j] = -1.0
        best, arg = sims.max(axis=1), sims.argmax(axis=1)
        for i in np.flatnonzero(best >= params.join_cosine):
            joined.setdefault(active[int(arg[i])].id, []).append(pending[i])
        rest = np.flatnonzero(best < params.join_cosine)
    def join(lid: str, eps: list[Surprise]) -> None:
        known = [by_uid[uid] for uid in lessons[lid].episodes if uid in by_uid]
        lessons[lid] = absorb(lessons[lid], eps, now, params.join_gain, params.half_life_days, hash_episode,
                              known=known, project_names=project_names)
        events.append(LessonStrengthened(lessons[lid], params.join_gain * len(eps), Reason.JOINED,
                                         tuple(e.uid for e in eps)))

    for lid, eps in joined.items():
        join(lid, eps)
    groups: dict[tuple[bool, str], list[int]] = {}
    for i in rest:
        groups.setdefault((bool(is_error[i]), blocks[int(i)]), []).append(int(i))
    clusters = [[rows[i] for i in cluster]
                for rows in groups.values()
                for cluster in _leader_clusters(vecs[rows], params.join_cosine)]
    met_elsewhere = embed_many(list(elsewhere)) if elsewhere else None
    for cluster in sorted(clusters):
        eps = [pending[i] for i in cluster]
        has_correction = any(isinstance(e, CorrectionEpisode) for e in eps)
        if not has_correction and len(eps) < params.error_min_repeats and not (
                met_elsewhere is not None and not blocks[cluster[0]]
                and float((met_elsewhere @ vecs[cluster[0]]).max()) >= params.join_cosine):
            continue  # an error must repeat (here, or here and elsewhere) before it is a lesson
        if not has_correction and work_in_progress(eps, project_names):
            continue  # the failures of one session's unfinished work are not yet a pitfall
        if not has_correction and blocks[cluster[0]] and nothing_to_learn(eps):
            continue  # a line naming nothing of its own, one session's, mended by nothing: a one-off
        kind = LessonKind.CORRECTION if has_correction else LessonKind.ERROR
        lesson = new_lesson(kind, eps, now,
                            strength=params.new_lesson_strength + params.join_gain * (len(eps) - 1),
                            hash_episode=hash_episode, write_text=write_text,
                            project_names=project_names)
        if lesson.id in lessons:  # same founding episode and text: already learned
            continue
        same = next((lid for lid, old in lessons.items() if old.status is LessonStatus.ACTIVE
                     and old.kind is kind and uncounted(old.text) == uncounted(lesson.text)), None)
        if same is not None:  # lessons with the same normalised text are one lesson
            join(same, eps)
            continue
        lessons[lesson.id] = lesson
        events.append(LessonLearned(lesson))
    return events


# Commands whose failures are, within one session, usually the work being written: a test that
# does not pass yet, a file that does not compile yet.
_WORK_COMMANDS = frozenset({"pytest", "mix test", "mix compile", "cargo build", "cargo test", "cargo check",
                            "npm test", "go build", "go test", "tsc", "jest", "vitest",
                            "mix credo", "mix dialyzer", "mypy", "pyright", "ruff check", "make", "gcc", "g++",
                            "cc", "clang", "cmake", "javac", "swift build", "swiftc", "dotnet build", "go vet",
                            "npm run", "next build", "mvn compile", "gradle build",
                            # the project's own images and services, built and brought up from its
                            # Dockerfile and compose file as `make` builds from its Makefile
                            "docker-compose", "docker compose", "docker build", "docker buildx"})


def work_in_progress(errors: Sequence[Surprise], project_names: Sequence[str] = ()) -> bool:
    """Whether a cluster of errors is one session's work in progress: every failure a test or
    compile run, or a run of the project's own code or program (one named like the project:
    `claude-research-transcript` in `transcript-hook`), in a single session, with no fix that
    names another command or sets the project up (a dependency added, a configuration file
    edited: a pitfall of the setup, not of the work). It becomes a lesson when the same failure
    recurs in another session."""
    errs = [e for e in errors if isinstance(e, ErrorEpisode)]
    if not errs or len({e.session for e in errs}) > 1:
        return False
    if _mended_by_own_code(errs):
        return True

    def own(head: str) -> bool:
        return _runs_code(head) or _own_program(head, project_names)
    return all((_is_work(_ran(e)) or own(_ran(e))) and (e.resolution is None or not fixed_by_setup(e.resolution) and (
        e.resolution.evidence in {Evidence.RERUN, Evidence.CHANGED_BEFORE}
        # a test run again another way (a runner, a flag) after the code changed is still the work,
        # and so is the agent's own code run again changed (another query, another inline script)
        or e.resolution.evidence is Evidence.RETRY_CHANGED and (any(w in _TEST_COMMANDS for w in _ran(e).split())
                                                               or own(_ran(e)))))
        for e in errs)


def _ran(ep: ErrorEpisode) -> str:
    """What a failed call ran: past a wrapper that only provided its environment (`nix develop -c
    cargo build` is a `cargo build`), the head of what it wrapped."""
    inner = wrapped(ep.failed) if is_shell(ep.tool) else None
    return command_head(ep.tool, inner) if inner else head_of(ep)


def _own_program(head: str, project_names: Sequence[str]) -> bool:
    """Whether the program a command ran is the project's own: its name shares a part with the
    project's distinctive names (`project_aliases`: never a common word)."""
    words = head.split()
    if not words or not project_names:
        return False
    program = words[0].rsplit("/", 1)[-1].lower()
    pieces = {program, *(p for p in re.split(r"[-_.]", program) if len(p) >= 4)}
    return any(name.lower() in pieces for name in project_names)


def nothing_to_learn(errors: Sequence[Surprise]) -> bool:
    """Whether a cluster whose failure line names nothing of its own (`is_generic_failure`: a
    missing file of this session's, a bare exit) was met in one session only and no step mended
    it: a lesson would say only that something of that session's was missing. Met in another
    session, or mended, it is a pitfall of that program."""
    errs = [e for e in errors if isinstance(e, ErrorEpisode)]
    return bool(errs) and len({e.session for e in errs}) == 1 and not any(is_proven(e.resolution) for e in errs)


# Formatting the project's own files: a change of its code, whichever tool made it.
_FORMATTERS = frozenset({"gofmt", "go fmt", "rustfmt", "cargo fmt", "black", "prettier", "ruff format", "mix format"})


def _mended_by_own_code(errs: Sequence[ErrorEpisode]) -> bool:
    """Whether, in one session, the only fixes its failures were shown are changes of the project's
    own code (an edit of a source file, not of a manifest or configuration; a formatter run), at
    least one of them: whatever command met the failure (`go generate`, `go get`), what mended it
    was the code being written. A failure of the agent's own file tools is not (a Read mends it)."""
    if any(e.tool.lower() in EDIT_TOOLS | {"read"} for e in errs):
        return False
    fixes = [e.resolution for e in errs if e.resolution is not None]
    return bool(fixes) and all(
        r.evidence is Evidence.CHANGED_BEFORE and not is_setup_step(r.command)
        and (r.tool.lower() in EDIT_TOOLS or command_head("bash", r.command) in _FORMATTERS or _patches_code(r.command))
        for r in fixes)


def _patches_code(command: str) -> bool:
    """A patch applied through the shell (Codex's `apply_patch <<'PATCH' *** Update File: x`) that
    touches source files only, no manifest or configuration."""
    if command_head("bash", command) != "apply_patch":
        return False
    files = re.findall(r"\*\*\* (?:Update|Add) File: (\S+)", command)
    return bool(files) and not any(is_setup_step(f"Edit {path}") for path in files)


def _runs_code(head: str) -> bool:
    words = head.split()
    return bool(words) and (words[0] in _RUNS_CODE or words[0].endswith((".sh", ".py", ".js", ".ts", ".rb")))


_TEST_COMMANDS = frozenset({"pytest", "mix test", "cargo test", "npm test", "go test", "jest", "vitest"})


_BUILDS = frozenset({"make", "gcc", "g++", "cc", "clang", "clang++", "cmake", "javac", "tsc", "ninja"})
# Interpreters of code the agent writes as it goes, a database client's queries included (a schema
# being built statement by statement fails the way code being written does).
_RUNS_CODE = frozenset({"python", "python3", "node", "ruby", "perl", "bash", "sh", "zsh", "deno", "bun", "php",
                        "psql", "mysql", "mariadb", "sqlite3"})


def _is_work(head: str) -> bool:
    """A test, compile or lint run, however it was started (``python pytest``, ``npx vitest run``),
    or a run of the project's own code: a script (``python x.py``, ``./build.sh``, ``node -e``)
    whose failure, in one session, is the code being written, not a pitfall of a tool."""
    words = [re.sub(r"\.(?:cmd|exe|bat)$", "", w) for w in head.split()]  # npm.cmd on Windows is npm
    if not words:
        return False
    head, program = " ".join(words), words[0]
    return (head in _WORK_COMMANDS or program in _BUILDS or words[-1] in _WORK_COMMANDS or program in {"vitest", "jest"}
            or program in _RUNS_CODE or program.endswith((".sh", ".py", ".js", ".ts", ".rb")))


# --------------------------------------------------------------------------------------------
# Passes 3 and 4: verify, predict

_VERDICT_EVENT = {
    PredictionStatus.CONFIRMED: PredictionConfirmed,
    PredictionStatus.PREVENTED: PredictionPrevented,
    PredictionStatus.FAILED: PredictionFailed,
}


def judge(lessons: dict[str, Lesson], open_predictions: list[Prediction], live: Sequence[Episode],
          now: float, params: SleepParams, rendered_since: Mapping[str, float]) -> tuple[list[Prediction], list[Event]]:
    """Pass 3: (still-open predictions, events); lesson strengths updated in ``lessons``."""
    events: list[Event] = []
    still_open = []
    for pred in open_predictions:
        lesson = lessons.get(pred.lesson_id)
        if lesson is None or lesson.status is not LessonStatus.ACTIVE:
            events.append(PredictionExpired(pred, now))  # nothing left to hold it against
        else:
            still_open.append(pred)
    verdicts = verify(still_open, lessons, live, now, rendered_since=rendered_since,
                      cosine_min=params.verify_cosine, situation_cosine=params.situation_cosine)
    decided = set()
    for v in verdicts:
        decided.add(v.prediction.id)
        lid = v.prediction.lesson_id
        evidence = (v.evidence,) if v.evidence else ()
        if v.status is PredictionStatus.EXPIRED:
            events.append(PredictionExpired(v.prediction, v.at))
            continue
        assert v.evidence is not None
        events.append(_VERDICT_EVENT[v.status](v.prediction, v.evidence, v.at))
        if v.status is PredictionStatus.FAILED:
            lessons[lid] = adjust(lessons[lid], -params.fail_loss, now, params.half_life_days, touch=False)
            events.append(LessonWeakened(lessons[lid], params.fail_loss, Reason.FAILED, evidence))
            if v.contradicted:
                # Followed and wrong here (its fix failed, or its "failing" command just worked):
                # out of the memory folder at once, not after a few more sessions of bad advice.
                strength = lessons[lid].strength_now(now, params.half_life_days)
                lessons[lid] = replace(lessons[lid], status=LessonStatus.ARCHIVED)
                events.append(LessonArchived(lessons[lid], strength, ArchiveReason.CONTRADICTED))
        else:
            reason = Reason.CONFIRMED if v.status is PredictionStatus.CONFIRMED else Reason.PREVENTED
            lessons[lid] = adjust(lessons[lid], params.confirm_gain, now, params.half_life_days, touch=True)
            events.append(LessonStrengthened(lessons[lid], params.confirm_gain, reason, evidence))
    return [p for p in still_open if p.id not in decided], events


def predict(lessons: Mapping[str, Lesson], open_predictions: Sequence[Prediction], live: Sequence[Episode],
            now: float, params: SleepParams) -> list[Prediction]:
    """Pass 4: new predictions for strong lessons without one, minus the too generic ones."""
    has_open = {p.lesson_id for p in open_predictions}
    candidates = [
        make_prediction(lesson, now, params.window_days)
        for lesson in lessons.values()
        if lesson.status is LessonStatus.ACTIVE and lesson.id not in has_open
        and lesson.strength_now(now, params.half_life_days) >= params.predict_min_strength
        # A situation is the command that meets the outcome. An error of a tool other than the shell
        # ("Edit", "Read") has no situation but any use of that tool, and a correction of what the
        # agent only said (no command) none but the agent's prose: neither can a later session
        # confirm or contradict, so neither predicts.
        and lesson.triggers
    ]
    sessions = sorted((e for e in live if isinstance(e, SessionEpisode) and e.at <= now),
                      key=lambda e: (e.at, e.uid))[-params.generic_sample:]
    refused = too_generic(candidates, [s.text() for s in sessions], cosine_min=params.situation_cosine,
                          max_fraction=params.generic_max_fraction, min_sample=params.generic_min_sample)
    return [p for p, bad in zip(candidates, refused) if not bad]


def run_night(state: SleepState, episodes: Sequence[Episode], now: float,
          params: SleepParams = SleepParams(), *, hash_episode: Callable[[str], bytes],
          rendered_since: Mapping[str, float] | None = None, write_text: WriteText | None = None,
          episode_touched: Mapping[str, float] | None = None,
          project_names: Sequence[str] = (), elsewhere: Sequence[str] = ()) -> SleepResult:
    """One night: decay, lessons, verify, predict. Pure; see the module docstring.

    ``episodes``: every episode the store still holds live (sleep skips those it archived before).
    ``hash_episode``: the caller's keyed hash of an episode uid, for lesson provenance.
    ``rendered_since``: lesson id → time since which the lesson is in the agent's memory folder.
    ``write_text``: optional model hook; its text is used only if it passes the safety checks.
    ``project_names``: words naming the owner's projects; a lesson that names one is local.
    ``elsewhere``: the failures lessons received from peers predict (`lesson_cluster_text`): one
    meeting of one of them here is a repeat.
    """
    if not callable(hash_episode):
        raise TypeError("sleep(): hash_episode must be a callable uid -> bytes (API misuse)")
    lessons = {lesson.id: lesson for lesson in state.lessons}
    live, episode_events = decay_episodes(episodes, state.archived_episodes, now, params,
                                          episode_touched or {})
    events: list[Event] = list(episode_events)
    events += archive_weak(lessons, now, params)
    events += learn(lessons, live, now, params, hash_episode=hash_episode, write_text=write_text,
                    project_names=project_names, elsewhere=elsewhere)
    still_open, verify_events = judge(lessons, list(state.predictions), live, now, params,
                                      rendered_since or {})
    events += verify_events
    events += archive_weak(lessons, now, params)
    made = predict(lessons, still_open, live, now, params)
    events += [PredictionMade(p) for p in made]
    new_state = SleepState(
        lessons=tuple(lessons.values()),
        predictions=tuple(still_open) + tuple(made),
        archived_episodes=state.archived_episodes | {e.uid for e in episode_events},
    )
    return SleepResult(new_state, tuple(events))
