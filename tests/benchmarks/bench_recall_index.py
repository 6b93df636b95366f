"""Benchmark: recall through the index beside the scan -- CPU per query, build, memory, agreement.

    .venv/bin/python tests/benchmarks/bench_recall_index.py                 # 10^4 and 10^5 lessons
    .venv/bin/python tests/benchmarks/bench_recall_index.py --large         # and 10^6 (about 10 minutes)
    .venv/bin/python tests/benchmarks/bench_recall_index.py --compare       # the libraries side by side, 10^5
    ... --json                                                              # the figures as JSON

Lessons are lesson-like texts drawn Zipf-wise from the words of a real transcript
(``../shared/transcripts/``) plus 20,000 rarer names, embedded by ``commons.core.embedding.hashed``; last
touches spread over 400 days, strengths over 0-4. Each timed recall embeds the query and takes the
top 10, as ``commons recall`` does; times are CPU time of this process (``time.process_time``,
every thread), in one run for the index and the scan. "identical" is the share of queries whose
top 10 rows, in order, equal the scan's (goal >= 0.99); goals for p95: <= 5 ms at 10^5, <= 20 ms
at 10^6. ``restart_s`` is reading the index back from its bytes and syncing it with the lessons.

``--compare`` puts each candidate library behind the same score-shaped vectors (``[x, a, b]``, see
``commons/core/recall/index.py``; for the graphs, padded to one norm and searched in L2) and the same
exact scoring of 100 candidates: faiss IVF-Flat (inner product and L2), faiss HNSW, hnswlib and
usearch where installed (``pip install hnswlib usearch``: they are not dependencies). sqlite-vec is
left out: its vec0 search is brute force, which is the scan again.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.core.embedding.hashed import embed, embed_many, tokenize  # noqa: E402
from commons.core.learning.lessons import DAY  # noqa: E402
from commons.core.recall.scoring import RecallParams, normalised_strength, scores, top_k  # noqa: E402
from commons.core.recall.index import RecallIndex  # noqa: E402

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


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(fn: Callable[[str], list[tuple[int, float]]], texts: list[str]) -> tuple[list[list[int]], list[float]]:
    got, cpu_ms = [], []
    for text in texts:
        t = time.process_time()
        got.append([r for r, _ in fn(text)])
        cpu_ms.append((time.process_time() - t) * 1000)
    return got, cpu_ms


def measure(lessons: int, queries: int, seed: int) -> dict[str, Any]:
    started = time.process_time()
    matrix, touched, strength, texts = lesson_store(lessons, queries, seed)
    embed_seconds = time.process_time() - started
    ids = [f"{i:064x}" for i in range(lessons)]
    rss, started = _rss_mb(), time.process_time()
    index = RecallIndex()
    index.sync(ids, matrix, touched, strength, NOW)
    build_seconds, build_rss = time.process_time() - started, _rss_mb() - rss
    kept = index.to_bytes() if not index.scanning else b""
    started = time.process_time()
    if kept:
        RecallIndex.from_bytes(kept).sync(ids, matrix, touched, strength, NOW)
    restart_seconds = time.process_time() - started
    index.top_k(embed(texts[0]), matrix, touched, strength, NOW)  # warm-up
    # Timed in separate runs over the queries: interleaved, each scan of the whole matrix evicts
    # what the index had in cache, which is the scan's cost charged to the index.
    got, via_index = _timed(lambda text: index.top_k(embed(text), matrix, touched, strength, NOW, k=10), texts)
    want, via_scan = _timed(lambda text: top_k(embed(text), matrix, touched, strength, NOW, k=10), texts)
    same = sum(g == w for g, w in zip(got, want))
    return {
        "lessons": lessons, "queries": queries, "scanning": index.scanning,
        "embed_store_cpu_s": round(embed_seconds, 1), "index_build_cpu_s": round(build_seconds, 1),
        "index_build_rss_mb": round(build_rss), "index_bytes_mb": round(len(kept) / 2**20, 1),
        "restart_cpu_s": round(restart_seconds, 2),
        "identical_top10": round(same / queries, 4),
        "index_p50_ms": _p(via_index, 50), "index_p95_ms": _p(via_index, 95),
        "scan_p50_ms": _p(via_scan, 50), "scan_p95_ms": _p(via_scan, 95),
    }


def _score_vectors(matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, pad: bool) -> np.ndarray:
    """The index's [x, a, b] rows (t_ref = NOW), with a padding column for the L2 graphs."""
    a = np.exp2((touched - NOW) / (RecallParams().recency_half_life_days * DAY)).astype(np.float32)
    b = normalised_strength(strength)
    columns = [matrix, a, b]
    if pad:  # every row of squared norm 3, so that the best inner product is the nearest in L2
        columns.append(np.sqrt(np.maximum(3.0 - (matrix * matrix).sum(1) - a * a - b * b, 0.0)))
    return np.ascontiguousarray(np.column_stack(columns), dtype=np.float32)


