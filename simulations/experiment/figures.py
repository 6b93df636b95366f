"""The N-agent experiment's figures (issue #17, item 5), from the agents' encounters (ground
truth) and from what the nodes hold.

The harness matches a lesson to a pitfall only here, to measure (a lesson is about a pitfall when
its first command has the pitfall's program and subcommand); the agents never do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from commons.core.records import decode_body
from commons.core.records import Lesson, Verification
from commons.core.records import Outcome as RecordOutcome  # what a verification says (agent.Outcome: an encounter)
from commons.core.trust import counted_outcome, fix_claim, tests_fix
from commons.node.report import accuracy
from simulations.experiment.agent import COMPLIANCE, Encounter, Outcome, ReadLesson
from simulations.experiment.losses import head, losses
from simulations.experiment.n_agents import ArmRun
from simulations.experiment.schedule import Plan
from simulations.experiment.world import PITFALLS, PitfallKind

REQUIRED = 3  # the default policy's `required`: the peer_review arm's first verifiers


def elsewhere_first(plan: Plan, encounters: Sequence[Encounter]) -> list[Encounter]:
    """Error-pitfall encounters of an agent that is not the pitfall's first meeter."""
    return [e for e in encounters if e.kind is PitfallKind.ERROR and plan.first.get(e.pitfall) not in (None, e.agent)]


def can_count(lesson: Lesson, check: Verification) -> bool:
    """Whether the policy may count ``check`` as a confirmation of ``lesson`` (docs/trust.md, the
    core's own rules): for a lesson naming a fix, its verifier's sessions ran that fix and saw the
    step succeed (fix-confirmed), whatever the verifier had met before; for one naming no fix, it
    says confirmed and its verifier had not met the failure before receipt (naive). A node that
    fixed it its own way, or only met a failure it knew, did none of the verifying that made the
    lesson common, and is not one of its first verifiers."""
    claim = fix_claim(lesson)
    return ((check.naive or tests_fix(claim, check.fix))
            and counted_outcome(claim, check.outcome, check.fix) is RecordOutcome.CONFIRMED)


def first_verifiers(run: ArmRun, plan: Plan, required: int = REQUIRED) -> dict[str, set[str]]:
    """Pitfall → the agents whose confirmations that can count (:func:`can_count`) came first (by
    observed day) for its lessons."""
    author_of = {n.author: n.name for n in run.nodes}
    lessons, checks = {}, []
    for node in run.nodes:
        for r in node.records():
            body = decode_body(bytes.fromhex(r["body"]))
            if isinstance(body, Lesson):
                lessons[r["id"]] = body
            elif isinstance(body, Verification):
                checks.append((body.observed, author_of.get(body.author.hex(), "?"), body))
    about = {rid: ReadLesson(rid, "", lesson.text).about for rid, lesson in lessons.items()}
    counted = [(d, who, check.lesson.hex()) for d, who, check in checks
               if check.lesson.hex() in lessons and can_count(lessons[check.lesson.hex()], check)]
    out: dict[str, set[str]] = {}
    for name in plan.pitfalls:
        pitfall_head = head(name)  # once a pitfall, not once a verification
        ordered = sorted({(d, who) for d, who, lesson in counted if about.get(lesson) == pitfall_head})
        names: list[str] = []
        for _, who in ordered:
            if who not in names:
                names.append(who)
        out[name] = set(names[:required])
    return out


def _agent_rates(run: ArmRun, days: int) -> dict:
    """Paper §7 per agent: repeat-yourself rate, repeated-error rate, surprises per session."""
    out = {}
    for node in run.nodes:
        mine = sorted((e for e in run.encounters if e.agent == node.name), key=lambda e: e.day)
        seen, restated, repeated = set(), 0, 0
        for e in mine:
            if e.error or (e.kind is PitfallKind.CONVENTION and e.outcome is Outcome.MET):
                if e.pitfall in seen:
                    restated += e.kind is PitfallKind.CONVENTION
                    repeated += e.kind is PitfallKind.ERROR
                seen.add(e.pitfall)
        surprises = [c.get("error", 0) + c.get("correction", 0) for c in node.ingest_counts]
        out[node.name] = {"repeat_yourself_rate": round(restated / days, 4),
                          "repeated_error_rate": round(repeated / days, 4),
                          "surprises_per_session": round(sum(surprises) / days, 4),
                          "surprises_by_day": surprises}
    return out


