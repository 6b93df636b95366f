"""Learning: from a session's episodes to lessons that report what failed and what worked.

- ``episode``: what ingest keeps of a session (sessions, errors, corrections, tool calls);
- ``failure``: which line of a failed tool's output says what failed;
- ``resolution``: what, later in the same session, resolved a failed call;
- ``generalise``: placeholders for what is particular to one session;
- ``scope``: whether a lesson is local or shared, and its topics;
- ``lessons``: a lesson's local state, strength over time and deterministic text;
- ``predictions``: what a lesson predicts, and how later episodes verify it;
- ``sleep``: the nightly passes (:func:`run_night`); ``nap``: what a session's end learns at once
  (:func:`run_nap`).

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
from commons.core.learning.failure import attribute, failure_line, is_informative
from commons.core.learning.generalise import project_aliases
from commons.core.learning.lessons import (
    DAY,
    Lesson,
    LessonStatus,
    Surprise,
    WriteText,
    adjust,
    decay_factor,
    heads_in_prose,
    is_resolved,
    lesson_detail,
    lesson_id,
    lesson_resolved,
    uncounted,
)
from commons.core.learning.nap import run_nap
from commons.core.learning.predictions import (
    Cause,
    Prediction,
    PredictionStatus,
    RenderedWhere,
    too_generic,
    verify,
)
from commons.core.learning.resolution import OpenFailure, Resolution, advance, named, named_fix, opened
from commons.core.learning.scope import SHELL_TOOLS, classify, command_head
from commons.core.learning.sleep import (
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
    "Cause",
    "CorrectionEpisode",
    "DAY",
    "Episode",
    "EpisodeArchived",
    "EpisodeKind",
    "ErrorEpisode",
    "Event",
    "Lesson",
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
    "SHELL_TOOLS",
    "SessionEpisode",
    "SleepParams",
    "SleepResult",
    "SleepState",
    "Surprise",
    "ToolCall",
    "WriteText",
    "adjust",
    "advance",
    "attribute",
    "classify",
    "command_head",
    "decay_factor",
    "failure_line",
    "heads_in_prose",
    "is_informative",
    "is_resolved",
    "lesson_detail",
    "lesson_id",
    "lesson_resolved",
    "named",
    "named_fix",
    "opened",
    "project_aliases",
    "run_nap",
    "run_night",
    "too_generic",
    "uncounted",
    "verify",
]
