"""Real history as a second test (issue #29, item 5): labelled real transcripts replayed through
commons in time order, session by session, as the product meets them (each session ingested when it
ends and napped on, a night's sleep after each day with sessions). At the start of each session the
lessons that exist then are what its agent would read; each failure the labellers marked in that
session is asked: did a lesson about its pitfall exist already (it was predicted), and did that
lesson name the fix the labels say really worked? A set with no ``failure_lines.json`` has its
failures read from the error episodes commons made of each session (said per set).

    python -m simulations.experiment.history [--sets DIR ...] [--json]

The sets are the lessons-bench format (``home/``, ``schedule.json``, ``labels.json``,
``failure_lines.json``), found as ``python -m commons.ingest.lessons_bench`` finds them. A set its
labellers kept out of all tuning (``commons.ingest.lessons_bench.DEFAULT_HELD_OUT``) is reported
apart and not pooled. A failure is put under a pitfall when one of the pitfall's ``match`` patterns
is in what the labeller says failed; a lesson is about the pitfall when a pattern is in the lesson's
failure (its text before what it says worked, or its predicted outcome); its fix is right when one
of the pitfall's ``fixes`` patterns is in the fix it names.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from simulations.experiment.homes import ExperimentError, Node

CLASSES = ("no_lesson", "right_fix", "wrong_fix", "no_fix_named")
DAY_START_HOUR = 3  # the night's sleep, as the sets' schedules and the daemon run it


@dataclass(frozen=True)
class Pitfall:
    id: str
    match: tuple[re.Pattern, ...]
    fixes: tuple[re.Pattern, ...]

    def about(self, text: str) -> bool:
        return any(p.search(text) for p in self.match)

    def right(self, fix: str) -> bool:
        return any(p.search(fix) for p in self.fixes)


@dataclass(frozen=True)
class Session:
    path: Path
    started: float
    ended: float
    ids: frozenset[str] = frozenset()  # the session ids it names (and its file's name)

    def holds(self, session: str) -> bool:
        return session in self.ids or any(session in i for i in self.ids)


def pitfalls(labels: dict) -> list[Pitfall]:
    compile_all = lambda patterns: tuple(re.compile(p, re.IGNORECASE) for p in patterns)
    return [Pitfall(p["id"], compile_all(p.get("match", ())), compile_all(p.get("fixes", ())))
            for p in labels.get("pitfalls", ())]


def _stamp(value: object) -> float | None:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    if isinstance(value, (int, float)) and value > 1e9:
        return float(value) / (1000 if value > 1e12 else 1)
    return None


def read(path: Path, fallback: float) -> tuple[float, float, frozenset[str]]:
    """The first and last timestamp a transcript's records carry (``fallback`` for both if none),
    and the session ids they name (Claude Code's ``sessionId``, Codex's session meta ``id``)."""
    stamps, ids = [], {path.stem}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            if (at := _stamp(record.get("timestamp"))) is not None:
                stamps.append(at)
            if isinstance(record.get("sessionId"), str):
                ids.add(record["sessionId"])
            payload = record.get("payload")
            if record.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
                ids.add(payload["id"])
    first, last = (min(stamps), max(stamps)) if stamps else (fallback, fallback)
    return first, last, frozenset(ids)


def sessions(set_dir: Path) -> list[Session]:
    """The set's transcripts, as its schedule lists them, in the order they started."""
    home = set_dir / "home"
    found: dict[Path, float] = {}
    for step in json.loads((set_dir / "schedule.json").read_text("utf-8")):
        at = _stamp(step.get("at")) or 0.0
        paths = step.get("ingest") or []
        if paths == "all":
            paths = [str(p.relative_to(home)) for p in sorted(home.rglob("*.json*"))]
        for rel in paths:
            path = home / rel
            if path.is_file():
                found.setdefault(path, at)
    out = [Session(path, *read(path, at)) for path, at in found.items()]
    return sorted(out, key=lambda s: (s.started, s.path.name))


def failure_pitfall(line: dict, known: Sequence[Pitfall]) -> Pitfall | None:
    text = f"{line.get('what_failed', '')}\n{line.get('command', '')}"
    return next((p for p in known if p.about(line.get("what_failed", ""))), None) or \
        next((p for p in known if p.about(text)), None)


