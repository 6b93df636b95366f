"""Ingest throughput end to end: `ingest_paths` (read, parse, archive, store), on one core or two.

Synthesises >= 100 MB of transcripts with the generator of bench_ingest.py from the real
transcripts in ../shared/transcripts (``--source demo``: the demo's sessions), every derived text
field of every episode passed through the scrubber once more (``commons.core.policy.scrubber.scrub``; the episode
builder already does; ``--no-scrub`` leaves the second pass out), pins the process to one CPU
(os.sched_setaffinity; ``--cores 2``: to two, where the archive's writer thread overlaps the
parse), and measures three runs against a fresh store and archive:

- whole:   every transcript read once, complete (the first `commons ingest` of a machine);
- growing: every transcript written in 4 pieces, ingested after each (the daemon's watcher);
           bytes_read must equal the file sizes plus the partial lines carried over: no re-reading;
- idle:    one more pass over the unchanged transcripts (what a watcher's poll costs).

    .venv/bin/python tests/benchmarks/bench_ingest_store.py            # figures for a person
    .venv/bin/python tests/benchmarks/bench_ingest_store.py --json     # the same, for a script
    .venv/bin/python tests/benchmarks/bench_ingest_store.py --mb 20    # a quicker, smaller run
    .venv/bin/python tests/benchmarks/bench_ingest_store.py --cores 2  # wall clock on two cores
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.ingest.archive import Archive  # noqa: E402
from commons.ingest.ingester import IngestReport, ingest_paths  # noqa: E402
from commons.runtime import run as run_trio  # noqa: E402
from commons.store.db import Store  # noqa: E402
from tests.benchmarks.bench_ingest import synthesise  # noqa: E402
from tests.benchmarks.goals import goal  # noqa: E402

GOAL_MB_S = 30
SHARED = ROOT.parent / "shared" / "transcripts"


def _scrubbed(episode):
    """The episode with every text field (and tuple of texts) scrubbed."""
    from commons.core.policy.scrubber import scrub

    changes = {}
    for field in dataclasses.fields(episode):
        value = getattr(episode, field.name)
        if isinstance(value, str) and value:
            changes[field.name] = scrub(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
            changes[field.name] = tuple(scrub(v) for v in value)
    return dataclasses.replace(episode, **changes)


def scrub_in_the_path() -> None:
    """Scrub every text field of the episode builder's output again (the builder scrubs what it makes:
    this second pass, idempotent, is the cost of a door that scrubs all it is handed)."""
    from commons.ingest.episodes import EpisodeBuilder

    episodes, session = EpisodeBuilder.episodes, EpisodeBuilder.session_episode
    EpisodeBuilder.episodes = lambda self: tuple(_scrubbed(e) for e in episodes(self))

    def session_episode(self):
        found = session(self)
        return None if found is None else _scrubbed(found)

    EpisodeBuilder.session_episode = session_episode


class _InlineWriter:
    """The archive's appends made in the parsing thread, as before `ArchiveWriter` (for comparison)."""

    def __init__(self, archive: Archive) -> None:
        self.archive, self.folder = archive, archive.folder
        self.append, self.restart = archive.append, archive.restart

    def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def _pin(cores: int) -> str:
    try:
        cpus = set(sorted(os.sched_getaffinity(0))[:cores])
        os.sched_setaffinity(0, cpus)
        return f"cpu {','.join(map(str, sorted(cpus)))} (sched_setaffinity)"
    except (AttributeError, OSError):
        return "not pinned (no sched_setaffinity here)"


def _ingest(folder: Path, rounds: list[list[Path]]) -> tuple[list[IngestReport], float, float]:
    """Ingest each round of paths into a fresh store and archive; wall and CPU seconds of the lot."""

    async def go() -> list[IngestReport]:
        async with await Store.open(folder / "commons.db") as store:
            archive = Archive(folder / "archive")
            return [await ingest_paths(store, archive, paths, now=float(n)) for n, paths in enumerate(rounds)]

    wall0, cpu0 = time.perf_counter(), time.process_time()
    reports = run_trio(go)
    return reports, time.perf_counter() - wall0, time.process_time() - cpu0


