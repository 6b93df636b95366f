"""The scrubber on the privacy corpus and on realistic tool output: catch rate, false positives,
speed, and detect-secrets 1.5.0 side by side when it is installed.

    .venv/bin/python -m tests.benchmarks.bench_scrub            # the table for a person
    .venv/bin/python -m tests.benchmarks.bench_scrub --json     # the same, for a script
    .venv/bin/python -m tests.benchmarks.bench_scrub --mb 4     # a quicker speed run
    .venv/bin/python -m tests.benchmarks.bench_scrub --scan .venv/lib/python3.11/site-packages

Catch rate: a case is caught when no 8 characters of its planted value survive ``scrub``.
False positives: benign strings (tests/privacy/corpus.py) that ``scrub`` changes at all.
Ingest path: synthesised transcripts (as bench_ingest makes them) parsed into episodes, alone
and with every text field of every episode scrubbed, per CPU second.
Speed: ``scrub`` over tool results taken from the bundled demo sessions and the shared
transcripts (when present), with file-sized code-like bodies as bench_ingest makes them, each
piece scrubbed on its own as a door would; and over whole transcript lines.

detect-secrets is measured the way it is used, file by file with its default plugins and
filters (``SecretsCollection.scan_file``): a case counts as caught when it reports a secret on a
line holding the planted value or next to it (a PEM block is reported on its BEGIN line); a
benign string counts as a false positive when it reports anything. It is a line scanner, so it
redacts nothing itself; its count is an upper bound on what a redactor built on it would catch.
Install it into the venv only for this (``.venv/bin/pip install detect-secrets==1.5.0``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from commons.core.policy.scrubber import scrub
from commons.ingest.claude_code import parse
from tests.benchmarks.bench_ingest import _code_body, synthesise
from tests.privacy.corpus import BENIGN, FORMATS, cases

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "commons" / "demo" / "sessions", ROOT.parent / "shared" / "transcripts"]
WINDOW = 8


def _survives(secret: str, text: str) -> bool:
    if len(secret) <= WINDOW:
        return secret in text
    return any(secret[i:i + WINDOW] in text for i in range(len(secret) - WINDOW + 1))


def _tool_results(record: object) -> list[str]:
    out: list[str] = []
    if isinstance(record, dict):
        if record.get("type") == "tool_result":
            content = record.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.extend(c.get("text", "") for c in content if isinstance(c, dict))
        for value in record.values():
            out.extend(_tool_results(value))
    elif isinstance(record, list):
        for value in record:
            out.extend(_tool_results(value))
    return [t for t in out if t]


def _transcript_lines() -> list[str]:
    return [line for folder in SOURCES if folder.is_dir()
            for path in sorted(folder.rglob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tool_output(target_bytes: int, seed: int = 3) -> list[str]:
    """Realistic tool results, repeated and mixed with code-like bodies, to ``target_bytes``."""
    rng = random.Random(seed)
    real = [t for line in _transcript_lines() for t in _tool_results(json.loads(line))]
    pieces, total = [], 0
    while total < target_bytes:
        piece = rng.choice(real) if real and rng.random() < 0.6 else _code_body(rng, rng.randint(5, 200))
        pieces.append(piece)
        total += len(piece.encode())
    return pieces


def _mb_per_s(pieces: list[str], clock=time.perf_counter) -> float:
    size = sum(len(p.encode()) for p in pieces)
    t0 = clock()
    for p in pieces:
        scrub(p)
    return size / (clock() - t0) / 1e6


def _derived_fields(episode: object) -> list[str]:
    out: list[str] = []
    for f in dataclasses.fields(episode):
        value = getattr(episode, f.name)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, str))
    return out


def measure_ingest_path(mb: float) -> dict:
    """Parse synthesised transcripts as ingest does, alone and then scrubbing every text field of
    the episodes (the door at which an episode's derived fields are made)."""
    with tempfile.TemporaryDirectory() as tmp:
        blobs = [p.read_bytes() for p in synthesise(Path(tmp), int(mb * 1e6))]
    size = sum(map(len, blobs))
    t0 = time.process_time()
    results = [parse(b) for b in blobs]
    parse_s = time.process_time() - t0
    fields = [t for r in results for e in r.episodes for t in _derived_fields(e)]
    t0 = time.process_time()
    for text in fields:
        scrub(text)
    scrub_s = time.process_time() - t0
    return {"transcript_mb": round(size / 1e6, 1), "derived_field_kb": round(sum(map(len, fields)) / 1e3, 1),
            "parse_cpu_mb_per_s": round(size / parse_s / 1e6, 1),
            "parse_and_scrub_cpu_mb_per_s": round(size / (parse_s + scrub_s) / 1e6, 1)}


def measure_ours() -> dict:
    all_cases = cases()
    missed = [f"{c.format.name}/{c.context}" for c in all_cases if _survives(c.format.secret, scrub(c.text))]
    formats_missed = sorted({m.split("/")[0] for m in missed})
    changed = [b for b in BENIGN if scrub(b) != b]
    return {"cases": len(all_cases), "cases_caught": len(all_cases) - len(missed), "missed": missed,
            "formats": len(FORMATS), "formats_caught_in_all_contexts": len(FORMATS) - len(formats_missed),
            "benign": len(BENIGN), "benign_changed": len(changed), "benign_changed_strings": changed}


def measure_detect_secrets(speed_text: str) -> dict | None:
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def reported_lines(text: str, folder: Path, name: str) -> set[int]:
        path = folder / name
        path.write_text(text, encoding="utf-8")
        collection = SecretsCollection()
        with default_settings():
            collection.scan_file(str(path))
        return {s.line_number for found in collection.data.values() for s in found}

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        caught, missed_formats = 0, set()
        for n, case in enumerate(cases()):
            lines = case.text.splitlines()
            planted = {i + 1 for i, line in enumerate(lines)
                       if any(case.format.secret[j:j + WINDOW] in line
                              for j in range(max(1, len(case.format.secret) - WINDOW + 1)))}
            near = planted | {i - 1 for i in planted} | {i + 1 for i in planted}
            if reported_lines(case.text, folder, f"case{n}.txt") & near:
                caught += 1
            else:
                missed_formats.add(case.format.name)
        flagged = sum(bool(reported_lines(b, folder, f"benign{n}.txt")) for n, b in enumerate(BENIGN))
        path = folder / "speed.txt"
        path.write_text(speed_text, encoding="utf-8")
        t0 = time.perf_counter()
        with default_settings():
            SecretsCollection().scan_file(str(path))
        mb_s = len(speed_text.encode()) / (time.perf_counter() - t0) / 1e6
    return {"cases_caught": caught, "formats_caught_in_all_contexts": len(FORMATS) - len(missed_formats),
            "formats_missed": sorted(missed_formats), "benign_flagged": flagged, "mb_per_s": round(mb_s, 2)}


def scan(root: Path, limit: int) -> dict:
    """What ``findings`` flags in the text files under ``root`` (e.g. installed packages, which
    hold no one's secrets): a check of false positives on text the corpus never saw."""
    from collections import Counter

    from commons.core.policy.scrubber import findings

    kinds: Counter[str] = Counter()
    size = files = 0
    for path in sorted(root.rglob("*.py"))[:limit]:
        text = path.read_text(encoding="utf-8", errors="replace")
        size += len(text)
        files += 1
        kinds.update(f.kind.name.lower() for f in findings(text))
    return {"root": str(root), "files": files, "mb": round(size / 1e6, 1), "findings": dict(kinds.most_common())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=20.0, help="MB of tool output for the speed run")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("--scan", type=Path, help="also count findings in the *.py files under this folder")
    ap.add_argument("--scan-files", type=int, default=3000, help="at most this many files (sorted by path)")
    args = ap.parse_args()
    pieces = tool_output(int(args.mb * 1e6))
    lines = _transcript_lines()
    result = {"ours": measure_ours(),
              "speed_tool_output_mb_per_s": round(_mb_per_s(pieces), 1),
              # on a shared machine the wall clock counts other processes' time too
              "speed_tool_output_cpu_mb_per_s": round(_mb_per_s(pieces, time.process_time), 1),
              "speed_transcript_lines_mb_per_s": round(_mb_per_s(lines * 20), 1),
              "speed_mb": round(sum(len(p.encode()) for p in pieces) / 1e6, 1)}
    result["ingest_path"] = measure_ingest_path(args.mb)
    if args.scan:
        result["scan"] = scan(args.scan, args.scan_files)
    ds = measure_detect_secrets("\n".join(pieces)[: 2_000_000])
    if ds is not None:
        result["detect_secrets_1_5_0"] = ds
    if args.json:
        print(json.dumps(result, indent=2))
        return
    ours = result["ours"]
    print(f"corpus: {ours['formats']} formats x 3 contexts = {ours['cases']} cases; {ours['benign']} benign strings")
    print(f"{'':24}{'cases caught':>14}{'formats (all 3)':>17}{'benign changed':>16}{'MB/s':>8}")
    print(f"{'commons scrub':24}{ours['cases_caught']:>14}{ours['formats_caught_in_all_contexts']:>17}"
          f"{ours['benign_changed']:>16}{result['speed_tool_output_mb_per_s']:>8}")
    if ds is not None:
        print(f"{'detect-secrets 1.5.0':24}{ds['cases_caught']:>14}{ds['formats_caught_in_all_contexts']:>17}"
              f"{ds['benign_flagged']:>16}{ds['mb_per_s']:>8}")
    print(f"scrub over tool output, per CPU second: {result['speed_tool_output_cpu_mb_per_s']} MB/s; "
          f"over whole transcript lines: {result['speed_transcript_lines_mb_per_s']} MB/s")
    ing = result["ingest_path"]
    print(f"ingest path ({ing['transcript_mb']} MB of transcripts, {ing['derived_field_kb']} kB of episode "
          f"fields scrubbed): parse {ing['parse_cpu_mb_per_s']} MB/s, parse + scrub "
          f"{ing['parse_and_scrub_cpu_mb_per_s']} MB/s per CPU second")
    if "scan" in result:
        sc = result["scan"]
        print(f"findings in {sc['files']} files ({sc['mb']} MB) under {sc['root']}: {sc['findings']}")
    if ours["missed"]:
        print("missed:", ", ".join(ours["missed"]))
    if ours["benign_changed_strings"]:
        print("benign changed:", ours["benign_changed_strings"])


if __name__ == "__main__":
    sys.exit(main())
