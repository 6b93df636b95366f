"""Text as vectors: hashed word-and-bigram embeddings, no model (``hashed``: ``embed``,
``embed_many``, ``tokenize``, ``DIM``). Used by sleep to cluster surprises and by recall to rank.
"""

from commons.core.embedding.hashed import DIM, embed, embed_many, tokenize

__all__ = [
    "DIM",
    "embed",
    "embed_many",
    "tokenize",
]
