"""The experiment's outputs: the figures as a table, the plots and docs/experiment.md."""

from __future__ import annotations

import sys
from pathlib import Path



# --------------------------------------------------------------------------------------------
# Output


def table(result: dict) -> str:
    arms = result["arms"]
    rows = ["| arm | B errors on A-only pitfalls | B encounters with them | avoided via common layer "
            "| B errors on its own pitfalls | lessons A published | lessons B received | B verifications "
            "| lessons common at B | bytes on the wire |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in arms.items():
        ra, rb = s["records"]["ada"], s["records"]["bo"]
        rows.append(f"| {name} | **{s['b_errors_on_a_only_pitfalls']}** | {s['b_encounters_with_a_only_pitfalls']} "
                    f"| {s['b_avoided_a_only_via_common']} | {s['b_errors_on_own_pitfalls']} "
                    f"| {ra['lessons_published']} | {rb['lessons_received']} | {rb['verifications_signed']} "
                    f"| {rb['lessons_common']} | {s['bytes_crossed']:,} |")
    rows += ["", "| arm | agent | repeat-yourself rate | repeated-error rate | surprises per session "
             "| prediction accuracy |", "|---|---|---|---|---|---|"]
    for name, s in arms.items():
        for agent, r in s["agents"].items():
            acc = "–" if r["prediction_accuracy"] is None else f"{r['prediction_accuracy']:.2f}"
            rows.append(f"| {name} | {agent} | {r['repeat_yourself_rate']:.3f} | {r['repeated_error_rate']:.3f} "
                        f"| {r['surprises_per_session']:.3f} | {acc} |")
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
    arms = result["arms"]
    written = []
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, s in arms.items():
        # Cumulative errors of B on A-only pitfalls, from B's per-day errors restricted to them.
        series, total = [], 0
        for row in s["per_day"]["bo"]:
            total += row.get("errors_on_a_only", 0)
            series.append(total)
        ax.step(range(1, len(series) + 1), series, where="post", label=name)
    ax.set_xlabel("day")
    ax.set_ylabel("B's errors on A-only pitfalls (cumulative)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / "experiment-b-errors.png", dpi=110)
    written.append("experiment-b-errors.png")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, agent in zip(axes, ("ada", "bo")):
        for name, s in arms.items():
            rows = s["per_day"][agent]
            ax.plot([r["day"] for r in rows], [r["surprises_seen"] for r in rows], marker=".", label=name)
        ax.set_title(f"agent {'A' if agent == 'ada' else 'B'} ({agent})")
        ax.set_xlabel("day")
    axes[0].set_ylabel("surprises in the day's session")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(folder / "experiment-surprises.png", dpi=110)
    written.append("experiment-surprises.png")
    plt.close("all")
    return written


def write_doc(result: dict, path: Path, command: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    images = plots(result, path.parent)
    link = ", ".join(result["link"])
    fallback = ("\n**The link in this run was the file fallback (`commons export` → `commons import`), not "
                "the daemons: the daemon commands were missing when it ran.**\n" if "daemon" not in link else "")
    arms = result["arms"]
    head = " · ".join(f"{name}: **{s['b_errors_on_a_only_pitfalls']}** of {s['b_encounters_with_a_only_pitfalls']}"
                      for name, s in arms.items())
    text = f"""# The two-agent experiment

Design paper §7.5: two agents on one machine, each with its own raw stream, exchanging only
lessons over the wire. Does agent B stop making the mistakes only agent A has met?

Regenerate with `{command}` (seed {result['seed']}, {result['days']} days; about
{sum(s['seconds'] for s in arms.values()):.0f} s here). Link: {link}.
{fallback}
## Set-up

- Two homes (`COMMONS_HOME`), two transcripts folders, two memory folders; the scripted agents
  (`simulations/experiment/task_world.py`) write one Claude Code session a day each, in the real format.
- Every night, on one scripted clock: each node runs `commons --at NIGHT ingest` and `sleep`,
  the two daemons are started `--at` the night and gossip over loopback until each holds the
  other's records, then each node renders its memory folder, which its agent reads the next morning.
- A pitfall is avoided only when the memory folder holds a lesson that covers it, judged by sleep's
  own rules: the lesson names the command about to run (or its situation line matches it at
  cosine ≥ 0.5) and reports the surprise that command would meet (cosine ≥ 0.5).
- A meets its {len(result['a_only_pitfalls'])} error pitfalls twice each in the first half (an error
  must repeat before it is a lesson); B meets each of them three times in the second half, and its
  own {len(result['b_own_pitfalls'])} pitfalls across the run. Each agent also has two project
  conventions the person corrects. A-only pitfalls: {', '.join(result['a_only_pitfalls'])}.
- Arms: **control** (publishing off), **trusted** (B names A's author key in `[trust] authors`),
  **peer_review** (no trust in A; `[trust] required = 1`: B confirms a lesson once before it is common).

## Headline: B's errors on the pitfalls only A had met

{head}

{table(result)}

Rates are per session. The repeat-yourself rate counts corrections the person had already given
in an earlier session; the repeated-error rate counts failures the agent had met before.
Surprises per session are what commons itself found in the day's transcript (error and correction
episodes). Prediction accuracy is `(confirmed + prevented) / (confirmed + prevented + failed)`
over the whole run, from each night's sleep.

Convention lessons ("The person corrected the agent, saying …") are `local` by scope and are
never published, so they cannot cross: the repeat-yourself rate is each agent's own.

## Reading it

- Control: B learns each A-only pitfall alone; an error must repeat before it is a lesson, so each
  costs B two errors. Trusted: A's lesson is common at B on arrival and B never meets it.
  Peer review: B's first error confirms A's lesson (B was naive: it received the lesson before
  meeting the surprise), which makes it common at `required = 1`; B errs once per pitfall.
- B's errors on its own pitfalls are the same in every arm: the commons changes nothing else.
- Prediction accuracy is 1.00 because this world never contradicts a lesson: a pitfall, once
  set, always fails the same way until its workaround is used, so a prediction is either met or
  prevented. A world where pitfalls get fixed upstream (the command starts working) would show
  failed predictions and lessons fading; real transcripts (`--a-transcripts/--b-transcripts`) do.
"""
    for image in images:
        text += f"\n![{image}]({image})\n"
    path.write_text(text, "utf-8")