def run(mb: int, source: str = "shared", scrubbed: bool = True, cores: int = 1, inline: bool = False) -> dict:
    pinned = _pin(cores)
    if inline:
        from commons.ingest import ingester

        ingester.ArchiveWriter = _InlineWriter
    if scrubbed:
        scrub_in_the_path()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        src = tmp_path / "transcripts"
        src.mkdir()
        sources = sorted(SHARED.glob("*.jsonl")) if source == "shared" else None
        paths = synthesise(src, mb * 1024 * 1024, sources=sources)
        total = sum(p.stat().st_size for p in paths)

        (whole,), wall, cpu = _ingest(tmp_path / "whole", [paths])
        assert whole.bytes_read == total

        # The same transcripts, growing: each written in 4 pieces cut mid-line, ingested after each.
        rng = random.Random(5)
        blobs = {p: p.read_bytes() for p in paths}
        cuts = {p: sorted(rng.randrange(len(d)) for _ in range(3)) + [len(d)] for p, d in blobs.items()}
        grow = tmp_path / "growing"
        grow.mkdir()
        grow_wall = grow_cpu = 0.0
        grow_read = 0
        home = tmp_path / "grow-home"
        home.mkdir()
        live = {p: grow / p.name for p in paths}
        for step in range(4):
            for p, data in blobs.items():
                live[p].write_bytes(data[: cuts[p][step]])
            (report,), w, c = _ingest(home, [list(live.values())])
            grow_wall, grow_cpu, grow_read = grow_wall + w, grow_cpu + c, grow_read + report.bytes_read
        carried = grow_read - total  # partial lines read again once complete: bounded by a line each

        (idle,), idle_wall, _ = _ingest(home, [list(live.values())])
        assert idle.bytes_read == 0 and idle.episodes == {"session": 0, "error": 0, "correction": 0}

    episodes = sum(whole.episodes.values())
    return {
        "transcripts": len(paths),
        "bytes": total,
        "episodes": episodes,
        "ingest_mb_s": round(total / wall / 1e6, 1),
        "ingest_cpu_mb_s": round(total / cpu / 1e6, 1),
        "growing_mb_s": round(total / grow_wall / 1e6, 1),
        "growing_cpu_mb_s": round(total / grow_cpu / 1e6, 1),
        "growing_bytes_read": grow_read,
        "growing_bytes_read_again": carried,
        "idle_pass_ms_per_transcript": round(idle_wall / len(paths) * 1e3, 2),
        "goal_mb_s": GOAL_MB_S,
        "source": source,
        "scrubbed": scrubbed,
        "cpu": pinned,
        "archive_writes": "inline" if inline else "writer thread",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="megabytes of transcripts to synthesise (default 100)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--source", choices=("shared", "demo"), default="shared",
                        help="templates: ../shared/transcripts (real sessions) or the demo's sessions")
    parser.add_argument("--no-scrub", action="store_true",
                        help="leave out the second scrub of every episode field (the builder's own stays)")
    parser.add_argument("--cores", type=int, default=1, help="CPUs to pin the process to (default 1)")
    parser.add_argument("--inline-archive", action="store_true",
                        help="make the archive's writes in the parsing thread, as before the writer thread")
    args = parser.parse_args(argv)
    f = run(args.mb, args.source, not args.no_scrub, args.cores, args.inline_archive)
    if args.json:
        f["goals"] = [goal(f"ingest end to end (read, parse, archive, store, scrubbed) of {f['bytes'] / 1e6:.0f} MB of "
                           f"transcripts, {f['cpu']}: wall MB/s; each transcript growing in 4 reads",
                           f"{f['ingest_mb_s']} MB/s; growing {f['growing_mb_s']} MB/s", f"≥ {GOAL_MB_S} MB/s",
                           f["ingest_mb_s"] >= GOAL_MB_S, "python -m tests.benchmarks.bench_ingest_store --json")]
        print(json.dumps(f))
        return
    print(f"{f['transcripts']} transcripts, {f['bytes'] / 1e6:.1f} MB, {f['episodes']} episodes; {f['cpu']}; "
          f"archive writes: {f['archive_writes']}")
    print(f"ingest (read + parse + archive + store), wall clock: {f['ingest_mb_s']} MB/s (goal >= {GOAL_MB_S})")
    print(f"ingest, process CPU time: {f['ingest_cpu_mb_s']} MB per CPU-second")
    print(f"growing, 4 reads per transcript: {f['growing_mb_s']} MB/s wall, {f['growing_cpu_mb_s']} MB per CPU-second; "
          f"{f['growing_bytes_read_again']} bytes read twice (partial last lines)")
    print(f"idle pass over unchanged transcripts: {f['idle_pass_ms_per_transcript']} ms per transcript")


if __name__ == "__main__":
    main()
