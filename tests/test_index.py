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
    trained = []
    monkeypatch.setattr(index, "centroids", lambda vectors, train=index.centroids: trained.append(train(vectors)) or trained[-1])
    similarities, found = index.nearest(vectors, K)
    assert len(trained) == 1 and len(trained[0]) == round(index.IVF_LISTS_PER_ROOT * PAGES ** 0.5)  # the IVF path

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
    centres = index.centroids(vectors)  # the same lists (seeded k-means)
    _, home = index.best_of(vectors, centres, 1)
    sizes = np.bincount(home[:, 0], minlength=len(centres))
    short = np.flatnonzero(sizes[home[:, 0]] < K + 1)
    assert len(short) > 0
    exact = faiss.IndexFlatIP(384)
    exact.add(vectors)
    _, truth = exact.search(vectors[short], K + 1)
    assert all(set(a) == set(b) for a, b in zip(found[short].tolist(), truth.tolist()))  # searched again over all lists


def test_each_page_gets_the_best_of_the_lists_it_probes(vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "EXACT_LIMIT", 100)
    similarities, found = index.nearest(vectors, K)
    _, lists = index.best_of(vectors, index.centroids(vectors), index.IVF_PROBES)
    home = lists[:, 0]
    for page in range(0, PAGES, 37):  # brute force over the pages filed in the page's lists
        members = np.flatnonzero(np.isin(home, lists[page]))
        scores = vectors[members] @ vectors[page]
        best = members[np.lexsort((members, -scores))][:K + 1]  # highest first, the lower page among equals
        assert found[page].tolist() == best.tolist()
        assert np.allclose(similarities[page], np.sort(scores)[::-1][:K + 1], atol=1e-6)


def test_best_of_is_exact_search() -> None:
    vectors = clustered(500, 5, seed=2)
    scores, rows = index.best_of(vectors, vectors[:300], 8)
    truth_scores, truth = index.build_index(vectors[:300]).search(vectors, 8)
    assert np.allclose(scores, truth_scores, atol=1e-5) and (rows[:, 0] == truth[:, 0]).mean() > 0.99
    assert (rows[:300, 0] == np.arange(300)).all() and (np.diff(scores, axis=1) <= 0).all()
    few_scores, few_rows = index.best_of(vectors[:3], vectors[:2], 4)  # fewer rows than wanted: -1, -inf
    assert (few_rows[:, 2:] == -1).all() and np.isneginf(few_scores[:, 2:]).all() and (few_rows[:, :2] >= 0).all()


def test_keep_best_merges_in_order_the_lower_row_first_among_equals() -> None:
    best, rows = np.full((2, 3), -np.inf, dtype=np.float32), np.full((2, 3), -1, dtype=np.int64)
    index.keep_best(np.array([[0.5, 0.9], [0.1, 0.2]], dtype=np.float32), np.array([1, 0]), np.array([7, 3]), best, rows)
    index.keep_best(np.array([[0.9, 0.5, 0.95]], dtype=np.float32), np.array([1]), np.array([2, 1, 9]), best, rows)
    assert rows.tolist() == [[3, 7, -1], [9, 2, 3]]  # query 1: 0.95, then 0.9 from rows 2 and 3, row 2 first
    assert best[1].tolist() == pytest.approx([0.95, 0.9, 0.9])


def test_fewer_pages_than_neighbours(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(5, 2, seed=1)
    similarities, found = index.nearest(vectors, K)
    assert found.shape == (5, 5) and (found >= 0).all()


def test_neighbours_within_languages_are_the_exact_ones_among_the_pages_a_page_may_pair_with() -> None:
    """nearest_within: a page gets its exact nearest among the pages of the groups its own group goes with (here group 0
    with every group, 1 with 2 and 3, 2 and 3 with 1 alone, 4 with itself and 0: "", "en", "en-gb", "en-us", "de");
    where every group goes with every other, nearest() itself."""
    vectors = clustered(400, 8, seed=3)
    groups = np.random.default_rng(3).choice([0, 1, 2, 3, 4], size=400, p=[0.1, 0.3, 0.3, 0.2, 0.1])
    groups[-1] = 5  # a group of one page that goes with group 0 alone: itself, then pages of none
    compatible = np.eye(6, dtype=bool)
    compatible[0, :] = compatible[:, 0] = True
    compatible[1, [2, 3]] = compatible[[2, 3], 1] = True
    similarities, found = index.nearest_within(vectors, 10, groups, compatible)
    assert found.shape == (400, 11)
    for page in range(400):
        allowed = np.flatnonzero(compatible[groups[page], groups])
        truth = np.sort(vectors[allowed] @ vectors[page])[::-1][:11]  # the best scores (pages of equal ones either way)
        kept = found[page][found[page] >= 0]
        assert set(kept.tolist()) <= set(allowed.tolist()) and np.allclose(vectors[kept] @ vectors[page], truth, atol=1e-5)
    assert np.allclose(similarities[found >= 0], np.einsum("ij,ij->i", vectors[np.nonzero(found >= 0)[0]], vectors[found[found >= 0]]), atol=1e-5)
    every = np.ones((6, 6), dtype=bool)
    assert all((a == b).all() for a, b in zip(index.nearest_within(vectors, 10, groups, every), index.nearest(vectors, 10)))
