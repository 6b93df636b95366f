"""Recall through an index: the top k of ``recall.top_k`` without scoring every lesson.

A recall score is ``w_rel · relevance + prior``, where the *prior* (``w_rec · recency +
w_str · strength``) does not depend on the query. So the best rows come from two lists: the rows
most relevant to the query, found by a graph index over the embeddings (faiss ``IndexHNSWFlat``,
inner product on unit rows: the cosine), and the rows whose prior alone is highest, kept sorted.
The union is scored exactly (``recall.scores``). A row in neither list scores at most
``w_rel · r + p`` (r the last relevance the graph returned, p the first prior not read), so once
the k-th exact score beats that bound no row left out can enter the top k (Fagin's threshold
algorithm); if it does not, the prior list is read further, down to where it does. If that would
make a tenth of the rows candidates, the index scans instead. The answer is the scan's but for
rows the graph walk misses although they are more relevant than what it returned (approximate
search; ``bench_recall_index.py`` measures how often the top k differs from the scan's).

Why HNSW (faiss) and these settings, measured by ``bench_recall_index.py --compare`` on 10^5
hashed embeddings of lesson-like texts (2026-12-01, 2-core machine under load): the 256-dimension
hashed embeddings are weakly clustered (a query's best match often has a cosine of 0.3-0.5), so
every library's raw top 10 misses some of the true ten -- recall@10 0.92 for faiss IVF-Flat
(1,264 cells, 79 probed; p95 13.5 ms, built in 17 s), 0.88 for faiss HNSW (32 links, ef 256;
p95 0.8 ms, 71 s), 0.90 for hnswlib (same graph; p95 16.6 ms, 35 s) and 0.90 for usearch (p95
5.2 ms, 100 s). None is enough alone; the threshold algorithm above needs only the graph's first
25 rows, which are reliable, and reads the rest exactly from the prior list. faiss HNSW answered
fastest; faiss is also the best kept of the four (monthly releases) and offers both kinds of index
behind one API. sqlite-vec was not measured: its vec0 tables search by brute force, which is the
numpy scan again.

The prior list is sorted once, at a time ``t0``. Recency only decays as time passes, so for a row
untouched since, its prior at any later ``now`` is at most its prior at ``t0``: the sorted list
stays an upper bound without re-sorting. Rows whose last touch or strength changed, and rows
added, are *fresh*: they are candidates in every query until the next re-sort.

Small stores keep the scan (``IndexParams.scan_below``): below it, a scan is as fast as the index
and exact. Sans-I/O: arrays in, rows out; the caller keeps the matrix, ``touched`` and
``strength`` and tells the index what changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .lessons import DAY
from .recall import RecallParams, normalised_strength, scores, top_k


class RecallIndexUsageError(ValueError):
    """The caller broke the index's contract (arrays that do not match what it indexed)."""


@dataclass(frozen=True)
class IndexParams:
    scan_below: int = 20_000  # rows; below this recall scans (measured: bench_recall_index.py)
    graph_degree: int = 32  # HNSW links per node (measured: 16 misses the top row too often)
    build_breadth: int = 80  # HNSW efConstruction
    search_breadth: int = 256  # HNSW efSearch: candidates the graph walk keeps per query
    # Rows the graph returns per query (at most search_breadth). Few, on purpose: the graph's first
    # rows are reliable, its deeper ones are not, and the bound trusts the last one returned; the
    # prior list, read exactly, makes up the rest (measured: 25 gave the scan's top 10 in 200 of
    # 200 queries at 10^5, 100 in 99%, 400 in 84%).
    graph_read: int = 25
    first_read: int = 100  # prior rows read before the first bound check
    give_up_fraction: float = 0.1  # candidates beyond this share of the rows: scan instead
    resort_fresh_fraction: float = 0.01  # fresh rows beyond this share: sort the prior list again
    seed: int = 1

    def __post_init__(self) -> None:
        if min(self.scan_below, self.first_read, self.graph_degree, self.build_breadth, self.graph_read) < 1:
            raise ValueError("IndexParams: sizes and breadths must be positive")
        if self.search_breadth < self.graph_read:
            raise ValueError("IndexParams: search_breadth must be at least graph_read")


def _prior(touched: np.ndarray, strength: np.ndarray, now: float, params: RecallParams) -> np.ndarray:
    """What a row scores with no relevance at all, exactly as ``recall.scores`` computes it."""
    age_days = np.maximum(now - np.asarray(touched, dtype=np.float64), 0.0) / DAY
    recency = np.exp2(-age_days / params.recency_half_life_days).astype(np.float32)
    return (params.recency_weight * recency + params.strength_weight * normalised_strength(strength)).astype(np.float32)


