"""Where the errors went that a lesson could have prevented: each error an honest agent met on a
pitfall another agent met first, put at the first stage of the lesson's way that failed it
(issue #29: why the figures fell).

The stages, from the agent back to the first meeter: the agent followed a lesson and its fix failed
(``misled``); it gave an old lesson a plain try and the failure still held (``plain_try``); it found
the fix and went its own way this time (``compliance``); its folder held an error lesson about the
command that names a fix and the reader found none (``reader_missed_fix``), or one that names no fix
(``rendered_without_fix``); its node held a lesson about it that was not
rendered (``held_not_rendered``: a candidate); some node had its own lesson about it that names a
fix and is shared, but this node did not hold it (``not_received``: in control, publishing is off);
some node had a lesson about it, but local or naming no fix (``no_fix_or_local``); no node had a
lesson about it yet (``no_lesson_yet``). A flaky error is ``flaky`` whatever was in the folder: no
lesson prevents a download that fails one time in two.

The harness matches a lesson to a pitfall here by its command's program and subcommand, as
:mod:`simulations.experiment.figures` does; the agents never do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from simulations.experiment.agent import Encounter, Outcome
from simulations.experiment.reader import program
from simulations.experiment.schedule import Plan
from simulations.experiment.world import ERRORS, PITFALLS, PitfallKind

STAGES = ("flaky", "misled", "plain_try", "compliance", "reader_missed_fix", "rendered_without_fix",
          "held_not_rendered", "not_received", "no_fix_or_local", "no_lesson_yet")


def head(name: str) -> str:
    """The program and subcommand of a pitfall's command (what a lesson about it quotes first)."""
    pitfall = PITFALLS[name]
    return " ".join(w for w in program(pitfall.fill(pitfall.command, "x")) if w)


def pitfall_kind(name: str, plan: Plan) -> str:
    """What makes a pitfall hard, one word per pitfall (the first that applies)."""
    pitfall = PITFALLS[name]
    shared_head = sum(head(p.name) == head(name) for p in ERRORS) > 1
    if pitfall.flaky:
        return "flaky"
    if name in plan.fixed_upstream:
        return "fixed_upstream"
    if plan.quirk and plan.quirk[1] == name:
        return "wrong_fix_on_one_machine"
    if pitfall.dangerous_fix:
        return "dangerous_way_round"
    if shared_head:
        return "shares_a_head"
    if pitfall.detour:
        return "look_before_fix"
    return "plain"


def stage(e: Encounter, memories: Sequence[Mapping], held: Sequence[Mapping]) -> str:
    """The first stage that failed the lesson for the error ``e`` (see the module docstring)."""
    if PITFALLS[e.pitfall].flaky:
        return "flaky"
    if e.tried and e.outcome is Outcome.MET:
        return "plain_try"
    if e.outcome is Outcome.MISLED:
        return "misled"
    if e.declined:
        return "compliance"
    night = e.day - 2  # the folder read on day d was rendered the night after day d - 1
    if night < 0 or night >= len(held):
        return "no_lesson_yet"
    mine = head(e.pitfall)
    about = lambda lessons: [l for l in lessons if l[3] == mine]
    here = about(held[night].get(e.agent, ()))
    rendered = [l for l in here if (l[0] == "own" and l[2] == "active") or l[2] == "common"]
    if rendered and any(mine in h for h in memories[night].get(e.agent, ())):
        return "reader_missed_fix" if any(fix for *_, fix in rendered) else "rendered_without_fix"
    if any(status == "candidate" for _, _, status, _, _ in here):
        return "held_not_rendered"
    everyone = [l for lessons in held[night].values() for l in about(lessons)]
    if any(origin == "own" and scope == "shared" and fix for origin, scope, _, _, fix in everyone):
        return "not_received"
    return "no_fix_or_local" if everyone else "no_lesson_yet"


def losses(encounters: Sequence[Encounter], plan: Plan, bad: frozenset[str], memories: Sequence[Mapping],
           held: Sequence[Mapping]) -> dict:
    """Errors met elsewhere first by honest agents, by stage, and by pitfall kind then stage."""
    errors = [e for e in encounters if e.kind is PitfallKind.ERROR and e.error and e.agent not in bad
              and plan.first.get(e.pitfall) not in (None, e.agent)]
    by_stage: Counter = Counter()
    by_kind: dict[str, Counter] = {}
    for e in errors:
        where = stage(e, memories, held)
        by_stage[where] += 1
        by_kind.setdefault(pitfall_kind(e.pitfall, plan), Counter())[where] += 1
    return {"errors": len(errors), "by_stage": {s: by_stage[s] for s in STAGES if by_stage[s]},
            "by_kind": {k: {s: c[s] for s in STAGES if c[s]} for k, c in sorted(by_kind.items())},
            "kinds": {name: pitfall_kind(name, plan) for name in plan.pitfalls}}
