"""The experiment's outputs: the figures as tables, the plots and docs/experiment.md."""

from __future__ import annotations

import sys
from pathlib import Path

from simulations.experiment.agent import PLAIN_TRY_DAYS as PLAIN_TRY


def _f(value) -> str:
    return "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def table(result: dict) -> str:
    rows = ["| arm | errors met elsewhere first | encounters | errors beyond verifiers | encounters "
            "| avoided via common | lessons published | verifications | lessons common (nodes) | bytes on the wire "
            "| nights without daemons | seconds |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in result["arms"].items():
        r = s["records"]
        rows.append(f"| {name} | **{s['errors_met_elsewhere_first']}** | {s['encounters_met_elsewhere_first']} "
                    f"| **{s['errors_beyond_verifiers']}** | {s['encounters_beyond_verifiers']} "
                    f"| {s['avoided_via_common']} | {r['lessons_published']} | {r['verifications_signed']} "
                    f"| {r['lessons_common_at_nodes']} | {s['bytes_on_the_wire']:,} | {s.get('nights_without_daemons', '–')} "
                    f"| {s['seconds']} |")
    rows += ["", "| arm | repeat-yourself rate | repeated-error rate | surprises per session | "
             "prediction accuracy by week | misled by the wrong lesson (agents / encounters) "
             "| days until the stale lesson left every folder |", "|---|---|---|---|---|---|---|"]
    for name, s in result["arms"].items():
        agents = s["agents"].values()
        n = max(len(agents), 1)
        mean = lambda key: sum(a[key] for a in agents) / n
        weeks = " · ".join(_f(w) for w in s["prediction_accuracy_by_week"])
        misled = s["misled_by_wrong_lesson"]
        stale = ", ".join(f"{k}: {'not within the run' if v is None else v}" for k, v in s["stale_days_to_leave_all"].items())
        rows.append(f"| {name} | {mean('repeat_yourself_rate'):.3f} | {mean('repeated_error_rate'):.3f} "
                    f"| {mean('surprises_per_session'):.3f} | {weeks} "
                    f"| {misled.get('agents', '–')} / {misled.get('encounters', '–')} | {stale or '–'} |")
    return "\n".join(rows)


def plots(result: dict, folder: Path) -> list[str]:
    """PNG plots beside the doc; [] (and a message) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: docs/experiment.md is written without plots", file=sys.stderr)
        return []
    written = []
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, s in result["arms"].items():
        ax.plot(range(1, len(s["errors_per_day"]) + 1), s["errors_per_day"], marker=".", label=name)
    ax.set_xlabel("day")
    ax.set_ylabel("errors, all agents")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / "experiment-errors-per-day.png", dpi=110)
    plt.close(fig)
    written.append("experiment-errors-per-day.png")
    fig, ax = plt.subplots(figsize=(7, 3.6))
    colours = {"trusted": "tab:blue", "peer_review": "tab:green", "no_fix_seen": "tab:red"}
    for name, s in result["arms"].items():
        if name == "control":
            continue
        states = s["lesson_states_per_night"]
        for state, style in (("common", "-"), ("candidate", ":")):
            ax.plot(range(1, len(states) + 1), [row[state] for row in states], style, color=colours.get(name),
                    label=f"{name} {state}")
    ax.set_xlabel("night")
    ax.set_ylabel("received lessons, summed over nodes")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(folder / "experiment-lesson-states.png", dpi=110)
    plt.close(fig)
    written.append("experiment-lesson-states.png")
    return written


def by_pitfall(result: dict, encounters: dict) -> str:
    """Errors / encounters per pitfall met elsewhere first, per arm (from the ground truth)."""
    arms = list(encounters)
    rows = ["| pitfall | first met by | world | " + " | ".join(arms) + " |", "|---|---|---|" + "---|" * len(arms)]
    quirk = tuple(result["quirk"] or ())
    for name, first in result["first_meeters"].items():
        world = ("fixed upstream on day %d" % result["fixed_upstream"][name] if name in result["fixed_upstream"]
                 else f"wrong fix works for {quirk[0]}" if quirk and quirk[1] == name else "stable")
        cells = []
        for arm in arms:
            mine = [e for e in encounters[arm] if e["pitfall"] == name and e["agent"] != first]
            errors = sum(e["outcome"] in ("met", "misled") for e in mine)
            misled = sum(e["outcome"] == "misled" for e in mine)
            cells.append(f"{errors} / {len(mine)}" + (f" ({misled} misled)" if misled else ""))
        rows.append(f"| `{name}` | {first} | {world} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _kinds_of_error(errors: list[dict]) -> str:
    """"12 misled by the wrong lesson, 3 plain tries of an old lesson that still held, 2 with no
    lesson naming a fix": what the errors of an arm were."""
    misled = sum(e["outcome"] == "misled" for e in errors)
    tried = sum(e["outcome"] == "met" and e.get("tried", False) for e in errors)
    bare = sum(e["outcome"] == "met" and not e.get("tried", False) for e in errors)
    parts = [f"{misled} misled by the wrong lesson" if misled else "",
             f"{tried} plain tries of an old lesson that still held" if tried else "",
             f"{bare} with no lesson naming a fix in the agent's memory folder" if bare else ""]
    return ", ".join(p for p in parts if p) or "none"


def _errors(encounters: dict, arm: str, result: dict, beyond: bool = False) -> list[dict]:
    verifiers = {k: set(v) for k, v in result["first_verifiers"].items()}
    first = result["first_meeters"]
    return [e for e in encounters.get(arm, []) if e["kind"] == "error" and first.get(e["pitfall"]) not in
            (None, e["agent"]) and e["outcome"] in ("met", "misled")
            and not (beyond and e["agent"] in verifiers.get(e["pitfall"], set()))]


def reading(result: dict, encounters: dict | None = None) -> str:
    """What the figures say, in sentences computed from them (so they cannot go stale)."""
    arms, red, out = result["arms"], result["reduction"], []
    encounters = encounters or {}
    if "peer_review" in arms:
        pr = arms["peer_review"]
        by_verifiers = pr["errors_met_elsewhere_first"] - pr["errors_beyond_verifiers"]
        out.append(
            f"- **Peer review's cost.** Of peer_review's {pr['errors_met_elsewhere_first']} errors on pitfalls met "
            f"elsewhere first, {by_verifiers} were made by the first `required = 3` verifiers of each lesson: a received "
            f"lesson is a candidate, candidates are not rendered, so a verifier can only confirm it by meeting the "
            f"error itself (a naive confirmation), once for each of the three. That part is the price of the policy, and only "
            f"a change to it would lower it (render candidates, marked unconfirmed, so that a verifier confirms by "
            f"running the named fix: the fix is what is judged now; or `required = 2`). The other "
            f"{pr['errors_beyond_verifiers']} of {pr['encounters_beyond_verifiers']} encounters beyond the verifiers were "
            f"errors (reduction beyond verifiers: {_f(red['peer_review_beyond_verifiers'])}; on the pitfalls the world "
            f"never changes: {_f(red.get('peer_review_beyond_verifiers_stable_pitfalls'))})"
            + (f": {_kinds_of_error(_errors(encounters, 'peer_review', result, beyond=True))}." if encounters else "."))
    if "trusted" in arms:
        tr = arms["trusted"]
        misled = tr["misled_by_wrong_lesson"]
        out.append(
            f"- **Trusted.** {tr['errors_met_elsewhere_first']} errors of {tr['encounters_met_elsewhere_first']} "
            f"encounters remain (reduction {_f(red['trusted'])}); on the stable pitfalls "
            f"{tr['errors_on_stable_pitfalls']} of {tr['encounters_on_stable_pitfalls']} "
            f"(reduction {_f(red.get('trusted_stable_pitfalls'))})"
            + (f". The errors: {_kinds_of_error(_errors(encounters, 'trusted', result))}." if encounters else ".")
            + f" The wrong lesson misled {misled.get('agents', 0)} agent(s) in {misled.get('encounters', 0)} encounter(s).")
    if "no_fix_seen" in arms:
        out.append(
            f"- **No fix seen.** Reduction {_f(red['no_fix_seen'])}: when no session shows a fix, no lesson names "
            f"one, the agents never change course, and nothing else reaches them: the harness leaks nothing."
            + (" It is below zero because in control each agent still learns from its own sessions (its own "
               "lesson names the fix after two errors), which no_fix_seen's sessions cannot teach either."
               if (red["no_fix_seen"] or 0) < 0 else ""))
    misled = result["misled_by_wrong_lesson"]
    if result.get("quirk"):
        per_arm = ", ".join(f"{arm} {f['misled_by_wrong_lesson'].get('agents', 0)} agent(s) / "
                            f"{f['misled_by_wrong_lesson'].get('encounters', 0)} encounter(s)"
                            for arm, f in arms.items() if arm in ("trusted", "peer_review"))
        out.append(
            f"- **The wrong lesson** (`{result['quirk'][1]}`, published by {result['quirk'][0]}, whose machine's quirk "
            f"makes its fix work there) misled {per_arm}. Commons now judges the fix a lesson names "
            f"(`commons/core/learning/predictions.py`): a session that ran the named fix and saw it fail *fails* the lesson even "
            f"though the error it met is the one predicted. The node stops rendering it that night (its own failed "
            f"judgement hides it, and its own lesson, which names what did work, shows instead) and signs a failed "
            f"verification; under `trusted`, failures outnumbering confirmations by `required` take a trusted "
            f"author's lesson out of the commons (`commons/core/trust/evaluation.py`)"
            + (", so no agent is misled twice" if all(f["misled_by_wrong_lesson"].get("agents", 0) ==
                                                        f["misled_by_wrong_lesson"].get("encounters", 0)
                                                        for f in arms.values()) else "")
            + ". Under peer review the first verifiers meet the error with the lesson not yet rendered and so "
            "confirm its (true) prediction; once it is common, the agents it misleads fail it, each once.")
    weeks = result["prediction_accuracy_by_week"]
    stale = ", ".join(f"`{k}`: {'still in a memory folder at the end of the run' if v is None else f'{v} days'}"
                      for k, v in result["stale_days_to_leave_all"].items())
    cost = ", ".join(f"{arm} {f.get('plain_try_errors_on_stable_pitfalls', 0)} errors in {f.get('plain_tries', 0)} "
                     f"plain tries" for arm, f in arms.items() if arm != "control")
    line = ("- **Predictions and the stale lesson.** Prediction accuracy by week (own lessons' predictions and "
            f"received lessons' judgements, {result['figures_arm']}): " + " · ".join(_f(w) for w in weeks) + ". After an upstream fix the old fix "
            "still works, so following the lesson shows nothing: a prevention looks the same whether the lesson "
            "works or is stale. So a prevention is kept at the node but never signed, and a signed confirmation "
            "always means the failure was seen (its `observed` day). A lesson's file says when its failure was "
            "last seen (an own lesson: its newest episode; a common one: the newest confirmation held), and the "
            f"scripted agent treats a lesson not seen failing for {result.get('plain_try_days', PLAIN_TRY) or '(never: --plain-try-days 0)'} days as worth one plain try: if the "
            "command works, the lesson's failing command ran and did not fail, which fails it (even though it was "
            "rendered), and it leaves that node's folder that night, and the failed verification it signs takes it "
            "out of the commons once failures outnumber confirmations by `required` (and out of its author's own folder, "
            "unless the author's own sessions used it since: `commons/node/review.py`, `hidden_own`); if it fails, "
            "the agent follows the lesson, the error confirms it, and the confirmation renews its date for every node.")
    if stale:
        line += f" Days from the upstream fix until no memory folder held a lesson about it: {stale}."
    if any(v is None for v in result["stale_days_to_leave_all"].values()):
        line += (f" A plain try comes {result.get('plain_try_days', PLAIN_TRY) or 'never'} days after the failure was last seen anywhere, and any meeting of "
                 f"the error before the fix renews that date for every node: a lesson seen failing shortly before "
                 f"its upstream fix (day {', '.join(map(str, result['fixed_upstream'].values()))} of {result['days']}) "
                 f"can outlast the run by that much.")
    line += f" What the plain tries cost on the stable pitfalls: {cost}."
    out.append(line)
    return "\n".join(out)


def _seconds(value) -> str:
    return "–" if value is None else f"{value:.0f}"


def seeds_table(seeds: list[dict]) -> str:
    rows = ["| seed | agents | days | plain try after (days) | trusted | peer_review | beyond verifiers | no_fix_seen | misled (agents / encounters) "
            "| stale lesson left every folder (days) | plain-try errors on stable pitfalls (trusted / peer_review) "
            "| wall seconds | CPU seconds |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in seeds:
        red, m, tries = k["reduction"], k["misled_by_wrong_lesson"], k["plain_try_errors_on_stable_pitfalls"]
        stale = ", ".join("not within the run" if v is None else str(v) for v in k["stale_days_to_leave_all"].values())
        rows.append(f"| {k['seed']} | {k['agents']} | {k['days']} | {k.get('plain_try_days', PLAIN_TRY) or 'never'} "
                    f"| {_f(red['trusted'])} | {_f(red['peer_review'])} "
                    f"| {_f(red['peer_review_beyond_verifiers'])} | {_f(red['no_fix_seen'])} "
                    f"| {m.get('agents', '–')} / {m.get('encounters', '–')} | {stale or '–'} "
                    f"| {tries.get('trusted', '–')} / {tries.get('peer_review', '–')} | {_seconds(k.get('wall_seconds'))} "
                    f"| {_seconds(k.get('cpu_seconds'))} |")
    return "\n".join(rows) + "\n\n" + _across(seeds)


def _across(seeds: list[dict]) -> str:
    """What the seeds say together, computed from the table."""
    tried = [k for k in seeds if k.get("plain_try_days", PLAIN_TRY)]
    never = [k for k in seeds if not k.get("plain_try_days", PLAIN_TRY)]
    met = lambda key, ok: sum(1 for k in tried if k["reduction"][key] is not None and ok(k["reduction"][key]))
    text = (f"With plain tries, the goals are met in {met('trusted', lambda v: v >= 0.9)} of {len(tried)} runs "
            f"(trusted ≥ 0.9), {met('peer_review_beyond_verifiers', lambda v: v >= 0.8)} of {len(tried)} "
            f"(beyond verifiers ≥ 0.8) and {met('no_fix_seen', lambda v: v <= 0.1)} of {len(tried)} (no_fix_seen ≤ 0.1). "
            "The plain-try errors on the stable pitfalls are errors a lesson that still held would have avoided: "
            "the price of finding out that another lesson went stale.")
    for k in never:
        red = k["reduction"]
        stale = ", ".join("never left" if v is None else f"left after {v} days" for v in k["stale_days_to_leave_all"].values())
        text += (f" Seed {k['seed']} without plain tries: trusted {_f(red['trusted'])}, beyond verifiers "
                 f"{_f(red['peer_review_beyond_verifiers'])}, and the stale lesson {stale or '–'}.")
    return text


REPLAY = """## Replay of recorded sessions

Real transcripts instead of the scripted world: `python -m simulations.experiment --transcripts-for
ada=DIR --transcripts-for grace=DIR2 [--arms trusted,peer_review,control] --json` gives each agent its
own home, replays each folder's sessions on the days they were recorded, and runs the same nights
(ingest, sleep, gossip on real daemons, render); it reports per agent the lessons published and
verifications signed, and which received lessons crossed, were confirmed and became common. With
the demo's sessions (`commons/demo/sessions/ada`, `.../grace`) in the trusted arm, grace's `npm ci`
lesson crosses to ada and ada's `pip install` lesson to grace, both common there; in control nothing
crosses (`tests/test_experiment.py`)."""


def write_doc(result: dict, path: Path, command: str, encounters: dict | None = None,
              seeds: list[dict] | None = None) -> None:
    path = Path(path)
    images = plots(result, path.parent)
    red = result["reduction"]
    notes = reading(result, encounters)
    notes += "\n\n" + REPLAY
    if seeds and len(seeds) > 1:
        notes += ("\n\n## Other seeds\n\nThe same run for other seeds (`python -m simulations.experiment --seed N "
                  "--seeds-file docs/experiment-seeds.json`; many seeds at once: `make experiment`): each seed draws who meets "
                  "what on which day, the values, and so which agents verify first.\n\n" + seeds_table(seeds))
    if encounters:
        notes = "## Per pitfall (errors / encounters of agents that did not meet it first)\n\n" + \
            by_pitfall(result, encounters) + "\n\n## Reading it\n\n" + notes
    else:
        notes = "## Reading it\n\n" + notes
    text = f"""# The N-agent experiment

Issue #17; design paper §7.5. Regenerate with `{command}` (seed {result['seed']}, {result['agents']}
agents, {result['days']} days; {result.get('wall_seconds', sum(s['seconds'] for s in result['arms'].values())):.0f} s
wall and {result.get('cpu_seconds', '?')} s CPU for all arms on {result.get('cpus', '?')} CPUs at a mean 1-minute load
average of {result.get('load_average', '?')}: other work shared the machine). Link: real daemons on loopback (the `Daemon` that `commons daemon` runs, one per
home, all N in the harness's one process: `simulations/experiment/links.py`).

## Set-up

- {result['agents']} homes (`COMMONS_HOME`), each with its own transcripts folder and memory folder. Each
  day every scripted agent (`simulations/experiment/agent.py`) works one session in the world
  (`world.py`) and writes it as a Claude Code transcript. The agent has no oracle: before a command
  it reads `MEMORY.md` and the lesson files it links, and changes course only when a lesson's
  text names the command as the one that failed *and* names what worked ("`npm install`
  succeeded after it"); it runs that command, and the world says whether it works. A lesson whose
  file says its failure was last seen {result.get('plain_try_days', PLAIN_TRY) or '(never)'} or more days ago it first tries plainly (the command
  itself), following the lesson only if that fails.
- Every night, on one injected clock (`--at`): each node runs `commons ingest` and `commons sleep`,
  then all daemons run `--at` the night, joined by a ring of bootstrap peers (node i knows node
  i+1) and peer exchange, each reachable through a byte-counting relay, until every record that
  crossed is everywhere and nothing moves; then each node renders its memory folder.
- Pitfalls ({', '.join(result['pitfalls'])}) are met first by different agents on different
  days (`{', '.join(f'{k}: {v}' for k, v in result['first_meeters'].items())}`), twice each (an error
  must repeat to be a lesson); every other agent meets each one later.
- The world changes: {', '.join(f'`{k}` is fixed upstream on day {v}' for k, v in result['fixed_upstream'].items()) or 'nothing is fixed upstream'};
  {f"on {result['quirk'][0]}'s machine a wrong fix for `{result['quirk'][1]}` works (and fails everywhere else)" if result['quirk'] else 'no agent has a wrong fix'}.
- Each pitfall keeps one value for the whole run (one service name, one package): lessons keep
  such arguments (`docker-compose up -d postgres`), and an agent that wanted `redis` would run the
  wrong service. Placeholders commons does make (`uv add <package>`) the agent fills from its own
  command.
- Bytes on the wire are what passed through the relays; nights on which no node had anything new
  to send (no record, no shared lesson to sign) start no daemons, and each arm says how many.
- Arms: **control** (publishing off), **trusted** (every node names every other author key in
  `[trust] authors`), **peer_review** (default policy: web of trust, `required = 3`; every node
  vouches for every other), **no_fix_seen** (as trusted, but no session ever shows a fix).
- First verifiers (peer_review, by the day they observed it): {', '.join(f'{k}: {", ".join(v) or "none"}' for k, v in result['first_verifiers'].items())}.

## Headline

reduction (1 − errors / control errors, same encounters): trusted **{_f(red['trusted'])}** ·
peer_review **{_f(red['peer_review'])}** · peer_review beyond verifiers **{_f(red['peer_review_beyond_verifiers'])}** ·
no_fix_seen **{_f(red['no_fix_seen'])}** (goal: ≥ 0.9, –, ≥ 0.8, ≤ 0.1).

{table(result)}

Rates are per session and agent, averaged over agents; prediction accuracy is
`(confirmed + prevented) / (confirmed + prevented + failed)` over all nodes' nights of each week, own
lessons' predictions and received lessons' judgements together.

{notes}
""" + "".join(f"\n![{name}]({name})\n" for name in images)
    path.write_text(text, "utf-8")
