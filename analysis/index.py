"""Stage 3, index: the nearest pages of every page with FAISS, never an n x n similarity matrix.

Exact inner-product search (vectors are unit length, so inner product is cosine similarity) up to
EXACT_LIMIT pages; above it an HNSW graph, whose memory grows linearly with the number of pages.
EXACT_LIMIT is set by measurement: see BENCHMARKS.md ("Candidates").
"""

from __future__ import annotations

import faiss
import numpy as np

EXACT_LIMIT = 20_000
HNSW_NEIGHBOURS = 32  # M: graph degree
HNSW_SEARCH_DEPTH = 128  # efSearch: candidates kept while searching


def build_index(vectors: np.ndarray) -> faiss.Index:
    """An inner-product index over unit vectors: flat (exact) for small sites, HNSW for large ones."""
    dim = vectors.shape[1]
    if len(vectors) <= EXACT_LIMIT:
        index = faiss.IndexFlatIP(dim)
    else:
        index = faiss.IndexHNSWFlat(dim, HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 80
        index.hnsw.efSearch = HNSW_SEARCH_DEPTH
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def nearest(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(similarities, indices), each (pages, k'), best first; k' = min(k + 1, pages) to allow for the page itself.

    Missing neighbours (an approximate index may return fewer) have index -1.
    """
    index = build_index(vectors)
    return index.search(np.ascontiguousarray(vectors, dtype=np.float32), min(k + 1, len(vectors)))
