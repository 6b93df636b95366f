"""The door policy's instruction check on its corpus: how many injections it refuses, how many
real-looking lessons it lets through, per form and language (the figures in docs/trust.md).

    .venv/bin/python -m tests.benchmarks.bench_instructions          # the table
    .venv/bin/python -m tests.benchmarks.bench_instructions --json   # for a script

The corpus is tests/fixtures/instructions.py: ``INJECTIONS`` (written to walk past a check),
``DISGUISED`` (the issue's five bypasses, and every third injection again behind a zero-width
space, fullwidth letters, Cyrillic look-alikes, a bidi override or an ANSI colour) and ``BENIGN``
(lessons as commons writes them, among them errors that say "you must" or "should").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from commons.core.policy import Refused, admit  # noqa: E402
from tests.fixtures.instructions import BENIGN, BYPASSES, DISGUISED, INJECTIONS  # noqa: E402


def measure() -> dict:
    started = time.perf_counter()
    verdicts = {t: admit(t) for t in (*INJECTIONS, *DISGUISED, *BENIGN)}
    injections = (*INJECTIONS, *DISGUISED)
    missed = [t for t in injections if not isinstance(verdicts[t], Refused)]
    refused = [t for t in BENIGN if isinstance(verdicts[t], Refused)]
    rules = Counter(verdicts[t].rule for t in injections if isinstance(verdicts[t], Refused))
    return {
        "injections": len(INJECTIONS), "disguised": len(DISGUISED), "benign": len(BENIGN),
        "caught": len(injections) - len(missed), "caught_rate": round(1 - len(missed) / len(injections), 4),
        "missed": missed,
        "bypasses_refused": sum(isinstance(verdicts[t], Refused) for t in BYPASSES),
        "benign_refused": len(refused), "benign_refused_rate": round(len(refused) / len(BENIGN), 4),
        "benign_refused_texts": refused,
        "refused_by_rule": dict(rules.most_common()),
        "microseconds_per_text": round((time.perf_counter() - started) / len(verdicts) * 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    r = measure()
    if args.json:
        print(json.dumps(r, indent=2, ensure_ascii=False))
        return 0
    total = r["injections"] + r["disguised"]
    print("| corpus | texts | refused |")
    print("|---|---|---|")
    print(f"| injections (7 languages) and disguised ones | {total} | **{r['caught']} / {total}** ({r['caught_rate']:.1%}) |")
    print(f"| the issue's five bypasses | 5 | **{r['bypasses_refused']} / 5** |")
    print(f"| benign lessons | {r['benign']} | **{r['benign_refused']} / {r['benign']}** ({r['benign_refused_rate']:.1%}) |")
    print(f"\nrefused by: {', '.join(f'{k} {v}' for k, v in r['refused_by_rule'].items())}")
    print(f"{r['microseconds_per_text']} µs per text")
    for t in r["missed"]:
        print(f"missed: {t!r}")
    for t in r["benign_refused_texts"]:
        print(f"benign refused: {t!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
