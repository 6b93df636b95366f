"""The experiment's outputs: the figures as tables, the plots and docs/experiment.md."""

from __future__ import annotations

import sys
from pathlib import Path


def _f(value) -> str:
    return "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def table(result: dict) -> str:
    rows = ["| arm | errors met elsewhere first | encounters | errors beyond verifiers | encounters "
            "| avoided via common | lessons published | verifications | lessons common (nodes) | bytes on the wire "
            "| seconds |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in result["arms"].items():
        r = s["records"]
        rows.append(f"| {name} | **{s['errors_met_elsewhere_first']}** | {s['encounters_met_elsewhere_first']} "
                    f"| **{s['errors_beyond_verifiers']}** | {s['encounters_beyond_verifiers']} "
                    f"| {s['avoided_via_common']} | {r['lessons_published']} | {r['verifications_signed']} "
                    f"| {r['lessons_common_at_nodes']} | {s['bytes_on_the_wire']:,} | {s['seconds']} |")
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
    for name, s in result["arms"].items():
        if name == "control":
            continue
        states = s["lesson_states_per_night"]
        for state, style in (("common", "-"), ("candidate", ":")):
            ax.plot(range(1, len(states) + 1), [row[state] for row in states], style, label=f"{name} {state}")
    ax.set_xlabel("night")
    ax.set_ylabel("received lessons, summed over nodes")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(folder / "experiment-lesson-states.png", dpi=110)
    plt.close(fig)
    written.append("experiment-lesson-states.png")
    return written


def write_doc(result: dict, path: Path, command: str) -> None:
    path = Path(path)
    images = plots(result, path.parent)
    red = result["reduction"]
    intro = path.parent / "experiment-notes.md"
    notes = intro.read_text("utf-8") if intro.exists() else ""
    text = f"""# The N-agent experiment

Issue #17; design paper §7.5. Regenerate with `{command}` (seed {result['seed']}, {result['agents']}
agents, {result['days']} days; {sum(s['seconds'] for s in result['arms'].values()):.0f} s for all arms
on this machine, under the load there was). Link: real daemons on loopback.

## Set-up

- {result['agents']} homes (`COMMONS_HOME`), each with its own transcripts folder and memory folder. Each
  day every scripted agent (`simulations/experiment/agent.py`) works one session in the world
  (`world.py`) and writes it as a Claude Code transcript. The agent has no oracle: before a command
  it reads `MEMORY.md` and the lesson files it links, and changes course only when a lesson's
  text names the command as the one that failed *and* names what worked ("`npm install`
  succeeded after it"); it runs that command, and the world says whether it works.
- Every night, on one injected clock (`--at`): each node runs `commons ingest` and `commons sleep`,
  then all daemons run `--at` the night, joined by a ring of bootstrap peers (node i knows node
  i+1) and peer exchange, each reachable through a byte-counting relay, until every record that
  crossed is everywhere and nothing moves; then each node renders its memory folder.
- Pitfalls ({', '.join(result['pitfalls'])}) are met first by different agents on different
  days (`{', '.join(f'{k}: {v}' for k, v in result['first_meeters'].items())}`), twice each (an error
  must repeat to be a lesson); every other agent meets each one later.
- The world changes: {', '.join(f'`{k}` is fixed upstream on day {v}' for k, v in result['fixed_upstream'].items()) or 'nothing is fixed upstream'};
  {f"on {result['quirk'][0]}'s machine a wrong fix for `{result['quirk'][1]}` works (and fails everywhere else)" if result['quirk'] else 'no agent has a wrong fix'}.
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
`(confirmed + prevented) / (confirmed + prevented + failed)` over all nodes' nights of each week.

{notes}
""" + "".join(f"\n![{name}]({name})\n" for name in images)
    path.write_text(text, "utf-8")
