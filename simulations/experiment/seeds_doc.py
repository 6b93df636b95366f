"""docs/experiment.md from a ``--seeds`` summary (issue #29, item 6): every number and every
sentence comes from the figures; what a sentence says depends on what they show."""

from __future__ import annotations

from pathlib import Path

from simulations.experiment.agent import COMPLIANCE
from simulations.experiment.paraphrases import FIRST_READ
from simulations.experiment.seeds import GOALS

_NAMES = {
    "trusted": "errors avoided, trusted (every author trusted), on pitfalls met elsewhere first",
    "peer_review": "errors avoided, peer review (the default policy)",
    "peer_review_beyond_verifiers": "errors avoided, peer review, agents beyond the first verifiers",
    "placebo_misled_over_control": "agents misled, placebo under peer review, minus control",
    "placebo_trusted_misled_over_control": "agents misled, placebo with the bad authors trusted, minus control",
    "reader_follows_paraphrase": "the reader follows a paraphrased correct lesson to its fix",
    "reader_follows_other_command": "the reader follows a lesson about another command",
}


def _f(x) -> str:
    return "–" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))


def _interval(s: dict) -> str:
    low, high = s["ci95"]
    return "–" if low is None else f"[{_f(low)}, {_f(high)}]"


def _conclusions(summary: dict, goals: dict, n: int) -> list[str]:
    out = []
    for key, goal in goals.items():
        s = summary.get(key)
        if not s or s["mean"] is None:
            out.append(f"- `{key}`: not measured in this run (its arm did not run).")
            continue
        low, high = s["ci95"]
        comparison, bound = GOALS[key]
        inside = low is not None and ((low >= bound) if comparison == ">=" else (high <= bound))
        if goal["met"] and inside:
            verdict = f"met, and the whole 95% interval {_interval(s)} is on the goal's side of {bound}"
        elif goal["met"]:
            verdict = f"met on the mean, but the 95% interval {_interval(s)} reaches past {bound}: not settled by {n} seeds"
        else:
            verdict = f"**not met** (95% interval {_interval(s)})"
        out.append(f"- {_NAMES.get(key, key)}: mean {_f(s['mean'])} against the goal {goal['goal']}: {verdict}.")
    return out


def _arm_totals(runs: list[dict]) -> dict[str, dict]:
    totals: dict[str, dict] = {}
    for run in runs:
        for arm, figures in run["arms"].items():
            t = totals.setdefault(arm, {"errors": 0, "encounters": 0, "misled_agents": 0, "misled": 0, "harmed": 0})
            t["errors"] += figures["errors_met_elsewhere_first"]
            t["encounters"] += figures["encounters_met_elsewhere_first"]
            t["misled_agents"] += figures["misled"]["agents"]
            t["misled"] += figures["misled"]["encounters"]
            t["harmed"] += figures["misled"]["harmed"]
    return totals


_STAGES = {
    "flaky": "flaky: the download failed once, as it does one time in two; no lesson prevents that",
    "misled": "followed a lesson, and its fix failed here",
    "plain_try": "gave an old lesson a plain try, and the failure still held",
    "compliance": "found the fix, and went its own way this time (compliance)",
    "reader_missed_fix": "an error lesson about the command in the folder named a fix, and the reader missed it",
    "rendered_without_fix": "an error lesson about the command in the folder named no fix",
    "held_not_rendered": "the node held a lesson about it that was not rendered (a candidate)",
    "not_received": "another node had a shared lesson naming a fix; this node did not hold it",
    "no_fix_or_local": "a node had a lesson about it, local or naming no fix",
    "no_lesson_yet": "no node had a lesson about it yet",
}


def _losses(runs: list[dict], arm: str, key: str = "by_stage") -> dict:
    """Stage → errors (``by_stage``), or kind → stage → errors (``by_kind``), summed over the seeds."""
    out: dict = {}
    for run in runs:
        losses = run["arms"].get(arm, {}).get("losses")
        if not losses:
            continue
        if key == "by_stage":
            for stage, n in losses["by_stage"].items():
                out[stage] = out.get(stage, 0) + n
        else:
            for kind, stages in losses["by_kind"].items():
                for stage, n in stages.items():
                    out.setdefault(kind, {})[stage] = out.setdefault(kind, {}).get(stage, 0) + n
    return out


