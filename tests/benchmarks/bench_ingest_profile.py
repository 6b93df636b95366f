"""Where ingest's time goes: `ingest_paths` under cProfile, its own time grouped by what does it.

Synthesises transcripts from ../shared/transcripts (the generator of bench_ingest.py), runs
`ingest_paths` once over them into a fresh store and archive, every transcript read in the calling
thread (so that one profile sees everything; the archive's writes too, made in line), and sums
each function's own time into the part of the path it belongs to: JSON decoding, the scrubber, the
correction rules, failure lines and resolutions, the rest of parsing (the readers and the episode
builder), the archive (hashing, compressing), fsync, the store, and the event loop. A built-in
(a regex search, ``str.lower``) counts for what called it. The profiler slows Python more than C,
so the shares of Python-heavy parts are overstated; the ranking holds. SQLite's work runs in
aiosqlite's own thread, which the profile does not see: the event loop's wait for it shows.

    .venv/bin/python -m tests.benchmarks.bench_ingest_profile              # a table for a person
    .venv/bin/python -m tests.benchmarks.bench_ingest_profile --json       # the same, for a script
    .venv/bin/python -m tests.benchmarks.bench_ingest_profile --code DIR   # profile the commons in
                                                                           # DIR (an older export)
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "transcripts"

# (part, test on "file:function") in order: the first that holds names a function's part.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fsync", ("{built-in method posix.fsync}",)),
    ("archive (hash, compress, write)", ("ingest/archive", "lzma", "zstandard", "blake3", "posix.replace",
                                         "io.open", "mkstemp", "'write' of")),
    ("JSON decoding", ("json/", "json_record")),
    ("scrubber", ("core/scrub",)),
    ("correction rules", ("ingest/corrections",)),
    ("failure lines, resolutions", ("core/failure", "core/resolution", "core/generalise")),
    ("readers and episode builder", ("ingest/claude_code", "ingest/episodes", "ingest/readers", "ingest/turns",
                                     "dataclasses", "'search' of", "'match' of", "'split' of", "isinstance",
                                     "'get' of", "datetime", "'translate' of", "'lower' of", "'strip' of")),
    ("store", ("commons/store", "aiosqlite", "sqlite3", "msgpack")),
    ("event loop, threads", ("trio", "threading", "select", "queue", "outcome", "_contextvars")),
)


def _part(name: str) -> str:
    for part, needles in PARTS:
        if any(n in name for n in needles):
            return part
    return "other"


def run(mb: int) -> dict:
    import trio

    from commons.ingest import ingester
    from commons.ingest.archive import Archive
    from commons.ingest.ingester import ingest_paths
    from commons.runtime import run as run_trio
    from commons.store.db import Store
    from tests.benchmarks.bench_ingest import synthesise

    async def in_line(fn, *args, **_):  # one thread, so one profile sees the whole path
        return fn(*args)

    trio.to_thread.run_sync = in_line
    if hasattr(ingester, "ArchiveWriter"):  # its writes in line too (older code made them so)
        from tests.benchmarks.bench_ingest_store import _InlineWriter

        ingester.ArchiveWriter = _InlineWriter
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "t").mkdir()
        paths = synthesise(folder / "t", mb * 1024 * 1024, sources=sorted(SHARED.glob("*.jsonl")))
        total = sum(p.stat().st_size for p in paths)

        async def go() -> None:
            async with await Store.open(folder / "commons.db") as store:
                await ingest_paths(store, Archive(folder / "archive"), paths, now=1.0)

        profile = cProfile.Profile()
        cpu0 = time.process_time()
        profile.enable()
        run_trio(go)
        profile.disable()
        cpu = time.process_time() - cpu0
    parts: dict[str, float] = {}
    others: dict[str, float] = {}
    for (file, _line, func), (_cc, _nc, own, _cum, callers) in pstats.Stats(profile).stats.items():
        name = f"{file}:{func}"
        # A built-in (a regex search, str.lower) belongs to what called it, unless named above.
        if file == "~" and _part(name) in ("other", "readers and episode builder") and callers:
            spent = sum(c[2] for c in callers.values()) or 1.0
            shares = [(f"{cf}:{cfn}", own * c[2] / spent) for (cf, _cl, cfn), c in callers.items()]
        else:
            shares = [(name, own)]
        for who, seconds in shares:
            key = _part(who)
            parts[key] = parts.get(key, 0.0) + seconds
            if key == "other":
                others[who] = others.get(who, 0.0) + seconds
    whole = sum(parts.values())
    shares = {k: round(v / whole * 100, 1) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])}
    top_other = sorted(others.items(), key=lambda kv: -kv[1])[:5]
    return {"bytes": total, "cpu_s_profiled": round(cpu, 2), "percent": shares,
            "other_top": [[who, round(v / whole * 100, 1)] for who, v in top_other]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=24, help="megabytes of transcripts to synthesise (default 24)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the folder whose commons package is profiled (default: this checkout)")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(args.code.resolve()), str(ROOT)]
    figures = run(args.mb)
    import commons

    figures["code"] = str(Path(commons.__file__).parents[1])
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{figures['code']}: {figures['bytes'] / 1e6:.1f} MB, {figures['cpu_s_profiled']} CPU-s under the profiler "
          f"({figures['bytes'] / figures['cpu_s_profiled'] / 1e6:.1f} MB per CPU-second with its overhead)")
    for part, share in figures["percent"].items():
        print(f"{share:5.1f}%  {part}")
    print("largest in other:", "; ".join(f"{who} {share}%" for who, share in figures["other_top"]))


if __name__ == "__main__":
    main()
