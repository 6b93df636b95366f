"""Recall scoring (design paper §4.4; docs/design.md "Numbers from the seeds"), after Park et al.

    score = 0.60 · relevance + 0.25 · recency + 0.15 · strength

* relevance: cosine of the query's embedding with each memory's, clipped at 0 (a hashed
  embedding can give a small negative cosine between unrelated texts; "less than unrelated" is
  not a meaning recall should reward or punish);
* recency: ``0.5^(age / 30 days)`` from the memory's last touch (a touch in the future counts as
  now);
* strength: normalised to [0, 1) as ``s / (s + 1)``. A saturating map rather than ``s / max``:
  the score of one memory does not then depend on which other memories happen to be scored with
  it, a new lesson (s = 1) sits at 0.5, and no single very strong lesson squashes the rest.

Everything is vectorised over an ``(n, 256)`` matrix of unit rows; ``top_k`` uses a partial sort.
Recall is pure: touching what it returned is the caller's write.

The cosine is summed over the query's nonzero dimensions, in order, one float32 product and one
float32 sum each (``relevance``): a row's score then has the same bits whichever rows are scored
beside it, in a row-major matrix or in the index's columns. A BLAS product does not promise that
(measured: ``matrix[rows] @ q`` differed from ``(matrix @ q)[rows]`` in the last bit in 9 of 5,550
rows), and a score that moves by a bit can swap two lessons at the tenth place. A query's
embedding holds a few dozen features, so the sum reads a few dozen columns, not 256.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commons.core.learning import decay_factor


@dataclass(frozen=True)
class RecallParams:
    relevance_weight: float = 0.60
    recency_weight: float = 0.25
    strength_weight: float = 0.15
    recency_half_life_days: float = 30.0

    def __post_init__(self) -> None:
        if self.recency_half_life_days <= 0:
            raise ValueError("RecallParams: recency_half_life_days must be positive")


def normalised_strength(strength: np.ndarray) -> np.ndarray:
    s = np.maximum(np.asarray(strength, dtype=np.float32), 0.0)
    return s / (s + 1.0)


def relevance(query_vec: np.ndarray, matrix: np.ndarray, *, columns: bool = False) -> np.ndarray:
    """``max(q · x, 0)`` of every row, summed over ``q``'s nonzero dimensions in increasing order.

    ``matrix`` is ``(rows, dim)``, or ``(dim, rows)`` with ``columns=True`` (the index's layout:
    each dimension contiguous). The same row gives the same float32 bits in either, whatever rows
    are beside it.
    """
    query = np.asarray(query_vec, dtype=np.float32)
    dims = np.flatnonzero(query)
    if not columns:  # the query's columns, gathered in one pass over the rows (faster than strided passes)
        matrix, dims, query = np.ascontiguousarray(matrix[:, dims].T), np.arange(len(dims)), query[dims]
    rows = matrix.shape[1]
    out, product = np.zeros(rows, dtype=np.float32), np.empty(rows, dtype=np.float32)
    for d in dims.tolist():
        np.multiply(matrix[d], query[d], out=product)
        np.add(out, product, out=out)
    return np.maximum(out, 0.0, out=out)


def scores(query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
           now: float, params: RecallParams = RecallParams()) -> np.ndarray:
    """The recall score of every row of ``matrix`` for ``query_vec``, as float32."""
    if matrix.ndim != 2 or query_vec.shape != (matrix.shape[1],):
        raise ValueError(f"scores(): query of shape {query_vec.shape} does not fit a matrix of "
                         f"shape {matrix.shape} (API misuse)")
    if len(touched) != len(matrix) or len(strength) != len(matrix):
        raise ValueError("scores(): touched and strength need one entry per matrix row (API misuse)")
    recency = decay_factor(touched, now, params.recency_half_life_days).astype(np.float32)
    return (params.relevance_weight * relevance(query_vec, matrix) + params.recency_weight * recency
            + params.strength_weight * normalised_strength(strength)).astype(np.float32)


def top_k(query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
          now: float, k: int = 10, params: RecallParams = RecallParams()) -> list[tuple[int, float]]:
    """The ``k`` best rows as ``(row index, score)``, best first (ties broken by lower index)."""
    if k <= 0 or len(matrix) == 0:
        return []
    s = scores(query_vec, matrix, touched, strength, now, params)
    k = min(k, len(s))
    if k < len(s):
        # Every row tied with the k-th score competes (argpartition alone keeps an arbitrary few of
        # them), so that ties go to the lower index, as documented, and the index agrees.
        kth = s[np.argpartition(-s, k - 1)[k - 1]]
        best = np.flatnonzero(s >= kth)
    else:
        best = np.arange(len(s))
    best = best[np.lexsort((best, -s[best]))][:k]
    return [(int(i), float(s[i])) for i in best]
