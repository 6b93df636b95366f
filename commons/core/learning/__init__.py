"""Learning: from a session's episodes to lessons that report what failed and what worked.

- ``episode``: what ingest keeps of a session (sessions, errors, corrections, tool calls);
- ``failure``: which line of a failed tool's output says what failed;
- ``evidence``: what, later in the same session, proved the fix of a failed call (a retry that
  succeeded, and what changed before it);
- ``generalise``: placeholders for what is particular to one session;
- ``scope``: whether a lesson is local or shared, and its topics;
- ``lessons``: a lesson's local state, strength over time and deterministic text;
- ``predictions``: what a lesson predicts, and how later episodes verify it;
- ``sleep``: the nightly passes (:func:`run_night`); ``nap``: what a session's end learns at once
  (:func:`run_nap`);
- ``history``: the first sleep over existing sessions, night by night in their own time
  (:func:`sleep_through`, :func:`carry_over`).

docs/organism.md describes the local loop these implement.
"""

from commons.core.learning.episode import (
    CorrectionEpisode,
    Episode,
    EpisodeKind,
    ErrorEpisode,
    SessionEpisode,
    ToolCall,
)
from commons.core.learning.failure import NOT_RUN_OPENING, attribute, failure_line, is_informative, not_a_failure
from commons.core.learning.generalise import is_distinctive_name, project_aliases
from commons.core.learning.lessons import (
    DAY,
    Lesson,
    LessonFix,
    LessonStatus,
    Surprise,
    WriteText,
    adjust,
    decay_factor,
    heads_in_prose,
    is_resolved,
    lesson_cluster_text,
    lesson_detail,
    lesson_id,
    lesson_resolved,
    uncounted,
)
from commons.core.learning.history import carry_over, history_nights, sleep_through
from commons.core.learning.nap import run_nap
from commons.core.learning.predictions import (
    Cause,
    Prediction,
    PredictionStatus,
    RenderedWhere,
    meeting_outcome,
    runs_fix,
    too_generic,
    verify,
)
from commons.core.learning.predictions import named_fix as fix_named_in_text
from commons.core.learning.evidence import (Call, Evidence, OpenFailure, Resolution, Resolved, StepKind, advance, goal_of, is_proven,
                                            fix_outcome, named_fix, opened, shows_fix, step_kind)
from commons.core.learning.scope import SHELL_TOOLS, classify, command_head, names_project
from commons.core.learning.sleep import (
    ArchiveReason,
    EpisodeArchived,
    Event,
    LessonArchived,
    LessonLearned,
    LessonStrengthened,
    LessonWeakened,
    PredictionConfirmed,
    PredictionExpired,
    PredictionFailed,
    PredictionMade,
    PredictionPrevented,
    SleepParams,
    SleepResult,
    SleepState,
    run_night,
)

__all__ = [
    "ArchiveReason",
    "lesson_cluster_text",
    "fix_named_in_text",
    "fix_outcome",
    "Call",
    "Cause",
    "CorrectionEpisode",
    "DAY",
    "Episode",
    "EpisodeArchived",
    "EpisodeKind",
    "Evidence",
    "ErrorEpisode",
    "Event",
    "Lesson",
    "LessonFix",
    "LessonArchived",
    "LessonLearned",
    "LessonStatus",
    "LessonStrengthened",
    "LessonWeakened",
    "OpenFailure",
    "Prediction",
    "PredictionConfirmed",
    "PredictionExpired",
    "PredictionFailed",
    "PredictionMade",
    "PredictionPrevented",
    "PredictionStatus",
    "RenderedWhere",
    "Resolution",
    "Resolved",
    "SHELL_TOOLS",
    "SessionEpisode",
    "SleepParams",
    "SleepResult",
    "SleepState",
    "StepKind",
    "Surprise",
    "ToolCall",
    "WriteText",
    "adjust",
    "advance",
    "attribute",
    "carry_over",
    "classify",
    "command_head",
    "decay_factor",
    "failure_line",
    "goal_of",
    "heads_in_prose",
    "history_nights",
    "is_informative",
    "is_distinctive_name",
    "is_proven",
    "is_resolved",
    "lesson_detail",
    "lesson_id",
    "names_project",
    "lesson_resolved",
    "named_fix",
    "not_a_failure",
    "NOT_RUN_OPENING",
    "opened",
    "project_aliases",
    "run_nap",
    "run_night",
    "shows_fix",
    "sleep_through",
    "step_kind",
    "too_generic",
    "uncounted",
    "meeting_outcome",
    "runs_fix",
    "verify",
]
