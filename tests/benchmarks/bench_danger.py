"""Dangerous fixes at every door, and safe look-alikes kept: `make danger-report` (docs/trust.md).

Replays each case of tests/fixtures/danger/corpus.json (and of written_after.json, written after the
rules) as met in two sessions through the real mining path (tests/danger_corpus.py) and counts, of the dangerous fixes, those shared, published,
rendered as advice or let in from a peer, and of the safe look-alikes, those that lost their lesson.

    .venv/bin/python -m tests.benchmarks.bench_danger          # the figures
    .venv/bin/python -m tests.benchmarks.bench_danger --json   # for a script
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.goals import goal  # noqa: E402
from tests.danger_corpus import CORPUS, WRITTEN_AFTER, cases, measure  # noqa: E402


def _pct(hits: int, total: int) -> str:
    return f"{100 * hits / total:.1f}% ({hits} of {total})" if total else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_danger", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    sets = {"corpus": CORPUS, "written_after": WRITTEN_AFTER}
    every = {name: measure(cases(path)).as_json() for name, path in sets.items()}
    if args.json:
        print(json.dumps({**every, "goals": _goals(every)}, indent=2))
        return 0
    for name, figures in every.items():
        print(f"== {sets[name].name} ==")
        _print(figures)
    return 0


def _goals(every: dict) -> list[dict]:
    command = "python -m tests.benchmarks.bench_danger --json"
    out = []
    for name, f in every.items():
        d, s = f["dangerous"], f["safe"]
        out.append(goal(f"dangerous fixes never published or rendered as advice ({name})",
                        _pct(f["dangerous_contained"], d), "≥ 95%", d and f["dangerous_contained"] >= 0.95 * d, command))
        out.append(goal(f"safe look-alikes that lost their lesson ({name})", _pct(s - f["safe_kept"], s), "≤ 5%",
                        s and s - f["safe_kept"] <= 0.05 * s, command))
    return out


def _print(figures: dict) -> None:
    d, s = figures["dangerous"], figures["safe"]
    print(f"{d} dangerous fixes and {s} safe look-alikes, each met in two sessions "
          f"({', '.join(figures['ecosystems'])})")
    print(f"dangerous never published or rendered as advice         {_pct(figures['dangerous_contained'], d)}"
          "   (goal >= 95%)")
    print(f"  shared {figures['dangerous_shared']}, published {figures['dangerous_published']}, "
          f"rendered as advice {figures['dangerous_rendered_as_advice']}")
    print(f"  mined fix classed by the expected rule                   {_pct(figures['rule_as_expected'], d)}")
    print(f"dangerous refused at the door (a peer's lesson naming it)  {_pct(figures['dangerous_refused_at_the_door'], d)}")
    print(f"  as a lesson names it (placeholders, cut at 70)           "
          f"{_pct(figures['dangerous_refused_at_the_door_as_a_lesson_names_it'], d)}")
    print(f"safe look-alikes that lost their lesson                    {_pct(s - figures['safe_kept'], s)}"
          "   (goal <= 5%)")
    print(f"safe refused at the door, as run / as a lesson names it    "
          f"{figures['safe_refused_at_the_door']} / {figures['safe_refused_at_the_door_as_a_lesson_names_it']}")
    for name, ids in figures["misses"].items():
        if ids:
            print(f"  {name}: {', '.join(ids)}")


if __name__ == "__main__":
    sys.exit(main())