def _losses_section(runs: list[dict]) -> list[str]:
    arms = [a for a in ("control", "trusted", "peer_review", "placebo", "placebo_trusted")
            if any(a in r["arms"] and r["arms"][a].get("losses") for r in runs)]
    if not arms:
        return []
    totals = {a: _losses(runs, a) for a in arms}
    errors = {a: sum(totals[a].values()) for a in arms}
    lines = ["## Where the errors went", "",
             "Each error an honest agent met on a pitfall another agent met first, put at the first stage of the "
             "lesson's way that failed it (`simulations/experiment/losses.py`), summed over the seeds:", "",
             "| stage | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
    for stage, words in _STAGES.items():
        if any(totals[a].get(stage) for a in arms):
            lines.append(f"| {words} | " + " | ".join(str(totals[a].get(stage, 0)) for a in arms) + " |")
    lines.append("| **all errors** | " + " | ".join(str(errors[a]) for a in arms) + " |")
    if "control" in arms and errors["control"]:
        flaky = totals["control"].get("flaky", 0)
        fewest = [r["arms"]["control"].get("fewest_errors_met_elsewhere_first") for r in runs if "control" in r["arms"]]
        if fewest and None not in fewest:
            ceiling = 1 - sum(fewest) / errors["control"]
            lines += ["", f"Of control's {errors['control']} errors, {flaky} were a flaky download's first try, which "
                      f"no lesson can prevent, and an agent acts on the advice it found {COMPLIANCE:.0%} of the time, "
                      "on every encounter it has advice for (control's agents, learning only from their own "
                      f"sessions, had none on most): even with every other stage perfect, an arm meets about "
                      f"{sum(fewest):.0f} errors, so avoids at most {ceiling:.3f} of control's."]
        else:  # seeds kept before the floor was a figure
            ceiling = (1 - flaky / errors["control"]) * COMPLIANCE
            lines += ["", f"Of control's {errors['control']} errors, {flaky} were a flaky download's first try, which "
                      f"no lesson can prevent, and an agent acts on the advice it found {COMPLIANCE:.0%} of the time: "
                      f"even with every other stage perfect, no arm avoids more than about {ceiling:.3f} of control's "
                      "errors (less the first meetings a lesson needs before it can spread)."]
    if "trusted" in arms:
        kinds = _losses(runs, "trusted", "by_kind")
        lines += ["", "The trusted arm's errors by what makes the pitfall hard:", "",
                  "| pitfall kind | errors | at which stage |", "|---|---|---|"]
        for kind, stages in sorted(kinds.items(), key=lambda kv: -sum(kv[1].values())):
            lines.append(f"| {kind.replace('_', ' ')} | {sum(stages.values())} | "
                         + ", ".join(f"{stage.replace('_', ' ')} {n}" for stage, n in
                                     sorted(stages.items(), key=lambda kv: -kv[1])) + " |")
    return lines + [""]


def _ceiling(run: dict, key: str = "trusted") -> float | None:
    """The most of control's errors any arm could avoid in one seed's run: not the flaky ones, and
    only as often as the agent acts on what it found (``figures.fewest_errors``; seeds kept before
    that figure: control's errors less the flaky ones, times the compliance)."""
    control = run["arms"].get("control", {})
    beyond = key == "peer_review_beyond_verifiers"
    fewest = control.get("fewest_errors_beyond_verifiers" if beyond else "fewest_errors_met_elsewhere_first")
    errors = control.get("errors_beyond_verifiers" if beyond else "errors_met_elsewhere_first")
    if fewest is not None and errors:
        return 1 - fewest / errors
    losses = control.get("losses")
    if not losses or not losses["errors"]:
        return None
    return COMPLIANCE * (1 - losses["by_stage"].get("flaky", 0) / losses["errors"])


def _limits(summary: dict) -> list[str]:
    """What these runs cannot say, from their own figures."""
    runs, s = summary["runs"], summary["summary"]
    out = []
    for key in ("trusted", "peer_review_beyond_verifiers"):
        ceilings = [c for r in runs if (c := _ceiling(r, key)) is not None]
        if ceilings:
            ceiling = sum(ceilings) / len(ceilings)
            mean = s.get(key, {}).get("mean")
            comparison, bound = GOALS[key]
            if mean is None:
                continue
            where = ("above" if bound > ceiling else "below")
            out.append(f"- {_NAMES[key]}: {_f(mean)} of a ceiling of {ceiling:.3f} (mean over the seeds; flaky "
                       f"errors and compliance {COMPLIANCE} put it there); the goal {comparison} {bound} is {where} it"
                       + (", so this world and agent cannot meet it whatever the product does; what the product "
                          f"itself loses is the {max(0.0, ceiling - mean):.3f} between the figure and the ceiling."
                          if bound > ceiling else "."))
    peer = _losses(runs, "peer_review")
    if peer.get("held_not_rendered"):
        out.append(f"- Under peer review, {peer['held_not_rendered']} errors (summed over the seeds) were met while the "
                   "agent's node held a lesson about them that was not yet common: what waiting for three "
                   "independent confirmations of the fix costs.")
    out.append(f"- {len(runs)} seeds of one scripted world, with one agent's reader: the intervals are over seeds of "
               "this world only; the world's pitfalls, values and schedule were written here, not drawn from real work.")
    return out


def _time_section(summary: dict) -> list[str]:
    runs = summary["runs"]
    cpu = [r["cpu_seconds"] for r in runs if r.get("cpu_seconds") is not None]
    if not cpu:
        return []
    per_seed = sum(cpu) / len(cpu)
    cpus = runs[0].get("cpus") or 2
    loads = [r["load_average"] for r in runs if r.get("load_average") is not None]
    return ["## Time", "",
            f"{len(runs)} seeds took {summary['wall_s']} s of wall time, {summary.get('jobs', '–')} seeds at a time, "
            f"on {cpus} CPUs whose 1-minute load averaged {f'{sum(loads) / len(loads):.1f}' if loads else '–'} "
            f"while they ran (other work shares the machine). A seed (every arm) took {per_seed:.0f} "
            f"CPU-seconds on average: 20 seeds are {per_seed * 20:.0f} CPU-seconds, "
            f"{per_seed * 20 / cpus / 60:.1f} minutes on {cpus} otherwise idle CPUs (the goal: 20 minutes).", ""]


def _history_section(history: dict | None) -> list[str]:
    if not history:
        return []
    pooled, held = history["pooled"], history["held_out"]
    a, r = pooled["all"], pooled["repeats"]
    lines = ["## Real history", "",
             f"`{history['command']}` replays {len(history['sets'])} labelled sets of real transcripts in time order, "
             "session by session as the product meets them (each ingested when it ends and napped on, a sleep each "
             "night), and judges each labelled failure by the lessons that existed when its session started. "
             f"Pooled over {len(pooled['sets'])} sets (the held-out ones apart): {a['failures']} failures of labelled "
             f"pitfalls, of which {r['failures']} met a pitfall that had failed in an earlier session. A lesson "
             f"existed for {r['predicted']} of those ({_f(r['predicted_share'])}); {r['named_a_fix']} of them named "
             f"a fix, {r['right_fix']} the one the labels say worked and {r['wrong_fix']} another; "
             f"{r['no_fix_named']} named none. Held out ({', '.join(held['sets']) or 'none'}): "
             f"{held['repeats']['failures']} repeats, {held['repeats']['predicted']} predicted.", "",
             "| set | sessions | failures | repeats | predicted | right fix | wrong fix | failures read from |",
             "|---|---|---|---|---|---|---|---|"]
    for s in history["sets"]:
        if "error" in s:
            lines.append(f"| {s['set']} | – | – | – | – | – | – | could not run: {s['error'][:80]} |")
            continue
        rc = s["repeat_classes"]
        lines.append(f"| {s['set']} | {s['sessions']} | {s['failures']} | {s['repeats']} | "
                     f"{s['repeats'] - rc['no_lesson']} | {rc['right_fix']} | {rc['wrong_fix']} | {s['failures_from']} |")
    return lines + [""]


def render(summary: dict, command: str) -> str:
    runs, s = summary["runs"], summary["summary"]
    n = len(runs)
    first = runs[0] if runs else {}
    lines = [
        "# The N-agent experiment over many seeds",
        "",
        f"Generated by `{command}` from its own figures ({n} seeds: {', '.join(map(str, summary['seeds']))}; "
        f"{first.get('agents', '–')} agents, {first.get('days', '–')} days, arms "
        f"{', '.join(first.get('arms', {}))}; {summary['wall_s']} s of wall time on {first.get('cpus', '–')} CPUs). "
        "Each seed draws who meets what on which day and with which value; the goals were written before the runs "
        "(`simulations/experiment/seeds.py`, `GOALS`).",
        "",
        "## Goals",
        "",
        "| figure | goal | mean | 95% interval | seeds | met |",
        "|---|---|---|---|---|---|",
    ]
    for key in s:
        goal = summary["goals"].get(key)
        lines.append(f"| {_NAMES.get(key, key)} | {goal['goal'] if goal else '–'} | {_f(s[key]['mean'])} | "
                     f"{_interval(s[key])} | {s[key]['n']} | {('yes' if goal['met'] else 'no') if goal and goal['met'] is not None else '–'} |")
    lines += ["", "## What these runs say", "", *_conclusions(s, summary["goals"], n), "",
              "## What they cannot say", "", *_limits(summary), ""]
    lines += ["## Per seed", "", "| seed | trusted | peer review | beyond verifiers | placebo − control | "
              "placebo trusted − control | wall s |", "|---|---|---|---|---|---|---|"]
    for run in runs:
        f = run["figures"]
        lines.append(f"| {run['seed']} | {_f(f['trusted'])} | {_f(f['peer_review'])} | {_f(f['peer_review_beyond_verifiers'])} | "
                     f"{_f(f['placebo_misled_over_control'])} | {_f(f['placebo_trusted_misled_over_control'])} | "
                     f"{_f(run.get('wall_seconds'))} |")
    lines += ["", *_losses_section(runs)]
    totals = _arm_totals(runs)
    lines += ["", "## Every arm, summed over the seeds", "",
              "| arm | errors on pitfalls met elsewhere first | of encounters | honest agents misled (summed per seed) "
              "| encounters misled | of them harmful |", "|---|---|---|---|---|---|"]
    for arm, t in totals.items():
        lines.append(f"| {arm} | {t['errors']} | {t['encounters']} | {t['misled_agents']} | {t['misled']} | {t['harmed']} |")
    reader = first.get("reader", {})
    if reader:
        lines += ["", "## The reader", "",
                  f"The agent reads lessons with `simulations/experiment/reader.py`, which imports nothing of commons. "
                  f"On {reader['paraphrases']} hand-written paraphrases of correct lessons it followed "
                  f"{_f(s['reader_follows_paraphrase']['mean'])} of them to their fix (mean over seeds, each seed "
                  f"swapping the notes' values), and {_f(s['reader_follows_other_command']['mean'])} of "
                  f"{reader['other_commands']} lessons about another command. The paraphrases are in "
                  "`simulations/experiment/paraphrases.py`. They include the notes the reader was adjusted on: "
                  "read for the first time, before any change for them, the later batches scored "
                  + ", ".join(f"{a} of {b} ({name})" for name, (a, b) in FIRST_READ.items())
                  + ", which is nearer what it does on words nobody tuned it to."]
    lines += ["", *_time_section(summary), *_history_section(summary.get("history"))]
    return "\n".join(lines).rstrip("\n") + "\n"


def write(summary: dict, path: Path, command: str) -> None:
    path.write_text(render(summary, command), "utf-8")