def _accuracy_by_week(run: ArmRun) -> list[float | None]:
    weeks: dict[int, dict] = defaultdict(lambda: {"confirmed": 0, "prevented": 0, "failed": 0})
    for node in run.nodes:
        for night, counts in enumerate(node.night_counts):
            for verdict in ("confirmed", "prevented", "failed"):  # own lessons' and received ones'
                weeks[night // 7][verdict] += counts.get(f"predictions_{verdict}", 0) + counts.get(f"received_{verdict}", 0)
    return [accuracy(weeks[w]) for w in sorted(weeks)]


def _records(run: ArmRun) -> dict:
    published = verified = 0
    common = max((s["common"] for s in run.states), default=0)
    for node in run.nodes:
        for r in node.records():
            mine = r["record"].get("author") == node.author
            published += mine and r["type"] == "lesson"
            verified += mine and r["type"] == "verification"
    return {"lessons_published": published, "verifications_signed": verified,
            "lessons_common_at_nodes": run.states[-1]["common"] if run.states else 0, "peak_common_at_nodes": common}


def misled_honest(run: ArmRun) -> dict:
    """Honest agents a lesson led wrong (its fix failed, or did harm), and how often."""
    hit = [e for e in run.encounters if e.misled and e.agent not in run.bad]
    return {"agents": len({e.agent for e in hit}), "encounters": len(hit),
            "harmed": sum(e.outcome is Outcome.HARMED for e in hit), "who": sorted({e.agent for e in hit})}


def fewest_errors(encounters: Sequence[Encounter], plan: Plan, compliance: float = COMPLIANCE) -> float:
    """The errors of ``encounters`` no lesson could take away, with every lesson perfect and at
    every node: each flaky error, and of every other encounter whose command still fails that day,
    the share the agent goes its own way on (1 - ``compliance``): it declines advice on any
    encounter it has advice for, not only on those control's agents erred on."""
    flaky = sum(e.error for e in encounters if PITFALLS[e.pitfall].flaky)
    failing = sum(not PITFALLS[e.pitfall].flaky and e.day < plan.fixed_upstream.get(e.pitfall, plan.days + 1)
                  for e in encounters)
    return round(flaky + (1 - compliance) * failing, 1)


def arm_figures(run: ArmRun, plan: Plan, verifiers: Mapping[str, set[str]]) -> dict:
    met = [e for e in elsewhere_first(plan, run.encounters) if e.agent not in run.bad]
    beyond = [e for e in met if e.agent not in verifiers.get(e.pitfall, set())]
    changed = set(plan.fixed_upstream) | ({plan.quirk[1]} if plan.quirk else set())
    stable = [e for e in met if e.pitfall not in changed]  # pitfalls the world never changes
    errors_by_day = [sum(e.error for e in run.encounters if e.kind is PitfallKind.ERROR and e.day == d)
                     for d in range(1, plan.days + 1)]
    fixed = plan.fixed_upstream
    stale = {}
    for name, day in fixed.items():
        about = head(name)
        gone = [n + 1 for n, m in enumerate(run.memories) if n + 1 >= day and not any(about in h for h in m.values())]
        stale[name] = (gone[0] - day) if gone else None
    misled = {}
    if plan.quirk:
        hit = [e for e in run.encounters if e.pitfall == plan.quirk[1] and e.outcome is Outcome.MISLED]
        misled = {"agents": len({e.agent for e in hit}), "encounters": len(hit)}
    return {
        "errors_met_elsewhere_first": sum(e.error for e in met),
        "encounters_met_elsewhere_first": len(met),
        "errors_beyond_verifiers": sum(e.error for e in beyond),
        "encounters_beyond_verifiers": len(beyond),
        "errors_on_stable_pitfalls": sum(e.error for e in stable),
        "encounters_on_stable_pitfalls": len(stable),
        "errors_beyond_verifiers_on_stable_pitfalls": sum(e.error for e in beyond if e.pitfall not in changed),
        "fewest_errors_met_elsewhere_first": fewest_errors(met, plan),
        "fewest_errors_beyond_verifiers": fewest_errors(beyond, plan),
        "avoided_via_common": sum(e.outcome is Outcome.AVOIDED and e.layer == "common" for e in met),
        # What the stale-lesson mechanism costs: plain tries of old lessons, and those that met the
        # error because the lesson still held (every such error on a stable pitfall is pure cost).
        "plain_tries": sum(e.tried for e in run.encounters),
        "plain_try_errors": sum(e.tried and e.error for e in run.encounters),
        "plain_try_errors_on_stable_pitfalls": sum(e.tried and e.error for e in stable),
        "errors_per_day": errors_by_day,
        "lesson_states_per_night": run.states,
        "prediction_accuracy_by_week": _accuracy_by_week(run),
        "stale_days_to_leave_all": stale,
        "misled_by_wrong_lesson": misled,
        "misled": misled_honest(run),
        "losses": losses(run.encounters, plan, run.bad, run.memories, run.held),
        "bad_authors": sorted(run.bad),
        "agents": _agent_rates(run, plan.days),
        "records": _records(run),
        "bytes_on_the_wire": run.bytes_crossed,
        "seconds": round(run.seconds, 1),
        "nights_without_daemons": run.skipped_nights,
        "exchange_seconds_mean": round(sum(run.exchange_seconds) / len(run.exchange_seconds), 2)
        if run.exchange_seconds else None,
    }


def _reduction(arms: Mapping[str, dict], arm: str, key: str = "errors_met_elsewhere_first") -> float | None:
    if arm not in arms or "control" not in arms or not arms["control"][key]:
        return None
    return round(1 - arms[arm][key] / arms["control"][key], 3)


def summarise(runs: Mapping[str, ArmRun], plan: Plan, seed: int) -> dict:
    verifiers = first_verifiers(runs["peer_review"], plan) if "peer_review" in runs else {}
    arms = {arm: arm_figures(run, plan, verifiers) for arm, run in runs.items()}
    changing = runs.get("peer_review") or runs.get("trusted") or next(iter(runs.values()))
    headline = arms[changing.arm]
    return {
        "seed": seed, "agents": len(plan.agents), "days": plan.days, "pitfalls": list(plan.pitfalls),
        "first_meeters": dict(plan.first), "fixed_upstream": dict(plan.fixed_upstream),
        "quirk": list(plan.quirk) if plan.quirk else None,
        "first_verifiers": {k: sorted(v) for k, v in verifiers.items()},
        "arms": arms,
        "reduction": {"trusted": _reduction(arms, "trusted"), "peer_review": _reduction(arms, "peer_review"),
                      "peer_review_beyond_verifiers": _reduction(arms, "peer_review", "errors_beyond_verifiers"),
                      "no_fix_seen": _reduction(arms, "no_fix_seen"),
                      # The same, on the pitfalls the world never changes (no upstream fix, no wrong fix).
                      "trusted_stable_pitfalls": _reduction(arms, "trusted", "errors_on_stable_pitfalls"),
                      "peer_review_stable_pitfalls": _reduction(arms, "peer_review", "errors_on_stable_pitfalls"),
                      "peer_review_beyond_verifiers_stable_pitfalls": _reduction(
                          arms, "peer_review", "errors_beyond_verifiers_on_stable_pitfalls")},
        # The changing world's figures, from the arm named (peer_review when it ran): per arm under arms.
        "figures_arm": changing.arm,
        "prediction_accuracy_by_week": headline["prediction_accuracy_by_week"],
        "stale_days_to_leave_all": headline["stale_days_to_leave_all"],
        "misled_by_wrong_lesson": headline["misled_by_wrong_lesson"],
    }
