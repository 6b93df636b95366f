"""Recall: ranking lessons for a query.

- ``scoring``: the score (relevance, recency, strength) and the exact top k over every lesson;
- ``index``: :class:`RecallIndex`, the same top k from the query's columns alone, past 20,000.
"""

from commons.core.recall.index import IndexParams, RecallIndex, SyncResult
from commons.core.recall.scoring import RecallParams, normalised_strength, relevance, top_k

__all__ = [
    "IndexParams",
    "RecallIndex",
    "RecallParams",
    "SyncResult",
    "normalised_strength",
    "relevance",
    "top_k",
]
