"""Recall: ranking lessons for a query.

- ``scoring``: the score (relevance, recency, strength) and the exact top k over every lesson;
- ``index``: :class:`RecallIndex`, the same top k without scoring every lesson, past 20,000.
"""

from commons.core.recall.index import IndexParams, RecallIndex, RecallIndexFileError, SyncResult
from commons.core.recall.scoring import RecallParams, normalised_strength, top_k

__all__ = [
    "IndexParams",
    "RecallIndex",
    "RecallIndexFileError",
    "RecallParams",
    "SyncResult",
    "normalised_strength",
    "top_k",
]
