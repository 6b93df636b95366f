"""Recall through an index: the exact top k of ``recall.top_k`` without scoring every lesson.

A recall score is ``w_rel · relevance + prior``, where the *prior* (``w_rec · recency +
w_str · strength``) does not depend on the query. So the best rows come from two lists: the rows
most relevant to the query, found by an inverted-file index over the embeddings (faiss
``IndexIVFFlat``, inner product on unit rows: the cosine), and the rows whose prior alone is
highest, kept sorted. Both lists are read a prefix at a time and their union scored exactly
(``recall.scores``); a row outside both prefixes scores at most ``w_rel · r_m + p_m`` (the last
relevance and the last prior read), so once the k-th exact score beats that bound no row left out
can enter the top k (Fagin's threshold algorithm). If the bound is not met before a tenth of the
rows are candidates, the index gives up and scans: the answer is always the scan's, bar the rows
the inverted file does not probe (approximate search: ``bench_recall_index.py`` measures how often
the top k differs from the scan's).

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
    cells_per_sqrt_row: float = 4.0  # inverted-file cells: 4 · sqrt(rows), faiss' usual range
    probe_fraction: float = 1 / 16  # cells probed per query
    min_probes: int = 8
    train_rows_per_cell: int = 50  # k-means sample: 50 rows per cell (faiss warns below 39)
    first_read: int = 100  # rows read from each list before the first bound check
    give_up_fraction: float = 0.1  # candidates beyond this share of the rows: scan instead
    resort_fresh_fraction: float = 0.01  # fresh rows beyond this share: sort the prior list again
    seed: int = 1

    def __post_init__(self) -> None:
        if self.scan_below < 1 or self.first_read < 1 or not 0 < self.probe_fraction <= 1:
            raise ValueError("IndexParams: scan_below, first_read and probe_fraction must be positive")


def _prior(touched: np.ndarray, strength: np.ndarray, now: float, params: RecallParams) -> np.ndarray:
    """What a row scores with no relevance at all, exactly as ``recall.scores`` computes it."""
    age_days = np.maximum(now - np.asarray(touched, dtype=np.float64), 0.0) / DAY
    recency = np.exp2(-age_days / params.recency_half_life_days).astype(np.float32)
    return (params.recency_weight * recency + params.strength_weight * normalised_strength(strength)).astype(np.float32)


class RecallIndex:
    """The exact-by-construction top k of a lesson matrix, through an inverted file when large."""

    def __init__(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, now: float,
                 params: RecallParams = RecallParams(), index_params: IndexParams = IndexParams()) -> None:
        self.params, self.index_params = params, index_params
        self._rows = 0
        self._ivf: Any = None  # faiss index, or None while the store is small enough to scan
        self._fresh: set[int] = set()
        self._order = np.zeros(0, dtype=np.int64)  # rows by prior at _t0, highest first
        self._sorted_prior = np.zeros(0, dtype=np.float32)
        self._t0 = now
        self.extend(matrix, touched, strength, now)

    def __len__(self) -> int:
        return self._rows

    @property
    def scanning(self) -> bool:
        return self._ivf is None

    # -- keeping it up to date ---------------------------------------------------------------------

    def extend(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, now: float) -> None:
        """Rows appended at the end of ``matrix`` since the last call (the whole matrix is passed)."""
        self._check(matrix, touched, strength, at_least=self._rows)
        new = np.arange(self._rows, len(matrix))
        ip = self.index_params
        if self._ivf is None and len(matrix) >= ip.scan_below:
            self._train(matrix)
            new = np.arange(len(matrix))
        elif self._ivf is not None and len(new):
            self._ivf.add(np.ascontiguousarray(matrix[new], dtype=np.float32))
        self._fresh.update(int(i) for i in new)
        self._rows = len(matrix)
        if self._ivf is not None and len(self._fresh) > ip.resort_fresh_fraction * self._rows:
            self._resort(touched, strength, now)

    def changed(self, rows: np.ndarray | list[int], touched: np.ndarray, strength: np.ndarray, now: float) -> None:
        """These rows' last touch or strength changed (a recall touched them, a verification came)."""
        self._fresh.update(int(i) for i in rows)
        if self._ivf is not None and len(self._fresh) > self.index_params.resort_fresh_fraction * self._rows:
            self._resort(touched, strength, now)

    def _train(self, matrix: np.ndarray) -> None:
        import faiss  # only stores past scan_below pay for loading it

        ip = self.index_params
        n, dim = matrix.shape
        cells = max(1, int(ip.cells_per_sqrt_row * math.sqrt(n)))
        sample_size = min(n, cells * ip.train_rows_per_cell)
        sample = np.random.default_rng(ip.seed).choice(n, size=sample_size, replace=False)
        quantizer = faiss.IndexFlatIP(dim)
        ivf = faiss.IndexIVFFlat(quantizer, dim, cells, faiss.METRIC_INNER_PRODUCT)
        ivf.cp.seed = ip.seed
        ivf.train(np.ascontiguousarray(matrix[np.sort(sample)], dtype=np.float32))
        ivf.add(np.ascontiguousarray(matrix, dtype=np.float32))
        ivf.nprobe = min(cells, max(ip.min_probes, int(cells * ip.probe_fraction)))
        self._ivf = ivf

    def _resort(self, touched: np.ndarray, strength: np.ndarray, now: float) -> None:
        prior = _prior(touched[: self._rows], strength[: self._rows], now, self.params)
        self._order = np.argsort(-prior, kind="stable")
        self._sorted_prior = prior[self._order]
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
        if self._ivf is None or k <= 0:
            return top_k(query_vec, matrix, touched, strength, now, k, self.params)
        if now < self._t0:  # the clock went back: the sorted priors are no longer upper bounds
            self._resort(touched, strength, now)
        return self._threshold_top_k(query_vec, matrix, touched, strength, now, k)

    def _threshold_top_k(self, query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray,
                         strength: np.ndarray, now: float, k: int) -> list[tuple[int, float]]:
        ip, n = self.index_params, self._rows
        query = np.ascontiguousarray(query_vec, dtype=np.float32).reshape(1, -1)
        fresh = np.fromiter(self._fresh, dtype=np.int64, count=len(self._fresh))
        read_relevant = read_prior = ip.first_read
        while True:
            relevance, rows = self._ivf.search(query, read_relevant)
            rows = rows[0][rows[0] >= 0]
            candidates = np.unique(np.concatenate([rows, self._order[:read_prior], fresh]))
            if len(candidates) > ip.give_up_fraction * n:
                return top_k(query_vec, matrix, touched, strength, now, k, self.params)
            s = scores(query_vec, matrix[candidates], touched[candidates], strength[candidates], now, self.params)
            # A row in neither prefix: relevance at most the last one read (0 once the probed cells
            # ran out of rows), prior at most the last one read.
            last_relevance = float(relevance[0][len(rows) - 1]) if len(rows) == read_relevant else 0.0
            last_prior = float(self._sorted_prior[read_prior - 1]) if read_prior <= len(self._order) else 0.0
            bound = self.params.relevance_weight * max(last_relevance, 0.0) + last_prior
            if len(s) >= k:
                order = np.lexsort((candidates, -s))  # best first, ties by lower row: as top_k
                if s[order[k - 1]] > bound:
                    return [(int(candidates[i]), float(s[i])) for i in order[:k]]
            if self.params.relevance_weight * max(last_relevance, 0.0) >= last_prior and len(rows) == read_relevant:
                read_relevant *= 4
            else:
                read_prior *= 4
