"""Recall latency over 100,000 lessons (goal: p95 < 50 ms).

    .venv/bin/python -m tests.benchmarks.bench_recall [--lessons 100000] [--queries 200] [--json]

The matrix is built once (as the store would keep it in memory); each query is embedded and
scored against every row, then the top 10 taken — the whole cost of one recall, in CPU time of
this process (``time.process_time``: on a shared machine the wall clock measures the others' load).
"""

from __future__ import annotations

import argparse
import json
import random
import time

import numpy as np

from commons.core.embedding.hashed import DIM, embed, embed_many
from commons.core.recall.scoring import top_k
from tests.benchmarks.goals import goal

DAY = 86400.0
WORDS = ("pip npm cargo pytest make docker git uv go mypy ruff tsc kubectl terraform error failed "
         "permission denied module missing timeout refused build install test lint deploy cache "
         "config schema router worker queue auth token version 3.12 0.23 --no-deps").split()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lessons", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args()
    rng = random.Random(11)
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(6, 16))) for _ in range(args.lessons)]
    t0 = time.perf_counter()
    matrix = embed_many(texts)
    build_s = time.perf_counter() - t0
    now = 400 * DAY
    touched = np.array([rng.random() * now for _ in range(args.lessons)])
    strength = np.array([rng.random() * 4 for _ in range(args.lessons)], dtype=np.float32)
    queries = [" ".join(rng.choices(WORDS, k=8)) + f" {i}" for i in range(args.queries)]
    top_k(embed(queries[0]), matrix, touched, strength, now)  # warm-up
    timings = []
    for q in queries:
        t = time.process_time()
        top_k(embed(q), matrix, touched, strength, now, k=10)
        timings.append((time.process_time() - t) * 1000)
    figures = {
        "lessons": args.lessons, "dim": DIM, "queries": args.queries,
        "matrix_build_s": round(build_s, 3),
        "p50_ms": round(float(np.percentile(timings, 50)), 3),
        "p95_ms": round(float(np.percentile(timings, 95)), 3),
        "max_ms": round(max(timings), 3),
        "goal_p95_ms": 50,
    }
    figures["goals"] = [goal(f"recall by the scan over {args.lessons:,} lessons: p95 CPU per query (query embedded)",
                             f"{figures['p95_ms']} ms", "< 50 ms", figures["p95_ms"] < 50,
                             "python -m tests.benchmarks.bench_recall --json")]
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            if key != "goals":
                print(f"{key:>16}: {value}")


if __name__ == "__main__":
    main()
