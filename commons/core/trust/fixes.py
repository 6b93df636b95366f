"""What fix a lesson claims, and what a verification of it counts as (issue #26).

A lesson that names a fix is advice an agent follows, so meeting its failure proves nothing about
it: what makes it common is verifiers whose own sessions ran the named fix and saw the failing
step succeed after it (``FixSeen.CONFIRMED``, judged by the lesson miner's own evidence rules).
A lesson names a fix when its ``fix`` field is set (a version 2 lesson), or when its text quotes a
step other than the failing one (a code span whose command is not the situation's): a version 1
lesson's "`uv add <package>` succeeded after it", or an instruction dressed as an observation
("always run `curl … | sh` before `pip install`"). What a verifier can check is the structured
fix, or for a version 1 lesson the fix its text names in the miner's own phrase; a lesson whose
text quotes any other step claims what no verifier checks, and no verification confirms it.

Counting (``counted_outcome``), for a lesson that names a fix: ``fix-confirmed`` confirms (if the
fix is checkable); ``fix-failed`` and ``other-fix`` (the verifier's failure was resolved another
way: that fix is the verifier's own lesson) count against; a failed prediction counts against; a
confirmed prediction alone and every version 1 verification count for the prediction only, which
this lesson's status does not rest on. For a lesson that names no fix, every verification counts
by its prediction, as in version 1. ``prevented`` counts for no lesson: a stale lesson is not met
either, and the reference node does not sign it (``commons.node.publish``).

A verification that says what its verifier's sessions showed of the named fix (``tests_fix``) needs
no naivety: the fix ran after receipt and worked or did not, whatever the verifier had met before.
Only meeting the failure is worth less from a verifier that knew it already (docs/peer-review.md,
"Naivety and the fix").
"""

from __future__ import annotations

import enum
import re

from commons.core.learning import command_head, fix_named_in_text
from commons.core.records import FixSeen, Lesson, Outcome


class FixClaim(enum.Enum):
    NONE = "none"  # names no fix: meeting the failure confirms it
    CHECKABLE = "checkable"  # names one fix a verifier can run its evidence rules on
    UNCHECKABLE = "uncheckable"  # quotes a step no verifier checks: never confirmed


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def quoted_steps(text: str, situation: str, outcome: str) -> set[str]:
    """The code spans of ``text`` that are steps other than the failing one: not in the
    prediction, and not run by a command the situation names."""
    about = f"{situation}\n{outcome}".lower()
    steps = set()
    for span in _CODE_SPAN.findall(text):
        span = " ".join(span.split())
        head = command_head("bash", span)
        if span.lower() in about or (head and head.lower() in about):
            continue
        steps.add(span)
    return steps


def fix_claim(lesson: Lesson) -> FixClaim:
    """What fix ``lesson`` claims (see the module docstring)."""
    prediction = lesson.prediction
    quoted = quoted_steps(lesson.text, prediction.situation, prediction.outcome)
    checkable = {lesson.fix.step, lesson.fix.failed} if lesson.fix is not None else {fix_named_in_text(lesson.text)}
    checkable.discard("")
    if quoted - checkable:
        return FixClaim.UNCHECKABLE
    if lesson.fix is not None or quoted:
        return FixClaim.CHECKABLE
    return FixClaim.NONE


def claim_of(lesson) -> FixClaim:
    """The claim of a held lesson: a compact fact carries it, a whole record is asked."""
    claim = getattr(lesson, "claim", None)
    return claim if claim is not None else fix_claim(lesson)


_FIX_TESTED = frozenset({FixSeen.CONFIRMED, FixSeen.FAILED, FixSeen.OTHER})


def tests_fix(claim: FixClaim, fix: FixSeen | None) -> bool:
    """Whether a verification of a lesson making ``claim`` reports a test of its fix (``fix``: the
    fix ran and worked, ran and failed, or the failure was resolved another way): evidence that
    counts whether or not its verifier had met the failure before receiving the lesson."""
    return claim is not FixClaim.NONE and fix in _FIX_TESTED


def counted_outcome(claim: FixClaim, outcome: Outcome, fix: FixSeen | None) -> Outcome | None:
    """What a verification (its prediction ``outcome``, what it saw of the ``fix``) counts as for a
    lesson making ``claim``: a confirmation, a failure, or None (the prediction only: not counted)."""
    if fix is FixSeen.PREVENTED:
        # The failure did not come where the lesson was rendered: what a stale lesson would see
        # too, and what a node whose folder already holds the lesson (it is common there) reports.
        return None
    if claim is FixClaim.NONE:
        return outcome
    if fix is FixSeen.CONFIRMED:
        return Outcome.CONFIRMED if claim is FixClaim.CHECKABLE else None
    if fix is FixSeen.FAILED or fix is FixSeen.OTHER or outcome is Outcome.FAILED:
        return Outcome.FAILED
    return None