def lesson_failure(lesson: dict) -> str:
    """A lesson's failure: its text before what it says worked, and its predicted outcome."""
    text = lesson.get("text", "")
    cut = text.find('"; ')
    head = text[:cut + 1] if cut >= 0 else text
    outcome = (lesson.get("prediction") or {}).get("outcome", "")
    return f"{head}\n{outcome}"


def lesson_fix(lesson: dict) -> str:
    """The fix a lesson names ('' if none): its step and the words it gives it."""
    fix = lesson.get("fix")
    if not isinstance(fix, dict) or not fix.get("step"):
        return ""
    return f"{fix['step']}\n{fix.get('text') or ''}"


def judge(failure: Pitfall, lessons: Sequence[dict]) -> str:
    """What the lessons that existed said of a failure of ``failure`` (one of ``CLASSES``)."""
    about = [l for l in lessons if l.get("kind") != "correction" and l.get("status") == "active"
             and failure.about(lesson_failure(l))]
    if not about:
        return "no_lesson"
    fixes = [f for l in about if (f := lesson_fix(l))]
    if not fixes:
        return "no_fix_named"
    return "right_fix" if any(failure.right(f) for f in fixes) else "wrong_fix"


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _night_after(at: float) -> float:
    day = datetime.fromtimestamp(at, timezone.utc).replace(hour=DAY_START_HOUR, minute=0, second=0, microsecond=0)
    night = day if day.timestamp() > at else day + timedelta(days=1)
    return night.timestamp()


def _nap(node: Node, at: float) -> None:
    """What a session's end hook does after ingesting it: learn now what needs no night."""
    from commons import runtime
    from commons.node.home_context import HomeContext
    from commons.node.nap import nap

    async def run() -> None:
        ctx = HomeContext.from_environment(_iso(at))
        async with await ctx.open_store() as store:
            await nap(store, ctx.node, ctx.now())

    saved = os.environ.get("COMMONS_HOME")
    os.environ["COMMONS_HOME"] = str(node.home)
    try:
        runtime.run(run)
    finally:
        if saved is None:
            os.environ.pop("COMMONS_HOME", None)
        else:
            os.environ["COMMONS_HOME"] = saved