def compare(lessons: int, queries: int, seed: int) -> list[dict[str, Any]]:
    """Each library behind the same score-shaped vectors and exact scoring of 100 candidates."""
    matrix, touched, strength, texts = lesson_store(lessons, queries, seed)
    want, _ = _timed(lambda text: top_k(embed(text), matrix, touched, strength, NOW, k=10), texts)
    p = RecallParams()
    candidates = 100
    builders: dict[str, tuple[bool, Callable[[np.ndarray], Callable[[np.ndarray], np.ndarray]]]] = {}
    try:
        import faiss

        faiss.omp_set_num_threads(1)

        def faiss_ivf(metric: int, probe: int) -> Callable[[np.ndarray], Callable[[np.ndarray], np.ndarray]]:
            def build(x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
                cells = int(4 * math.sqrt(len(x)))
                flat = faiss.IndexFlatIP(x.shape[1]) if metric == faiss.METRIC_INNER_PRODUCT else faiss.IndexFlatL2(x.shape[1])
                ivf = faiss.IndexIVFFlat(flat, x.shape[1], cells, metric)
                ivf.cp.min_points_per_centroid = 1
                ivf.train(x[np.random.default_rng(1).choice(len(x), min(len(x), 40 * cells), replace=False)])
                ivf.add(x)
                ivf.nprobe = math.ceil(cells / probe)
                return lambda q: ivf.search(q[None], candidates)[1][0]
            return build

        def faiss_hnsw(x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
            graph = faiss.IndexHNSWFlat(x.shape[1], 16)
            graph.hnsw.efConstruction, graph.hnsw.efSearch = 40, 400
            graph.add(x)
            return lambda q: graph.search(q[None], candidates)[1][0]

        builders["faiss IVF-Flat, inner product, 1/8 of 4*sqrt(n) cells probed"] = (False, faiss_ivf(faiss.METRIC_INNER_PRODUCT, 8))
        builders["faiss IVF-Flat, inner product, 1/16 probed"] = (False, faiss_ivf(faiss.METRIC_INNER_PRODUCT, 16))
        builders["faiss IVF-Flat, L2 (padded), 1/16 probed"] = (True, faiss_ivf(faiss.METRIC_L2, 16))
        builders["faiss HNSW M=16 efC=40 ef=400"] = (True, faiss_hnsw)
    except ImportError:
        print("faiss not installed: skipped", file=sys.stderr)
    try:
        import hnswlib

        def hnsw_lib(x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
            graph = hnswlib.Index(space="l2", dim=x.shape[1])
            graph.init_index(max_elements=len(x), ef_construction=64, M=16)
            graph.set_num_threads(1)
            graph.add_items(x, np.arange(len(x)))
            graph.set_ef(400)
            return lambda q: graph.knn_query(q, k=candidates)[0][0]

        builders["hnswlib M=16 efC=64 ef=400"] = (True, hnsw_lib)
    except ImportError:
        print("hnswlib not installed: skipped", file=sys.stderr)
    try:
        from usearch.index import Index

        def usearch_graph(dtype: str) -> Callable[[np.ndarray], Callable[[np.ndarray], np.ndarray]]:
            def build(x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
                graph = Index(ndim=x.shape[1], metric="l2sq", dtype=dtype, connectivity=16, expansion_add=64,
                              expansion_search=400)
                graph.add(np.arange(len(x)), x, threads=1)
                return lambda q: graph.search(q, candidates, threads=1).keys
            return build

        builders["usearch f32 M=16 efC=64 ef=400"] = (True, usearch_graph("f32"))
        builders["usearch i8 M=16 efC=64 ef=400"] = (True, usearch_graph("i8"))
    except ImportError:
        print("usearch not installed: skipped", file=sys.stderr)
    rows = []
    for name, (pad, build) in builders.items():
        x = _score_vectors(matrix, touched, strength, pad)
        rss, started = _rss_mb(), time.process_time()
        search = build(x)
        built, grown = time.process_time() - started, _rss_mb() - rss

        def through(text: str) -> list[tuple[int, float]]:
            q = embed(text)
            query = np.concatenate([p.relevance_weight * q, [p.recency_weight, p.strength_weight], [0.0] if pad else []])
            keys = search(query.astype(np.float32))
            keys = np.unique(np.asarray(keys, dtype=np.int64)[np.asarray(keys) >= 0])
            s = scores(q, matrix[keys], touched[keys], strength[keys], NOW)
            return [(int(keys[i]), float(s[i])) for i in np.lexsort((keys, -s))[:10]]

        got, cpu_ms = _timed(through, texts)
        rows.append({"library": name, "lessons": lessons, "build_cpu_s": round(built, 1), "rss_growth_mb": round(grown),
                     "identical_top10": round(sum(g == w for g, w in zip(got, want)) / len(texts), 4),
                     "p50_ms": _p(cpu_ms, 50), "p95_ms": _p(cpu_ms, 95)})
        del search, x
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, nargs="+", default=None, help="sizes (default 10^4 and 10^5)")
    parser.add_argument("--large", action="store_true", help="10^6 lessons too (about 10 minutes)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--compare", action="store_true", help="the candidate ANN libraries side by side")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    sizes = args.lessons or ([100_000] if args.compare else [10_000, 100_000])
    if args.large:
        sizes = [*sizes, 1_000_000]
    figures: list[dict[str, Any]] = []
    for size in sizes:
        rows = compare(size, args.queries, args.seed) if args.compare else [measure(size, args.queries, args.seed)]
        figures += rows
        if not args.json:
            for row in rows:
                print("  ".join(f"{k}: {v}" for k, v in row.items()), flush=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
