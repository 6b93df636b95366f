"""Benchmark: recall through the index beside the scan -- latency, and how often the top 10 agree.

    .venv/bin/python tests/benchmarks/bench_recall_index.py                      # 10^5 lessons
    .venv/bin/python tests/benchmarks/bench_recall_index.py --lessons 1000000    # 10^6 (many minutes)
    .venv/bin/python tests/benchmarks/bench_recall_index.py --compare            # ANN libraries side by side
    ... --json                                                                   # the figures as JSON

Lessons are lesson-like texts drawn Zipf-wise from the words of a real transcript
(``../shared/transcripts/``) plus 20,000 rarer names, embedded by ``commons.core.embed``; last
touches spread over 400 days, strengths over 0-4. Each timed recall embeds the query and takes
the top 10, as ``commons.recall`` does. "identical" is the share of queries whose top 10 rows, in
order, equal the scan's (goal >= 0.99); goals for p95: <= 5 ms at 10^5, <= 20 ms at 10^6.

``--compare`` measures the candidate libraries on the same vectors: recall@10 of their raw nearest
neighbours against the exact ones, build seconds and query p95 (single thread), for faiss
IVF-Flat and HNSW, hnswlib and usearch where installed (sqlite-vec is left out: its vec0 search
is brute force).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.core.embed import embed, embed_many, tokenize  # noqa: E402
from commons.core.lessons import DAY  # noqa: E402
from commons.core.recall import top_k  # noqa: E402
from commons.core.recall_index import RecallIndex  # noqa: E402

TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
NOW = 400 * DAY


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    words: set[str] = set()
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        words.update(tokenize(path.read_text(errors="replace")))
    vocab = sorted(words) + [f"name{i}" for i in range(20_000)]
    rng.shuffle(vocab)
    return vocab, [1 / (i + 1) for i in range(len(vocab))]


def lesson_store(lessons: int, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    rng = random.Random(seed)
    vocab, weights = vocabulary(rng)

    def text() -> str:
        return " ".join(rng.choices(vocab, weights, k=rng.randint(6, 20)))

    matrix = embed_many([text() for _ in range(lessons)])
    touched = np.array([rng.random() * NOW for _ in range(lessons)])
    strength = np.array([rng.random() * 4 for _ in range(lessons)], dtype=np.float32)
    return matrix, touched, strength, [text() for _ in range(queries)]


def _p(timings: list[float], q: float) -> float:
    return round(float(np.percentile(timings, q)), 3)


def measure(lessons: int, queries: int, seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    matrix, touched, strength, texts = lesson_store(lessons, queries, seed)
    embed_seconds = time.perf_counter() - started
    started = time.perf_counter()
    index = RecallIndex(matrix, touched, strength, NOW)
    build_seconds = time.perf_counter() - started
    index.top_k(embed(texts[0]), matrix, touched, strength, NOW)  # warm-up
    # The two are timed in separate runs over the queries: interleaved, each scan of the whole
    # matrix evicts what the index had in cache, which is the scan's cost charged to the index.
    via_index, via_scan, got, want = [], [], [], []
    for text in texts:
        t = time.perf_counter()
        got.append([r for r, _ in index.top_k(embed(text), matrix, touched, strength, NOW, k=10)])
        via_index.append((time.perf_counter() - t) * 1000)
    for text in texts:
        t = time.perf_counter()
        want.append([r for r, _ in top_k(embed(text), matrix, touched, strength, NOW, k=10)])
        via_scan.append((time.perf_counter() - t) * 1000)
    same = sum(g == w for g, w in zip(got, want))
    return {
        "lessons": lessons, "queries": queries, "scanning": index.scanning,
        "embed_store_seconds": round(embed_seconds, 1), "index_build_seconds": round(build_seconds, 1),
        "identical_top10": round(same / queries, 4),
        "index_p50_ms": _p(via_index, 50), "index_p95_ms": _p(via_index, 95),
        "scan_p50_ms": _p(via_scan, 50), "scan_p95_ms": _p(via_scan, 95),
    }


def compare(lessons: int, queries: int, seed: int) -> list[dict[str, Any]]:
    """Raw nearest-neighbour quality and speed of each candidate library on the same vectors."""
    matrix, _, _, texts = lesson_store(lessons, queries, seed)
    x = np.ascontiguousarray(matrix, dtype=np.float32)
    qs = np.ascontiguousarray(embed_many(texts), dtype=np.float32)
    truth = [set(np.argpartition(-(x @ q), 10)[:10].tolist()) for q in qs]
    builders: dict[str, Callable[[], Callable[[np.ndarray], np.ndarray]]] = {}
    try:
        import faiss

        faiss.omp_set_num_threads(1)

        def faiss_ivf() -> Callable[[np.ndarray], np.ndarray]:
            cells = int(4 * math.sqrt(len(x)))
            ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(x.shape[1]), x.shape[1], cells, faiss.METRIC_INNER_PRODUCT)
            ivf.train(x[np.random.default_rng(1).choice(len(x), min(len(x), 50 * cells), replace=False)])
            ivf.add(x)
            ivf.nprobe = max(8, cells // 16)
            return lambda q: ivf.search(q[None], 10)[1][0]

        def faiss_hnsw() -> Callable[[np.ndarray], np.ndarray]:
            graph = faiss.IndexHNSWFlat(x.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
            graph.hnsw.efConstruction, graph.hnsw.efSearch = 80, 256
            graph.add(x)
            return lambda q: graph.search(q[None], 10)[1][0]

        builders["faiss IVF-Flat 4*sqrt(n) cells, 1/16 probed"] = faiss_ivf
        builders["faiss HNSW M=32 ef=256"] = faiss_hnsw
    except ImportError:
        pass
    try:
        import hnswlib

        def hnsw_lib() -> Callable[[np.ndarray], np.ndarray]:
            graph = hnswlib.Index(space="ip", dim=x.shape[1])
            graph.init_index(max_elements=len(x), ef_construction=80, M=32)
            graph.set_num_threads(1)
            graph.add_items(x, np.arange(len(x)))
            graph.set_ef(256)
            return lambda q: graph.knn_query(q, k=10)[0][0]

        builders["hnswlib M=32 ef=256"] = hnsw_lib
    except ImportError:
        pass
    try:
        from usearch.index import Index

        def usearch_graph() -> Callable[[np.ndarray], np.ndarray]:
            graph = Index(ndim=x.shape[1], metric="ip", dtype="f32", connectivity=32, expansion_add=80,
                          expansion_search=256)
            graph.add(np.arange(len(x)), x, threads=1)
            return lambda q: graph.search(q, 10, threads=1).keys

        builders["usearch connectivity=32 ef=256"] = usearch_graph
    except ImportError:
        pass
    rows = []
    for name, build in builders.items():
        started = time.perf_counter()
        search = build()
        built = time.perf_counter() - started
        timings, found = [], 0
        for q, want in zip(qs, truth):
            t = time.perf_counter()
            got = search(q)
            timings.append((time.perf_counter() - t) * 1000)
            found += len(want & {int(i) for i in got})
        rows.append({"library": name, "build_seconds": round(built, 1), "recall_at_10": round(found / (10 * len(qs)), 4),
                     "p95_ms": _p(timings, 95)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--compare", action="store_true", help="the candidate ANN libraries side by side")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures: Any = (compare if args.compare else measure)(args.lessons, args.queries, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for row in figures if isinstance(figures, list) else [figures]:
            print("  ".join(f"{k}: {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
