"""Does commons find the person's corrections? Precision and recall against labelled sets.

    python -m commons.ingest.corrections_bench [--json] [--sets DIR ...] [--match GLOB] [--held-out NAME ...]
    make corrections-report                  # the same, every set found

A labelled set is a folder with ``home/`` (the transcripts, as an agent writes them) and
``corrections.json``: a census of every message the person typed, each
``{"session", "uuid_or_index", "text", "is_correction", "why"}`` (``docs/lessons-sets/README.md``).
Every transcript of ``home/`` is read by commons' own reader and episode builder, so each message is
judged in its context (what the agent had just said and done), exactly as ``commons ingest`` judges
it; the correction episodes it makes are matched to the census by the message's id (Claude Code,
Gemini), its time (Codex, whose messages have none) or, for a rejected tool call, its words.

Figures per set, pooled over the sets that are not held out, and for the held-out sets apart
(``LESSONS_HELD_OUT``, default ``lessons_bench.DEFAULT_HELD_OUT``: kept out of every tuning):
precision (corrections found that the census calls corrections), recall (census corrections found).
Sets are looked for where ``commons.ingest.lessons_bench`` looks (``LESSONS_SETS``, else
``shared/lessons-bench/sets`` and ``sets`` beside the checkout).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from commons.core.learning import CorrectionEpisode
from commons.ingest.lessons_bench import DEFAULT_HELD_OUT, set_roots
from commons.ingest.lessons_report import read_all, transcripts


@dataclass(frozen=True)
class SetScore:
    name: str
    labelled: int  # census messages that are corrections
    messages: int  # census messages
    found: int  # census messages commons made a correction of
    correct: int  # of those, labelled corrections
    unlabelled: int  # corrections commons made of no census message (a rejection's words, a wrapper)
    missed: tuple[str, ...]  # the texts of the corrections not found (their first words)
    wrong: tuple[str, ...]  # the texts found that are not corrections

    @property
    def precision(self) -> float | None:
        return self.correct / self.found if self.found else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.labelled if self.labelled else None

    def to_json(self) -> dict[str, object]:
        return {"set": self.name, "messages": self.messages, "labelled": self.labelled, "found": self.found,
                "correct": self.correct, "unlabelled": self.unlabelled, "precision": _round(self.precision),
                "recall": _round(self.recall), "missed": list(self.missed), "wrong": list(self.wrong)}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _instant(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


_LETTERS = re.compile(r"[\W_]+")


def _gist(text: str) -> str:
    """The first letters of a text, for matching a rejection's words whatever the scrubber did."""
    return _LETTERS.sub("", text.lower())[:40]


def find_sets(roots: Sequence[Path]) -> list[Path]:
    return [folder for root in roots for folder in sorted(root.iterdir())
            if (folder / "corrections.json").is_file() and (folder / "home").is_dir()]


def score_set(folder: Path) -> SetScore:
    """Read the set's transcripts as `commons ingest` does; match its corrections to the census."""
    census = json.loads((folder / "corrections.json").read_text(encoding="utf-8"))
    found = [e for e in read_all(transcripts([folder / "home"])) if isinstance(e, CorrectionEpisode)]
    by_key: dict[str, CorrectionEpisode] = {}
    for e in found:
        by_key.setdefault(e.uid, e)
        by_key.setdefault(_instant(e.at), e)
        by_key.setdefault(f"{e.session}:{_gist(e.said)}", e)
    matched: set[int] = set()
    hits, missed, wrong = [], [], []
    for row in census:
        episode = by_key.get(str(row["uuid_or_index"])) or by_key.get(f"{row['session']}:{_gist(row['text'])}")
        if episode is not None:
            matched.add(id(episode))
            hits.append(row)
            if not row["is_correction"]:
                wrong.append(row["text"][:100])
        elif row["is_correction"]:
            missed.append(row["text"][:100])
    labelled = sum(bool(row["is_correction"]) for row in census)
    correct = sum(bool(row["is_correction"]) for row in hits)
    return SetScore(folder.name, labelled, len(census), len(hits), correct,
                    sum(id(e) not in matched for e in found), tuple(missed), tuple(wrong))


def pooled(scores: Sequence[SetScore]) -> dict[str, object]:
    found, correct, labelled = (sum(getattr(s, f) for s in scores) for f in ("found", "correct", "labelled"))
    return {"sets": [s.name for s in scores], "labelled": labelled, "found": found, "correct": correct,
            "precision": _round(correct / found if found else None),
            "recall": _round(correct / labelled if labelled else None)}


def report(folders: Sequence[Path], held_out: Sequence[str]) -> dict[str, object]:
    scores = [score_set(f) for f in folders]
    return {"sets": [s.to_json() for s in scores],
            "pooled": pooled([s for s in scores if s.name not in held_out]),
            "held_out": pooled([s for s in scores if s.name in held_out])}


def _percent(value: object) -> str:
    return "—" if value is None else f"{100 * float(value):.0f}%"  # type: ignore[arg-type]


def format_report(data: dict) -> str:
    lines = [f"{'set':<24} {'messages':>8} {'labelled':>8} {'found':>6} {'correct':>7} {'precision':>9} {'recall':>7}"]
    for s in data["sets"]:
        lines.append(f"{s['set']:<24} {s['messages']:>8} {s['labelled']:>8} {s['found']:>6} {s['correct']:>7} "
                     f"{_percent(s['precision']):>9} {_percent(s['recall']):>7}")
    for title, key in (("pooled (not held out)", "pooled"), ("held out, apart", "held_out")):
        p = data[key]
        if p["sets"]:
            lines.append(f"{title:<24} {'':>8} {p['labelled']:>8} {p['found']:>6} {p['correct']:>7} "
                         f"{_percent(p['precision']):>9} {_percent(p['recall']):>7}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commons.ingest.corrections_bench",
                                     description="Score commons' correction finding against labelled sets.")
    parser.add_argument("--sets", nargs="*", type=Path, metavar="DIR",
                        help="folders of sets (default: LESSONS_SETS, else the sets beside the checkout)")
    parser.add_argument("--held-out", nargs="*", metavar="NAME",
                        help="sets reported apart, never pooled (default: LESSONS_HELD_OUT, else "
                             f"{', '.join(DEFAULT_HELD_OUT)})")
    parser.add_argument("--match", default="*", metavar="GLOB",
                        help="only the sets whose name matches GLOB (e.g. 'b-*': labeller B's census sets)")
    parser.add_argument("--verbose", action="store_true", help="list each set's missed and wrong corrections")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    args = parser.parse_args(argv)
    roots = args.sets or set_roots()
    folders = [f for f in find_sets([r for r in roots if r.is_dir()]) if fnmatch.fnmatch(f.name, args.match)]
    if not folders:
        print("corrections_bench: no labelled set found (a folder with home/ and corrections.json) under "
              f"{', '.join(map(str, roots)) or 'nothing'}: set LESSONS_SETS", file=sys.stderr)
        return 2
    held = args.held_out if args.held_out is not None else \
        [n for n in os.environ.get("LESSONS_HELD_OUT", ":".join(DEFAULT_HELD_OUT)).split(":") if n]
    data = report(folders, held)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(format_report(data))
    if args.verbose:
        for s in data["sets"]:
            lines = [f"  missed: {t}" for t in s["missed"]] + [f"  wrong:  {t}" for t in s["wrong"]]
            if lines:
                print(f"{s['set']}:\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
