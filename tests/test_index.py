"""Nearest pages by meaning (analysis.index.nearest): the approximate index above EXACT_LIMIT agrees with exact search.

The vectors are clustered like bench/neighbours.py's (normalised cluster centre + noise, 384-d, clusters of
log-normal sizes); EXACT_LIMIT is lowered with monkeypatch so that a few thousand pages take the IVF path.
"""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from analysis import index

PAGES = 3000
K = 30


def clustered(pages: int, clusters: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    sizes = rng.lognormal(0.0, 0.7, clusters)
    cluster_of = rng.choice(clusters, size=pages, p=sizes / sizes.sum())
    centres = unit(0.35 * unit(rng.standard_normal((1, 384))) + unit(rng.standard_normal((clusters, 384))))
    noise = rng.uniform(0.75, 1.15, (pages, 1)) * unit(rng.standard_normal((pages, 384)))
    return unit(centres[cluster_of] + noise).astype(np.float32)


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return clustered(PAGES, 30, seed=7)


def test_approximate_neighbours_agree_with_exact_search(vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    exact_similarities, exact = index.nearest(vectors, K)  # 3,000 <= EXACT_LIMIT: flat
    assert exact.shape == (PAGES, K + 1)
    monkeypatch.setattr(index, "EXACT_LIMIT", 100)
    assert isinstance(index.build_index(vectors), faiss.IndexIVFFlat)
    similarities, found = index.nearest(vectors, K)

    assert found.shape == similarities.shape == (PAGES, K + 1)
    assert found.dtype == np.int64 and similarities.dtype == np.float32
    assert (found >= 0).all() and (found < PAGES).all()  # no missing neighbour
    assert all(len(set(row)) == K + 1 for row in found.tolist())  # no page twice in a row
    assert (np.diff(similarities, axis=1) <= 1e-6).all()  # best first
    assert (found[:, 0] == np.arange(PAGES)).mean() > 0.99  # a page is its own nearest
    recall = np.mean([len(set(a[:10]) & set(b[:10])) / 10 for a, b in zip(found.tolist(), exact.tolist())])
    assert recall >= 0.95
    # similarities are the true inner products of the pairs found
    assert np.allclose(similarities, np.einsum("id,ijd->ij", vectors, vectors[found]), atol=1e-4)
    assert np.allclose(similarities[:, 0], exact_similarities[:, 0], atol=1e-4)


def test_approximate_neighbours_are_deterministic(vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "EXACT_LIMIT", 100)
    first, second = index.nearest(vectors, K), index.nearest(vectors.copy(), K)
    assert np.array_equal(first[1], second[1]) and np.array_equal(first[0], second[0])


def test_pages_whose_lists_are_too_small_are_searched_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # many tiny lists and one probe: some pages' lists hold fewer than k + 1 pages
    vectors = clustered(400, 40, seed=3)
    monkeypatch.setattr(index, "EXACT_LIMIT", 10)
    monkeypatch.setattr(index, "IVF_LISTS_PER_ROOT", 6)
    monkeypatch.setattr(index, "IVF_PROBES", 1)
    similarities, found = index.nearest(vectors, K)
    assert found.shape == (400, K + 1) and (found >= 0).all()
    ivf = index.build_index(vectors)  # the same lists (seeded k-means)
    sizes = np.array([ivf.invlists.list_size(number) for number in range(ivf.nlist)])
    _, home = ivf.quantizer.search(vectors, 1)
    short = np.flatnonzero(sizes[home[:, 0]] < K + 1)
    assert len(short) > 0
    exact = faiss.IndexFlatIP(384)
    exact.add(vectors)
    _, truth = exact.search(vectors[short], K + 1)
    assert all(set(a) == set(b) for a, b in zip(found[short].tolist(), truth.tolist()))  # searched again over all lists


def test_fewer_pages_than_neighbours(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(5, 2, seed=1)
    similarities, found = index.nearest(vectors, K)
    assert found.shape == (5, 5) and (found >= 0).all()