def replay_set(set_dir: Path, workdir: Path) -> dict:
    """One set replayed session by session; each labelled failure judged by the lessons of then."""
    labels = json.loads((set_dir / "labels.json").read_text("utf-8"))
    known = pitfalls(labels)
    lines_path = set_dir / "failure_lines.json"
    labelled = lines_path.exists()
    lines = [l for l in json.loads(lines_path.read_text("utf-8")) if l.get("is_failure")] if labelled else []
    episodes_seen: set[str] = set()
    order = sessions(set_dir)
    node = Node(set_dir.name, workdir / set_dir.name)
    node.init()
    judged: list[dict] = []
    seen_before: set[str] = set()  # pitfalls that failed in an earlier session
    next_night = _night_after(order[0].started) if order else 0.0
    pending = False
    unplaced = 0
    placed = {id(l): False for l in lines}
    for session in order:
        while pending and session.started >= next_night:
            node.cli("sleep", "--json", at=_iso(next_night))
            pending = False
        if session.started >= next_night:
            next_night = _night_after(session.started)
        lessons = node.cli("lessons", "--status", "all", "--json", at=_iso(session.started))
        node.cli("ingest", str(session.path), "--json", at=_iso(session.ended))
        if labelled:
            mine = [l for l in lines if l.get("session") and session.holds(l["session"])]
        else:  # no failure lines labelled: the error episodes commons made of this session
            episodes = node.cli("episodes", "--kind", "error", "--limit", "0", "--json")["episodes"]
            mine = [{"session": e["session"], "what_failed": e["failure"], "command": e["target"]}
                    for e in episodes if e["uid"] not in episodes_seen]
            episodes_seen.update(e["uid"] for e in episodes)
            lines += mine
            placed.update({id(l): True for l in mine})
        here = set()
        for line in mine:
            placed[id(line)] = True
            pitfall = failure_pitfall(line, known)
            if pitfall is None:
                unplaced += 1
                continue
            judged.append({"session": line["session"], "pitfall": pitfall.id, "met_before": pitfall.id in seen_before,
                           "class": judge(pitfall, lessons)})
            here.add(pitfall.id)
        seen_before |= here
        _nap(node, session.ended)
        pending = True
    classes = Counter(j["class"] for j in judged)
    return {"set": set_dir.name, "failures_from": "failure_lines.json" if labelled else "error episodes",
            "sessions": len(order), "failures": len(judged),
            "failures_unlabelled": unplaced, "failures_in_no_session": sum(not v for v in placed.values()),
            "repeats": sum(j["met_before"] for j in judged),
            "classes": {c: classes[c] for c in CLASSES},
            "repeat_classes": {c: sum(j["class"] == c for j in judged if j["met_before"]) for c in CLASSES},
            "judged": judged}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def figures(results: Sequence[dict]) -> dict:
    """Pooled over ``results``: of the failures (and of the repeats: pitfalls met in an earlier
    session), how many a lesson predicted, and how often the fix it named was the one that worked."""
    total = Counter()
    repeats = Counter()
    for r in results:
        total.update(r["classes"])
        repeats.update(r["repeat_classes"])
    def block(c: Counter) -> dict:
        failures = sum(c[k] for k in CLASSES)
        predicted = failures - c["no_lesson"]
        named = c["right_fix"] + c["wrong_fix"]
        return {"failures": failures, "predicted": predicted, "predicted_share": _ratio(predicted, failures),
                "named_a_fix": named, "right_fix": c["right_fix"], "wrong_fix": c["wrong_fix"],
                "no_fix_named": c["no_fix_named"], "right_fix_share_of_named": _ratio(c["right_fix"], named)}
    return {"sets": [r["set"] for r in results], "all": block(total), "repeats": block(repeats)}


def run(sets: Sequence[Path], held_out: Sequence[str], progress=None) -> dict:
    started = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="commons-history-") as tmp:
        for set_dir in sets:
            t0 = time.monotonic()
            try:
                result = replay_set(set_dir, Path(tmp))
            except ExperimentError as error:
                result = {"set": set_dir.name, "error": str(error)}
            result["seconds"] = round(time.monotonic() - t0, 1)
            results.append(result)
            if progress:
                progress(f"{set_dir.name}: {result.get('failures', '?')} failures, {result['seconds']} s")
    ok = [r for r in results if "error" not in r]
    return {"command": "python -m simulations.experiment.history", "wall_s": round(time.monotonic() - started, 1),
            "pooled": figures([r for r in ok if r["set"] not in held_out]),
            "held_out": figures([r for r in ok if r["set"] in held_out]),
            "sets": results}


def usable(sets: Sequence[Path]) -> list[Path]:
    """The sets with transcripts in their ``home/``, each name once (the first found)."""
    found: dict[str, Path] = {}
    for s in sets:
        if s.name not in found and (s / "home").is_dir() and any((s / "home").rglob("*.json*")):
            found[s.name] = s
    return list(found.values())


def main(argv: Sequence[str] | None = None) -> int:
    from commons.ingest.lessons_bench import DEFAULT_HELD_OUT, find_sets, set_roots

    parser = argparse.ArgumentParser(prog="python -m simulations.experiment.history", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, nargs="*", help="set folders (default: every set lessons_bench finds)")
    parser.add_argument("--held-out", nargs="*", default=list(DEFAULT_HELD_OUT), help="sets reported apart")
    parser.add_argument("--out", type=Path, help="write the JSON here too")
    parser.add_argument("--json", action="store_true", help="print the JSON")
    args = parser.parse_args(argv)
    sets = usable(args.sets or find_sets(set_roots()))
    if not sets:
        print("history: no labelled set with transcripts found (LESSONS_SETS, ../shared/lessons-bench/sets, ../sets)",
              file=sys.stderr)
        return 1
    report = run(sets, args.held_out, progress=lambda line: print(line, file=sys.stderr, flush=True))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name in ("pooled", "held_out"):
            print(name, json.dumps({k: v for k, v in report[name].items() if k != "sets"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
