"""`commons sleep` through the store over 100,000 episodes (goal < 30 s), and recall p95 through
the store over 100,000 lessons.

    .venv/bin/python tests/benchmarks/bench_sleep_store.py [--episodes 100000] [--lessons 100000] [--json]

A fresh home gets the synthetic episodes of ``bench_sleep.py`` (60 days of them) written into its
store; then two nights are timed as a person runs them, each a whole `commons --at … sleep --json`
process (start-up, load, passes, chunked writes, render, morning report): the first night with
every surprise pending, and a night a week later with a week of new episodes and open predictions.
Recall: 100,000 lessons are written to another store, then `commons.node.recall.recall` (score, fetch and
touch the hits) is timed over 50 queries in one process, as the MCP server and the daemon run it:
the first query loads the recall matrix from SQLite (reported as ``recall_cold_ms``); the others
find it in memory, since nothing changed but their own touches (p50 / p95 over those; goal p95 < 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from commons.clock import parse_time
from commons.core.embedding.hashed import embed_many
from commons.core.learning.lessons import Lesson
from commons.core.records import LessonKind, Scope
from commons.home import Home
from commons.runtime import run
from commons.store import lessons as ls
from commons.store.db import Store
from commons.store.episodes import put_episodes
from tests.benchmarks.bench_sleep import DAY, FAILURES, PROGRAMS, WORDS, synthetic_episodes
from tests.benchmarks.goals import goal, quick

START = parse_time("2026-09-01T00:00Z")


def _commons(home: Path, *argv: str) -> tuple[float, dict]:
    env = dict(os.environ, COMMONS_HOME=str(home))
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "commons", *argv], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"commons {' '.join(argv)} failed: {done.stderr}")
    return elapsed, (json.loads(done.stdout) if "--json" in argv else {})


async def _write_episodes(db: Path, episodes: list) -> None:
    async with await Store.open(db) as store:
        for start in range(0, len(episodes), 20_000):
            async with store.transaction():
                await put_episodes(store, episodes[start:start + 20_000], transcript="bench", now=START)


def _lessons(n: int, rng: random.Random) -> list[Lesson]:
    out = []
    for i in range(n):
        head, failure, w = rng.choice(PROGRAMS), rng.choice(FAILURES), rng.choice(WORDS)
        text = f"`{head} {w}` failed with \"{failure.format(w=w, n=i % 500)}\" (seen {2 + i % 5} times)."
        at = START + rng.random() * 60 * DAY
        out.append(Lesson(id=f"{i:064x}", kind=LessonKind.ERROR, text=text, scope=Scope.SHARED, topics=(),
                          gist=f"Bash {head} {w}", triggers=(head,), outcome=failure, episodes=(), provenance=(),
                          strength=1.0 + rng.random() * 2, strength_at=at, touched=at, seen=2, created=at))
    return out


async def _recall_bench(db: Path, lessons: list[Lesson], queries: list[str], now: float) -> list[float]:
    from commons.node import recall as recalling
    from commons.node.context import NodeContext
    from commons.config import Config

    vectors = embed_many([ls.recall_text(lesson) for lesson in lessons])
    async with await Store.open(db) as store:
        for start in range(0, len(lessons), ls.CHUNK_ROWS * 10):
            chunk = lessons[start:start + ls.CHUNK_ROWS * 10]
            async with store.transaction():
                await ls.put_lessons(store, [(lesson, "active") for lesson in chunk],
                                     vectors[start:start + len(chunk)], now)
        home = Home(db.parent, db.parent)
        node = NodeContext.local(Config(), home, b"\0" * 32)
        times = []
        for query in queries:
            t0 = time.perf_counter()
            hits = await recalling.recall(store, node, query, 10, now)
            times.append(time.perf_counter() - t0)
            assert len(hits) == 10
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # BENCH_QUICK=1: a fifth of each (make bench's quick run)
    ap.add_argument("--episodes", type=int, default=20_000 if quick() else 100_000)
    ap.add_argument("--lessons", type=int, default=20_000 if quick() else 100_000)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args()
    rng = random.Random(7)
    root = Path(tempfile.mkdtemp(prefix="commons-bench-sleep-"))
    home = root / "home"
    _commons(home, "init")
    episodes = synthetic_episodes(args.episodes, 60, rng, start=START)
    t0 = time.perf_counter()
    run(_write_episodes, home / "data" / "commons.db", episodes)
    write_s = time.perf_counter() - t0
    night1_s, night1 = _commons(home, "--at", "2026-10-31T03:00Z", "sleep", "--json")
    week = synthetic_episodes(args.episodes // 60 * 7, 7, rng, start=START + 60 * DAY)
    run(_write_episodes, home / "data" / "commons.db", week)
    night2_s, night2 = _commons(home, "--at", "2026-11-07T03:00Z", "sleep", "--json")

    lessons = _lessons(args.lessons, rng)
    queries = [f"{rng.choice(PROGRAMS)} {rng.choice(WORDS)} {rng.choice(FAILURES).format(w='x', n=1)}"
               for _ in range(50)]
    times = run(_recall_bench, root / "recall" / "commons.db", lessons, queries, START + 61 * DAY)
    figures = {
        "episodes": args.episodes,
        "write_episodes_s": round(write_s, 2),
        "night1_s": round(night1_s, 2), "night1_inner_s": night1["seconds"], "night1_counts": night1["counts"],
        "night2_episodes": night2["episodes"], "night2_s": round(night2_s, 2),
        "night2_inner_s": night2["seconds"], "night2_counts": night2["counts"],
        "lessons": args.lessons,
        "recall_cold_ms": round(times[0] * 1000, 1),
        "recall_p50_ms": round(float(np.percentile(times[1:], 50)) * 1000, 1),
        "recall_p95_ms": round(float(np.percentile(times[1:], 95)) * 1000, 1),
        "goal_recall_p95_ms": 50,
        "goal_night_s": 30,
    }
    command = "python -m tests.benchmarks.bench_sleep_store --json"
    figures["goals"] = [
        goal(f"`commons sleep` through the store over {args.episodes:,} episodes, nights 1 and 2 (whole process)",
             f"{figures['night1_s']} s; {figures['night2_s']} s", "< 30 s each",
             max(figures["night1_s"], figures["night2_s"]) < 30, command),
        goal(f"recall through the store over {args.lessons:,} lessons: p95 (wall, fetch and touch included)",
             f"{figures['recall_p95_ms']} ms (first query, loading the matrix: {figures['recall_cold_ms']} ms)",
             "< 50 ms", figures["recall_p95_ms"] < 50, command)]
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"write {args.episodes} episodes: {write_s:.1f} s")
        print(f"night 1 (commons sleep, whole process): {night1_s:.1f} s  {night1['seconds']}")
        print(f"night 2 ({night2['episodes']} episodes): {night2_s:.1f} s  {night2['seconds']}")
        print(f"recall over {args.lessons} lessons: first query {figures['recall_cold_ms']} ms (loads the "
              f"matrix), then p50 {figures['recall_p50_ms']} ms, p95 {figures['recall_p95_ms']} ms")


if __name__ == "__main__":
    main()