class RecallIndex:
    """The top k of a lesson matrix, through a graph index and a sorted prior list when large."""

    def __init__(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, now: float,
                 params: RecallParams = RecallParams(), index_params: IndexParams = IndexParams()) -> None:
        self.params, self.index_params = params, index_params
        self._rows = 0
        self._graph: Any = None  # faiss index, or None while the store is small enough to scan
        self._fresh: set[int] = set()
        self._order = np.zeros(0, dtype=np.int64)  # rows by prior at _t0, highest first
        self._sorted_prior = np.zeros(0, dtype=np.float32)
        # The embeddings of the first rows of the prior list, in that order: reading the list is
        # then one contiguous product, not a gather (at most give_up_fraction of the matrix).
        self._prior_rows = np.zeros((0, matrix.shape[1] if matrix.ndim == 2 else 0), dtype=np.float32)
        self._matrix = matrix  # rows are only appended, so the last matrix seen holds every row
        self._t0 = now
        self.extend(matrix, touched, strength, now)

    def __len__(self) -> int:
        return self._rows

    @property
    def scanning(self) -> bool:
        return self._graph is None

    # -- keeping it up to date ---------------------------------------------------------------------

    def extend(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, now: float) -> None:
        """Rows appended at the end of ``matrix`` since the last call (the whole matrix is passed)."""
        self._check(matrix, touched, strength, at_least=self._rows)
        self._matrix = matrix
        new = np.arange(self._rows, len(matrix))
        ip = self.index_params
        if self._graph is None and len(matrix) >= ip.scan_below:
            self._train(matrix)
            new = np.arange(len(matrix))
        elif self._graph is not None and len(new):
            self._graph.add(np.ascontiguousarray(matrix[new], dtype=np.float32))
        self._fresh.update(int(i) for i in new)
        self._rows = len(matrix)
        if self._graph is not None and len(self._fresh) > ip.resort_fresh_fraction * self._rows:
            self._resort(touched, strength, now)

    def changed(self, rows: np.ndarray | list[int], touched: np.ndarray, strength: np.ndarray, now: float) -> None:
        """These rows' last touch or strength changed (a recall touched them, a verification came)."""
        self._fresh.update(int(i) for i in rows)
        if self._graph is not None and len(self._fresh) > self.index_params.resort_fresh_fraction * self._rows:
            self._resort(touched, strength, now)

    def _train(self, matrix: np.ndarray) -> None:
        import faiss  # only stores past scan_below pay for loading it

        ip = self.index_params
        graph = faiss.IndexHNSWFlat(matrix.shape[1], ip.graph_degree, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = ip.build_breadth
        graph.hnsw.efSearch = ip.search_breadth
        graph.add(np.ascontiguousarray(matrix, dtype=np.float32))
        self._graph = graph

    def _resort(self, touched: np.ndarray, strength: np.ndarray, now: float) -> None:
        prior = _prior(touched[: self._rows], strength[: self._rows], now, self.params)
        self._order = np.argsort(-prior, kind="stable")
        self._sorted_prior = prior[self._order]
        cap = int(self.index_params.give_up_fraction * self._rows) + 1
        self._prior_rows = np.ascontiguousarray(self._matrix[self._order[:cap]])
        self._t0 = now
        self._fresh.clear()

    def _check(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, at_least: int) -> None:
        if matrix.ndim != 2 or len(touched) != len(matrix) or len(strength) != len(matrix):
            raise RecallIndexUsageError("RecallIndex: touched and strength need one entry per matrix row")
        if len(matrix) < at_least:
            raise RecallIndexUsageError(f"RecallIndex: {len(matrix)} rows, fewer than the {at_least} it indexed "
                                        "(rows are appended, never removed: build a new index)")

    # -- recall ------------------------------------------------------------------------------------

    def top_k(self, query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
              now: float, k: int = 10) -> list[tuple[int, float]]:
        """What ``recall.top_k`` returns for these arguments (rows, best first)."""
        self._check(matrix, touched, strength, at_least=self._rows)
        if len(matrix) != self._rows:
            raise RecallIndexUsageError(f"RecallIndex: the matrix has {len(matrix)} rows, the index "
                                        f"{self._rows}: call extend() after adding rows")
        if self._graph is None or k <= 0:
            return top_k(query_vec, matrix, touched, strength, now, k, self.params)
        if now < self._t0:  # the clock went back: the sorted priors are no longer upper bounds
            self._resort(touched, strength, now)
        return self._threshold_top_k(query_vec, matrix, touched, strength, now, k)

    def _threshold_top_k(self, query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray,
                         strength: np.ndarray, now: float, k: int) -> list[tuple[int, float]]:
        ip, n, w_rel = self.index_params, self._rows, self.params.relevance_weight
        query = np.ascontiguousarray(query_vec, dtype=np.float32).reshape(1, -1)
        relevance, found = self._graph.search(query, ip.graph_read)
        found = found[0][found[0] >= 0]
        # Relevance of a row the graph did not return: at most the last it returned (0 if it ran out
        # of rows). The approximate part: a more relevant row the graph walk did not reach.
        last_relevance = max(float(relevance[0][len(found) - 1]), 0.0) if len(found) == ip.graph_read else 0.0
        others = np.union1d(found, np.fromiter(self._fresh, dtype=np.int64, count=len(self._fresh)))
        other_scores = scores(query_vec, matrix[others], touched[others], strength[others], now, self.params)
        read = min(ip.first_read, len(self._prior_rows))
        for _ in range(2):
            # The prior list's first rows, scored from their contiguous copy; rows also found by
            # the graph (or fresh) are scored once, with the others.
            rows = self._order[:read]
            listed = scores(query_vec, self._prior_rows[:read], touched[rows], strength[rows], now, self.params)
            keep = ~np.isin(rows, others, assume_unique=True)
            candidates = np.concatenate([others, rows[keep]])
            s = np.concatenate([other_scores, listed[keep]])
            if len(s) < k:
                break
            order = np.lexsort((candidates, -s))  # best first, ties by lower row: as top_k
            kth = float(s[order[k - 1]])
            # Every row in neither list scores at most w_rel * last_relevance + the first unread prior.
            unread_prior = float(self._sorted_prior[read]) if read < n else 0.0
            if kth > w_rel * last_relevance + unread_prior:
                return [(int(candidates[i]), float(s[i])) for i in order[:k]]
            # Read the prior list down to where no unread row can reach the k-th score: the k-th
            # only rises as candidates join, so one more pass certifies.
            need_below = kth - w_rel * last_relevance
            read = int(np.searchsorted(-self._sorted_prior, -need_below, side="right"))
            if read > len(self._prior_rows):
                break
        return top_k(query_vec, matrix, touched, strength, now, k, self.params)
