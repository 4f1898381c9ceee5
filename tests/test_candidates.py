"""Stage 4, candidates: analysis/index.py (the keyword fit: its similarities, neighbours, mentions and
collocations), analysis/candidates.py, locality.py and lookup.py, on small crawl databases written by
hand (handmade.py), with exact expectations.

Weights and constants of analysis/score.py and analysis/anchors.py are still being tuned, so these tests check
mechanisms (what is excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from analysis import index, stop_words
from analysis.candidates import PEERS, Candidates, cosines, find_candidates, one_copy_each, same_texts, with_peer_links
from analysis.index import Keywords, nearest
from analysis.load import LISTED_ANCHOR_CHARS, Corpus, among, distinct, pair_codes
from analysis.locality import rows_of, source_starts, steps, visit_order
from analysis.lookup import HashTable
from analysis.scope import Scope
from analysis.words import TokenFile, Tokens, stem, terms
from conftest import ROOT
from handmade import SLUGS, Site, blog_site, plain_corpus, prose, url
from linkspider.db import open_database


# Unit vectors with known cosines: (0,1) 0.8, (0,2) 0.96, (1,2) 0.768, (3,4) 0.6, every other pair 0.
VECTORS = np.array([
    [1.0, 0.0, 0.0, 0.0, 0.0],
    [0.8, 0.6, 0.0, 0.0, 0.0],
    [0.96, 0.0, 0.28, 0.0, 0.0],
    [0.0, 0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 0.6, 0.8],
], dtype=np.float32)


Neighbours = tuple[np.ndarray, np.ndarray]


def candidates_of(five: tuple[Corpus, Keywords], threshold: float, max_similarity: float, *,
                  excluded: set[tuple[int, int]] = frozenset(), mentions: set[tuple[int, int]] = frozenset(),
                  by_meaning: Neighbours | None = None, by_words: Neighbours | None = None, scope: Scope | None = None
                  ) -> tuple[Candidates, list[tuple[int, int, float]]]:
    """find_candidates on the five pages, every page a neighbour of every other by meaning and none by words (a source's
    nearest by words are candidates below the threshold) unless neighbours are given."""
    corpus, keywords = five
    arguments = {
        "corpus": corpus, "vectors": VECTORS, "keywords": keywords, "threshold": threshold, "max_similarity": max_similarity,
        "excluded": excluded, "by_meaning": nearest(VECTORS, 10) if by_meaning is None else by_meaning,
        "by_words": (np.zeros((5, 0), dtype=np.float32), np.zeros((5, 0), dtype=np.int64)) if by_words is None else by_words,
    }
    if scope is not None:
        arguments["allowed"] = scope.of(corpus.urls)
    if "mentions" in inspect.signature(find_candidates).parameters:  # pairs where the source names the target
        arguments["mentions"] = pair_codes(set(mentions), len(corpus))
    else:
        assert not mentions
    return find_candidates(**arguments)


def found(candidates: Candidates) -> set[tuple[int, int, bool]]:
    return {(c.source, c.target, c.template_linked) for c in candidates}


def test_candidates_are_the_unlinked_pairs_in_the_similarity_band(five: tuple[Corpus, Keywords]) -> None:
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, excluded={(2, 1)})
    # (0,1) is linked from content, (2,1) excluded (rejected), (0,2) and (2,0) near-duplicates, the rest under 0.5
    assert found(candidates) == {(1, 0, False), (1, 2, False), (3, 4, True), (4, 3, False)}
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]
    assert cannibalised[0][2] == pytest.approx(0.96, abs=1e-5)
    expected = {(1, 0): 0.8, (1, 2): 0.768, (3, 4): 0.6, (4, 3): 0.6}
    keywords = five[1]
    for candidate in candidates:
        assert candidate.similarity == pytest.approx(expected[candidate.source, candidate.target], abs=1e-5)
        lexical = keywords.similarity(np.array([candidate.source]), np.array([candidate.target]))[0]
        assert candidate.lexical == pytest.approx(lexical)


def test_threshold_and_exclusions_drop_candidates(five: tuple[Corpus, Keywords]) -> None:
    assert found(candidates_of(five, 0.7, 0.9)[0]) == {(1, 0, False), (1, 2, False), (2, 1, False)}
    assert found(candidates_of(five, 0.79, 0.9)[0]) == {(1, 0, False)}
    assert len(candidates_of(five, 0.5, 0.9, excluded={(1, 0), (1, 2), (2, 1), (3, 4), (4, 3)})[0]) == 0
    # a content-linked pair is never a candidate, whatever the band
    assert all((c.source, c.target) != (0, 1) for c in candidates_of(five, 0.0, 1.0)[0])


def test_an_excluded_page_is_neither_source_nor_target_and_only_chosen_targets_are_targets(
        five: tuple[Corpus, Keywords]) -> None:
    everything = found(candidates_of(five, 0.0, 1.0)[0])
    assert {0, 1, 2, 3, 4} <= {source for source, _, _ in everything} | {target for _, target, _ in everything}
    excluded = found(candidates_of(five, 0.0, 1.0, scope=Scope(exclude=("/p1/", "*/p3/")))[0])
    assert excluded == {pair for pair in everything if not {1, 3} & set(pair[:2])}  # a path or a whole URL
    chosen = found(candidates_of(five, 0.0, 1.0, scope=Scope(exclude=("/p4/",), targets=("/p[02]/",)))[0])
    assert chosen == {pair for pair in everything if pair[0] != 4 and pair[1] in (0, 2)}
    # the cannibalisation report is the site's, whatever the scope
    assert candidates_of(five, 0.5, 0.9, scope=Scope(targets=("/p1/",)))[1] == candidates_of(five, 0.5, 0.9)[1]


def test_pairs_above_max_similarity_are_cannibalisation_once(five: tuple[Corpus, Keywords]) -> None:
    candidates, cannibalised = candidates_of(five, 0.5, 0.7)
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 1), (0, 2), (1, 2)]  # a < b, each pair once
    assert found(candidates) == {(3, 4, True), (4, 3, False)}


def test_two_pages_with_the_same_main_text_are_cannibalisation_whatever_their_similarity(site: Site) -> None:
    """A page copied under another URL and title (a print version, a type re-exported under two paths) is a duplicate
    though its title keeps the embeddings apart (0.6 here, under the upper bound): reported, not suggested. A text of
    the same length that differs by a character is no copy."""
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming"]):
        site.post(f"/p{i}/", slug)
    site.page("/p4/", "Steaming milk, printable", prose("milk-steaming").text)
    corpus = site.corpus()
    assert corpus.texts[3] == corpus.texts[4]
    keywords = Keywords(corpus.texts)
    candidates, cannibalised = candidates_of((corpus, keywords), 0.5, 0.9)
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2), (3, 4)]
    assert cannibalised[1][2] == pytest.approx(0.6, abs=1e-5)
    assert not {(3, 4), (4, 3)} & {(c.source, c.target) for c in candidates}
    copy = corpus.texts[4]
    altered = dataclasses.replace(corpus, texts=[*list(corpus.texts)[:4], copy[:-1] + ("?" if copy[-1] != "?" else "!")])
    pairs = np.array([3 * len(corpus) + 4, 4 * len(corpus) + 3, 0 * len(corpus) + 1])
    assert same_texts(corpus, pairs).tolist() == [True, True, False]
    assert same_texts(altered, pairs).tolist() == [False, False, False]


def test_a_source_is_offered_one_copy_of_a_text_and_none_of_a_text_it_links() -> None:
    """Pages 1-4 are one type under four paths. Source 0 (in ffi/) gets the copy in its own section, though another
    is linked more; source 5 (at the top) the copy most pages link; source 6, which links page 4 already, none; page 7's
    text is its own, so its pair stays. Page 4, linked most, is not offered to 5 (dropped before): it is never kept."""
    paths = ["ffi/type.c_long.html", "ffi/type.c_int.html", "os/raw/type.c_int.html", "os/type.c_int.html",
             "x/type.c_int.html", "index.html", "guide.html", "ffi/index.html"]
    copy = "The type of a C int. " * 10
    corpus = plain_corpus(["c long", copy, copy, copy, copy, "top", "guide", "ffi"], [""] * 8,
                          urls=[f"http://s/{path}" for path in paths], inbound=[0, 1, 3, 2, 5, 0, 0, 0],
                          content_codes=pair_codes({(6, 4)}, 8))
    offered = {(0, 1), (0, 2), (0, 3), (5, 1), (5, 2), (5, 3), (6, 1), (6, 2), (0, 7)}
    pairs = np.array(sorted(pair_codes(offered | {(5, 4)}, 8).tolist()))
    keep = ~among(pairs, pair_codes({(5, 4)}, 8))  # a pair dropped already is never the copy kept
    one_copy_each(corpus, pairs, keep, corpus.texts.copy_sets())
    assert {tuple(divmod(int(code), 8)) for code in pairs[keep]} == {(0, 1), (5, 2), (0, 7)}


def test_candidates_come_only_from_the_neighbour_lists(five: tuple[Corpus, Keywords]) -> None:
    scores = np.zeros((5, 2), dtype=np.float32)
    by_meaning = (scores, np.array([[0, -1], [1, 2], [2, -1], [3, -1], [4, -1]]))  # self and -1 (missing) entries
    by_words = (scores, np.array([[0, -1], [1, -1], [2, -1], [3, -1], [4, 3]]))
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, by_meaning=by_meaning, by_words=by_words)
    assert found(candidates) == {(1, 2, False), (4, 3, False)} and cannibalised == []
    only_self = (scores, np.array([[i, -1] for i in range(5)]))
    candidates, cannibalised = candidates_of(five, 0.0, 1.0, by_meaning=only_self, by_words=only_self)
    assert len(candidates) == 0 and cannibalised == []


def test_neighbour_rows_of_some_pages_give_those_pages_pairs(five: tuple[Corpus, Keywords]) -> None:
    scores = np.zeros((2, 2), dtype=np.float32)
    first_two = (scores, np.array([[2, 1], [0, 2]]))  # rows for pages 0 and 1 only
    none = (np.zeros((0, 0), dtype=np.float32), np.zeros((0, 0), dtype=np.int64))
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, by_meaning=first_two, by_words=none)
    assert found(candidates) == {(1, 0, False), (1, 2, False)}  # (0, 1) is content-linked
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]


def test_a_source_s_nearest_pages_by_words_are_candidates_below_the_threshold(five: tuple[Corpus, Keywords],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The model reads a page's first 256 tokens, the keywords all of it: a target among the source's CLOSEST_BY_WORDS
    nearest pages by words (itself and missing entries aside) is a candidate whatever its embedding similarity, one
    further down the list is not, and a linked pair or a near-duplicate is not either."""
    monkeypatch.setattr("analysis.candidates.CLOSEST_BY_WORDS", 2)
    only_self = (np.zeros((5, 1), dtype=np.float32), np.arange(5).reshape(5, 1))
    by_words = (np.zeros((5, 5), dtype=np.float32), np.array([
        [0, 1, 2, 3, 4],  # (0,1) content-linked, (0,2) a near-duplicate (0.96), (0,3) past the first two
        [1, -1, -1, -1, -1],
        [2, -1, -1, -1, -1],
        [3, 0, 1, 2, 4],  # (3,0) and (3,1): similarity 0; (3,2) past the first two; (3,4) 0.6, template-linked
        [2, 4, 3, 0, 1],  # itself in second place: (4,2) and (4,3)
    ]))
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, by_meaning=only_self, by_words=by_words)
    assert found(candidates) == {(3, 0, False), (3, 1, False), (3, 4, True), (4, 2, False), (4, 3, False)}
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]


def test_a_mention_is_a_candidate_below_the_threshold_but_never_a_linked_pair(five: tuple[Corpus, Keywords]) -> None:
    if "mentions" not in inspect.signature(find_candidates).parameters:
        pytest.skip("find_candidates takes no mentions")
    scores = np.zeros((5, 2), dtype=np.float32)
    only_self = (scores, np.array([[i, -1] for i in range(5)]))
    # (3,0): similarity 0, mentioned; (0,1): content-linked; (0,2): near-duplicate; (2,1): rejected
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, mentions={(3, 0), (0, 1), (0, 2), (2, 1)},
                                             excluded={(2, 1)}, by_meaning=only_self, by_words=only_self)
    assert [(c.source, c.target, c.mentioned) for c in candidates] == [(3, 0, True)]
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]
    assert all(not c.mentioned for c in candidates_of(five, 0.5, 0.9)[0])


def test_below_the_threshold_a_one_word_title_is_named_only_as_it_is_written(site: Site) -> None:
    """"Longer contact extracts more" names no "Contact Us", "the file size" no GIMP's File menu, "the framework folder"
    no CMake's FOLDER property: below the threshold, a target whose title is one word is a candidate of a source that
    mentions it only where the source writes that word as the title does, and not only first in a sentence. Titles of
    more words, and pairs over the threshold, are as before."""
    for path, title in [("/contact/", "Contact Us"), ("/file/", "File"), ("/folder/", "FOLDER"), ("/burr/", "Burr Grinders")]:
        site.page(path, title, f"What the {title} page is about, said in a few words.", words=100)
    site.page("/brewing/", "Brewing", "Longer contact extracts more. Keep the file size small in the framework folder. "
              "Burr grinders grind evenly.", words=100)
    site.page("/guide/", "Guide", "Contact us for help. Or write\nContact the team. Open the File menu and set the FOLDER property. "
              "burr grinders grind evenly.", words=100)
    corpus = site.corpus()
    page = {path.strip("/"): corpus.index[url(path)] for path in ("/contact/", "/file/", "/folder/", "/burr/", "/brewing/", "/guide/")}
    asked = {(page[source], page[target]) for source in ("brewing", "guide") for target in ("contact", "file", "folder", "burr")}
    vectors = np.eye(len(corpus), dtype=np.float32)  # every pair at similarity 0
    none = (np.zeros((len(corpus), 0), dtype=np.float32), np.zeros((len(corpus), 0), dtype=np.int64))
    found = {}
    for threshold in (0.5, -1.0):
        candidates, _ = find_candidates(corpus, vectors, nearest(vectors, 10), Keywords(corpus.texts), none,
                                        pair_codes(asked, len(corpus)), threshold, 0.9)
        found[threshold] = {(c.source, c.target) for c in candidates} & asked
    assert found[0.5] == {(page["brewing"], page["burr"]), (page["guide"], page["file"]), (page["guide"], page["folder"]),
                          (page["guide"], page["burr"])}
    assert found[-1.0] == asked


def test_a_page_the_source_s_peers_link_is_a_candidate_with_their_count(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page that PEERS_LINKING of a source's peers (its nearest pages by meaning) link from their main content is a
    candidate of the source's though it is not among its neighbours, if it is above the threshold; every candidate
    carries how many of its source's peers link its target."""
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming", "roast-levels"]):
        site.post(f"/p{i}/", slug)
    french_press = prose("french-press-guide")
    site.link("/p0/", "/p1/", french_press.links[1][1])
    site.link("/p0/", "/p2/", french_press.links[0][1])
    corpus = site.corpus()
    by_meaning = (np.zeros((5, 3), dtype=np.float32), np.array([
        [0, 1, 2],
        [1, 0, -1],  # its peer 0 links 2: (1,2), 0.768, though 2 is no neighbour of 1's
        [2, 0, 1],  # its peer 0 links 1: (2,1) carries 1
        [3, 0, -1],  # its peer 0 links 1 and 2, at similarity 0: under the threshold
        [4, -1, -1],
    ]))
    none = (np.zeros((5, 0), dtype=np.float32), np.zeros((5, 0), dtype=np.int64))
    peers_found = {}
    for least in (1, 2):
        monkeypatch.setattr("analysis.candidates.PEERS_LINKING", least)
        candidates, _ = candidates_of((corpus, Keywords(corpus.texts)), 0.5, 0.9, by_meaning=by_meaning, by_words=none)
        peers_found[least] = [(c.source, c.target, c.peer_links) for c in candidates]
    assert peers_found == {1: [(1, 0, 0), (1, 2, 1), (2, 1, 1)], 2: [(1, 0, 0), (2, 1, 1)]}


def test_only_a_source_s_first_peers_count_and_the_pairs_they_add_come_in_order() -> None:
    """Of a source's neighbours by meaning, the first PEERS that are not itself nor missing are its peers: the links of
    those further down do not count. The pairs that enough peers link join the given ones in code order."""
    pages, target = PEERS + 6, PEERS + 5
    links = np.array([page * pages + target for page in range(1, PEERS + 5)], dtype=np.int64)  # all but 0 link target
    row = [0, -1, *range(1, PEERS + 5)]
    neighbours = np.array([row] + [[page] + [-1] * (len(row) - 1) for page in range(1, pages)])
    given = np.array([1, target, 3 * pages + 2], dtype=np.int64)  # (0, 1), (0, target), (3, 2): none added, all kept
    added = given[[0, 2]]  # (0, target) comes in if PEERS_LINKING peers link it

    def merged(pairs: np.ndarray, least: int, rows: np.ndarray = neighbours) -> list[list[int]]:
        return [column.tolist() for column in with_peer_links(pairs, links, rows, pages, least)]

    assert merged(given, PEERS + 1) == merged(added, PEERS) == [given.tolist(), [0, PEERS, 0]]
    assert merged(added, PEERS + 1) == [added.tolist(), [0, 0]]
    assert merged(given[:0], 1, neighbours[:1]) == [[target], [PEERS]]  # rows for some pages only


def test_mentions_are_the_pairs_whose_source_holds_most_of_a_names_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keywords.mentions looks only at the pages holding one of a name's rarer words (a prefix filter), a block of
    sources at a time: the same pairs as the definition worked out for every (name, page); with per_source, each
    source's largest shares (then its heaviest names)."""
    rng = np.random.default_rng(11)
    words = [f"w{i}x" for i in range(80)]
    frequency = 1 / np.arange(1, len(words) + 1)  # a few common words, many rare ones, as in prose
    texts = [" ".join(rng.choice(words, size=int(rng.integers(5, 40)), p=frequency / frequency.sum())) for _ in range(300)]
    names = [" ".join(rng.choice(words, size=int(rng.integers(1, 6)), replace=False)) for _ in range(400)]
    owners = rng.integers(0, len(texts), len(names))
    keywords = Keywords(texts)
    idf, common = keywords.idf.astype(np.float64), keywords.idf_of_share(0.3)
    named = np.zeros((len(names), len(idf)))  # each name's weight by word, dense: the definition, worked out for every pair
    for row, name in enumerate(names):
        for term in {keywords.vocabulary.ids.get(term) for term in terms(name)} - {None}:  # each word's term, once
            named[row, term] = idf[term] if idf[term] >= common else 0.0
    weight = named.sum(axis=1)
    shares = (named / np.maximum(weight, 1e-9)[:, None]) @ (keywords.matrix.toarray() > 0).T  # name x source
    best: dict[int, tuple[float, float]] = {}  # pair code -> (share, name weight), the best of the target's names
    for row, source in zip(*np.nonzero((shares >= 0.6 - 1e-6) & (owners[:, None] != np.arange(len(texts))))):
        code = int(source) * len(texts) + int(owners[row])
        best[code] = max(best.get(code, (0, 0)), (round(float(shares[row, source]), 4), float(weight[row])))
    monkeypatch.setattr(Keywords, "MENTION_PAGES", 64)  # five blocks of sources
    assert 100 < len(best) and keywords.mentions(names, 0.6, 0.3, owners).tolist() == sorted(best)
    kept = [code for code in sorted(best, key=lambda code: (code // len(texts), -best[code][0], -best[code][1], code))]
    capped = [code for place, code in enumerate(kept) if sum(other // len(texts) == code // len(texts) for other in kept[:place]) < 2]
    assert keywords.mentions(names, 0.6, 0.3, owners, per_source=2).tolist() == sorted(capped) != sorted(best)
    pages_a_word = np.bincount(keywords.matrix.indices)  # a word searched by only on so many pages: fewer pairs, never others
    assert keywords.mentions(names, 0.6, 0.3, owners, word_pages=int(pages_a_word.max())).tolist() == sorted(best)
    assert len(keywords.mentions(names, 0.6, 0.3, owners, word_pages=0)) == 0
    middle = keywords.mentions(names, 0.6, 0.3, owners, word_pages=int(np.median(pages_a_word[pages_a_word > 0])))
    assert 0 < len(middle) < len(best) and set(middle.tolist()) <= set(best)


def test_a_listing_page_is_a_target_but_never_a_source(site: Site) -> None:
    """A category page lists posts by title, linked from headings the extractor keeps as text only ("other" links)."""
    slugs = ["french-press-guide", "aeropress-recipes", "chemex-guide"]
    for i, slug in enumerate(slugs):
        site.post(f"/p{i}/", slug)
    entries = [f"{prose(slug).title} - Jane Doe, 12 March 2024. A short excerpt about brewing coffee at home." for slug in slugs]
    site.page("/category/brewing/", "Category: brewing", " ".join(entries * 2))
    for slug, i in zip(slugs, range(3)):
        site.link("/category/brewing/", f"/p{i}/", prose(slug).title, region="other")
    text = prose("milk-steaming").text
    site.post("/p3/", "milk-steaming")
    site.link("/p3/", "/p0/", text[:LISTED_ANCHOR_CHARS], region="other")  # in its text, but a small share of it
    corpus = site.corpus()
    listing = corpus.urls.index(url("/category/brewing/"))
    assert corpus.listings.tolist() == [page == listing for page in range(len(corpus))]
    vectors = np.random.default_rng(7).standard_normal((len(corpus), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keywords = Keywords(corpus.texts)
    everyone = nearest(vectors, len(corpus))
    candidates, _ = find_candidates(corpus, vectors, everyone, keywords, everyone, np.zeros(0, dtype=np.int64), -1.0, 1.0)
    assert listing not in set(candidates.source.tolist())
    assert set(candidates.target.tolist()) == set(range(len(corpus)))  # the listing among them
    assert len(candidates) == (len(corpus) - 1) ** 2


def test_keyword_similarity_of_pairs_in_chunks_on_threads_is_the_cosine(ranked_site: tuple[Corpus, Keywords],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, keywords = ranked_site
    sources, targets = np.divmod(np.arange(len(corpus) ** 2), len(corpus))
    cosine = (keywords.matrix @ keywords.matrix.T).toarray()[sources, targets]
    assert (cosine > 0.05).sum() > len(corpus)  # related pairs beside the page with itself
    monkeypatch.setattr(Keywords, "PAIRS_AT_ONCE", 7)  # many steps
    for threads in (1, 2, 4):
        monkeypatch.setattr(index, "THREADS", threads)
        assert np.allclose(keywords.similarity(sources, targets), cosine, atol=1e-6)


def test_pages_are_visited_breadth_first_over_their_pairs_and_every_pair_comes_once_a_page_at_a_time() -> None:
    """locality.py: two groups of pages whose ids alternate, pairing only within the group, are visited a group at a
    time (the order that keeps a stretch of sources on the same targets), whether the pairs name their targets or their
    codes; the rows come a page's together, pages in that order."""
    pages = 10
    pairs = [(s, t) for s in range(pages) for t in range(pages) if s != t and s % 2 == t % 2 and (s, t) != (6, 8)]
    sources, targets = np.array(pairs).T
    starts = source_starts(sources, pages)
    assert starts.tolist() == np.searchsorted(sources, np.arange(pages + 1)).tolist()
    assert source_starts(sources * pages + targets, pages, pages).tolist() == starts.tolist()
    with pytest.raises(ValueError):  # unsorted pairs would be left out of the steps
        source_starts(sources[::-1], pages)
    order = visit_order(starts, targets, pages)
    assert order.tolist() == [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]
    assert visit_order(starts, sources * pages + targets, pages).tolist() == order.tolist()
    alone = np.searchsorted(np.array([3, 3]), np.arange(pages + 1))  # a page with no pair is visited too, once
    assert sorted(visit_order(alone, np.array([1, 5]), pages).tolist()) == list(range(pages))
    for size in (1, 7, 100):
        chunks = [rows_of(starts, order, step) for step in steps(starts, order, size)]
        rows = np.concatenate(chunks)
        assert sorted(rows.tolist()) == list(range(len(pairs)))
        assert distinct(sources[rows]).tolist() == sorted(order.tolist()) and \
            [page for page, _ in itertools.groupby(sources[rows].tolist())] == order.tolist()
        assert all(len(set(sources[chunk].tolist()) & set(sources[other].tolist())) == 0
                   for chunk, other in itertools.combinations(chunks, 2))  # no page split between two steps
        assert max(map(len, chunks)) < size + 4 and (size > 1 or len(chunks) == pages)  # a page holds 3 or 4


# Pages sharing 3 to 700 words, so that numpy sums every way it does (in order below 8, eight partial sums up to 128
# values, halves above); prints whether Keywords.similarity is scipy's row product sum to the bit, and what it covered.
SCIPY_SUM_SCRIPT = """
import numpy as np
from analysis.index import Keywords
rng = np.random.default_rng(11)
vocabulary = [f"zq{chr(97 + a)}{chr(97 + b)}{chr(97 + c)}" for a in range(26) for b in range(26) for c in range(2)]
keywords = Keywords([" ".join(rng.choice(vocabulary, size=int(rng.integers(3, 1400)))) for _ in range(40)])
sources, targets = np.divmod(np.arange(40 * 40), 40)
shared = np.asarray((keywords.matrix[sources] > 0).multiply(keywords.matrix[targets] > 0).sum(axis=1)).ravel()
expected = np.asarray(keywords.matrix[sources].multiply(keywords.matrix[targets]).sum(axis=1)).ravel()
print(np.array_equal(keywords.similarity(sources, targets), expected), shared.max() > 256, ((shared > 8) & (shared <= 128)).any())
"""


def test_keyword_similarity_is_scipys_row_product_sum_to_the_bit_also_loaded_from_numbas_cache(tmp_path: Path) -> None:
    """The compiled row product (_row_dots) sums as scipy does, to the bit; and it works loaded back from numba's cache,
    as every analysis after a machine's first loads it (a recursive version compiled fine, then died with a segfault
    when loaded back). Two processes on one fresh cache: the first compiles, the second loads."""
    for run in ("compiled", "loaded from the cache"):
        done = subprocess.run([sys.executable, "-c", SCIPY_SUM_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
        assert (done.returncode, done.stdout.split()) == (0, ["True", "True", "True"]), (run, done.stderr[-2000:])
        assert list(tmp_path.rglob("index._row_dots*.nbi"))  # the cache the second run loads


def test_keywords_are_scikit_learns_tfidf_to_the_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit weighs its counts as scikit-learn's TfidfTransformer(sublinear_tf=True) does, bit for bit (IDF and
    matrix), with pages counted block by block as the vocabulary grows and the values weighed a few at a time."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfTransformer

    counted = []
    weigh = index._weigh
    monkeypatch.setattr(index, "_weigh", lambda counts, idf: (counted.append(counts.copy()), weigh(counts, idf)))
    monkeypatch.setattr(Keywords, "BLOCK_CHARACTERS", 2_000)
    monkeypatch.setattr(index, "WEIGH_AT_ONCE", 333)
    rng = np.random.default_rng(12)
    vocabulary = [f"w{number}x" for number in range(3_000)]
    texts = [" ".join(rng.choice(vocabulary[:int(rng.integers(10, 3_000))], size=int(rng.integers(1, 600)))) for _ in range(60)]
    keywords = Keywords(texts, [f"title {page}" for page in range(60)])
    expected = TfidfTransformer(sublinear_tf=True).fit(counted[0])
    assert np.array_equal(keywords.idf, expected.idf_)
    assert keywords.document_frequency.tolist() == np.bincount(counted[0].indices, minlength=counted[0].shape[1]).tolist()
    matrix = sparse.csr_matrix(expected.transform(counted[0]))
    assert (keywords.matrix.indptr.tolist(), keywords.matrix.indices.tolist()) == (matrix.indptr.tolist(), matrix.indices.tolist())
    assert np.array_equal(keywords.matrix.data, matrix.data) and keywords.matrix.data.dtype == np.float32
    assert len(keywords.vocabulary) > 1_000  # grown over the blocks


def test_the_stop_words_are_scikit_learns() -> None:
    """The analysis holds scikit-learn's list rather than import scikit-learn for it (analysis/stop_words.py)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert stop_words.ENGLISH_STOP_WORDS == ENGLISH_STOP_WORDS


def test_embedding_similarities_are_numpys_row_product_sums_to_the_bit() -> None:
    """cosines (compiled, no rows gathered) gives what numpy's (a * b).sum(axis=1) gave before it, bit for bit, at the
    dimensions of the models one may pass (384, 768, 1024) and at odd ones (a row under 8 values, one just past 128)."""
    rng = np.random.default_rng(5)
    for dimensions in (384, 768, 1024, 7, 129):
        vectors = rng.standard_normal((300, dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        sources, targets = np.sort(rng.integers(0, 300, 20_000)), rng.integers(0, 300, 20_000)
        assert np.array_equal(cosines(vectors, sources * 300 + targets), (vectors[sources] * vectors[targets]).sum(axis=1)), dimensions


def test_keyword_neighbours_in_blocks_on_threads_are_the_nearest_by_cosine(ranked_site: tuple[Corpus, Keywords],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, keywords = ranked_site
    cosine = (keywords.matrix @ keywords.matrix.T).toarray()
    for threads, cells in ((1, 10 ** 9), (2, 3 * len(corpus)), (4, len(corpus))):  # one block; 3 rows a block; 1 row
        monkeypatch.setattr(index, "THREADS", threads)
        monkeypatch.setattr(Keywords, "BLOCK_CELLS", cells)
        similarities, neighbours = keywords.nearest(5)
        assert neighbours.shape == (len(corpus), 6)
        assert np.allclose(similarities, np.take_along_axis(cosine, neighbours, axis=1), atol=1e-6)
        assert np.allclose(similarities, -np.sort(-cosine, axis=1)[:, :6], atol=1e-6)  # the six best, best first


def test_topic_terms_are_each_pages_heaviest_words_the_first_among_equals_first() -> None:
    """As a stable argsort of each row's negated weights would take them: words said once on a page weigh alike."""
    rng = np.random.default_rng(3)
    words = [f"w{number}" for number in range(40)]
    texts = [" ".join(rng.choice(words, int(rng.integers(0, 30)))) for _ in range(60)] + [""]
    keywords = Keywords(texts)
    matrix = keywords.matrix
    for count in (0, 1, 5, 40):
        starts, ids, weights = keywords.topic_terms(count)
        for page in range(len(texts)):
            row = slice(matrix.indptr[page], matrix.indptr[page + 1])
            best = np.argsort(-matrix.data[row], kind="stable")[:count]
            assert ids[starts[page]:starts[page + 1]].tolist() == matrix.indices[row][best].tolist()
            assert weights[starts[page]:starts[page + 1]].tolist() == matrix.data[row][best].tolist()


def test_the_keyword_fit_keeps_the_texts_tokens_for_the_anchor_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    monkeypatch.setattr(Keywords, "BLOCK_CHARACTERS", 2_000)  # several blocks
    keywords = Keywords(corpus.texts, corpus.titles)
    whole_pages = Keywords([f"{title}\n{text}" for title, text in zip(corpus.titles, corpus.texts)])
    assert keywords.vocabulary.terms == whole_pages.vocabulary.terms
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(keywords.matrix, name), getattr(whole_pages.matrix, name))
    pages = [5, 0, 3, len(corpus) - 1]
    split = keywords.vocabulary.tokenize([corpus.texts[page] for page in pages])
    monkeypatch.setattr(keywords.vocabulary, "tokenize", None)  # kept: not split again
    kept = keywords.text_tokens(corpus.texts, pages)
    for name in ("ids", "starts", "ends", "joined", "counts"):
        assert np.array_equal(getattr(kept, name), getattr(split, name)), name
    assert np.array_equal(keywords.text_tokens(corpus.texts, sorted(pages)).ids, split.select(np.argsort(pages)).ids)
    with pytest.raises(TypeError):  # other texts than the fit's are split again
        keywords.text_tokens(list(corpus.texts), pages)


def test_a_keyword_fit_that_cannot_keep_the_texts_tokens_leaves_them_to_be_split_again(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    monkeypatch.setattr(Keywords, "BLOCK_CHARACTERS", 2_000)
    kept = Keywords(corpus.texts, corpus.titles)
    pages = list(range(len(corpus)))
    def full_disk(self: TokenFile, tokens: Tokens, texts: np.ndarray) -> None:
        raise OSError(28, "No space left on device")
    def no_temporary_directory(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No usable temporary directory found")
    for owner, name, failure in ((TokenFile, "write", full_disk), (tempfile, "TemporaryFile", no_temporary_directory)):
        with monkeypatch.context() as patched:
            patched.setattr(owner, name, failure)
            unkept = Keywords(corpus.texts, corpus.titles)
        assert np.array_equal(unkept.matrix.data, kept.matrix.data)
        assert np.array_equal(unkept.text_tokens(corpus.texts, pages).starts, kept.text_tokens(corpus.texts, pages).starts)
        with monkeypatch.context() as patched:
            patched.setattr(unkept.vocabulary, "tokenize", None)
            with pytest.raises(TypeError):
                unkept.text_tokens(corpus.texts, pages)


def test_hash_table_answers_as_a_dict_would_through_collisions_growth_and_unknown_keys() -> None:
    """The numpy hash table (packed spellings, the anchor search's look-ups): every key added, in rounds that pass half
    full and rebuild it (up to half the keys off their home slot), is found with its value; keys never added (some
    differing from one in the high column only) and (0, 0) are not; a table already shared is never changed by a
    later addition."""
    rng = np.random.default_rng(5)
    low = rng.integers(1, 2**64 - 1, 5_000, dtype=np.uint64)
    high = np.where(rng.random(5_000) < 0.5, 0, rng.integers(0, 2**64 - 1, 5_000, dtype=np.uint64))
    low[:1000] = low[1000:2000]  # keys that differ in their high column only
    keys = np.unique(np.stack([low, high], axis=1), axis=0)
    keys = keys[np.argsort(rng.random(len(keys)))]
    ids = rng.integers(0, 1 << 30, len(keys)).astype(np.int32)
    expected: dict[tuple[int, int], int] = {}
    table = HashTable(np.int32)
    for start in range(0, len(keys), 700):
        before = table
        snapshot = before.keys.copy()
        table = table.with_added(keys[start:start + 700], ids[start:start + 700])
        expected.update(zip(map(tuple, keys[start:start + 700].tolist()), ids[start:start + 700].tolist()))
        assert (before.keys == snapshot).all() and 2 * table.held <= len(table.keys)
        unknown = np.stack([keys[:500, 0], keys[:500, 1] ^ np.uint64(1)], axis=1)  # a known low column, another high one
        asked = np.concatenate([keys, unknown, rng.integers(1, 2**60, (500, 2), dtype=np.uint64), np.zeros((3, 2), dtype=np.uint64)])
        found, known = table.get(asked)
        assert known.tolist() == [key in expected for key in map(tuple, asked.tolist())]
        assert found[known].tolist() == [expected[key] for key in map(tuple, asked[known].tolist())]


def test_past_the_keyword_limit_candidates_come_from_meaning_and_capped_mentions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analysis import pipeline
    from analysis.embed import Embeddings

    topics = ["espresso", "espresso shots", "tea", "oolong", "water", "water hardness", *(f"filler{i}" for i in range(8))]
    texts = [f"Page about {topic} with enough words to be a page about {topic} and nothing else." for topic in topics]
    texts[0] += " Read our oolong steeping guide next."  # a mention of page 3 by its title
    titles = [topic.title() for topic in topics]
    titles[3] = "Oolong Steeping Guide"
    pages = len(texts)
    corpus = plain_corpus(texts, titles, hashes=[f"h{i}" for i in range(pages)])
    partner = [1, 0, 3, 2, 5, 4, *range(6, pages)]  # pages 0-5 come in pairs of close vectors, the rest alone
    vectors = np.eye(pages, dtype=np.float32) * 0.9 + np.eye(pages, dtype=np.float32)[partner] * 0.44  # cosine 0.79
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    monkeypatch.setattr(pipeline, "embed_pages", lambda *args, **kwargs: Embeddings(vectors, 0))
    db = open_database(tmp_path / "site.db")

    def pairs() -> set[tuple[int, int]]:
        proposal = pipeline.propose(db, corpus, pipeline.Options(threshold=0.5, progress=False), {})
        assert proposal.past_keyword_limit == (pages > pipeline.KEYWORD_NEIGHBOURS_LIMIT)  # what the summary's note reads
        return {(item.source, item.target) for item in proposal.queue}

    assert (0, 3) in pairs()  # the mention, whatever its similarity
    monkeypatch.setattr(pipeline, "KEYWORD_NEIGHBOURS_LIMIT", pages - 1)
    by_meaning = {(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4)}
    assert pairs() == by_meaning | {(0, 3)}  # no keyword neighbours, but the mention still
    monkeypatch.setattr(pipeline, "MENTIONS_PER_SOURCE", 0)
    assert pairs() == by_meaning


def test_a_collocation_is_a_pair_written_three_times_whose_words_seldom_go_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keywords.collocations: pairs of neighbouring content words written COLLOCATION_MIN times or more whose Dice
    coefficient, 2 x pair / (first + second), is COLLOCATION_DICE (0.12) or more, or whose second word follows the first
    in COLLOCATION_HEAD (half) of its uses or more; counted on every n-th page of a site larger than COLLOCATION_PAGES."""
    texts = ["The working group met.", "Each working group voted.", "A working group reads.",  # 2 x 3 / (3 + 3) = 1
             "Fresh beans.", "Fresh beans.", "Fresh beans.",  # 2 x 3 / (28 + 25) = 0.113: fresh goes with anything
             *(f"Fresh item{i} arrived." for i in range(25)), *(f"The beans item{i} lasted." for i in range(22)),
             "Roast dates.", "Roast dates.", "Roast dates.",  # 2 x 3 / (23 + 23) = 0.130
             *(f"Roast style{i} ended." for i in range(20)), *(f"Dates list{i} ended." for i in range(20)),
             "Burr grinders.", "Burr grinders.",  # written twice only
             "Color management.", "Color management.", "Color management.", "The management met.",  # 3 of 4 uses of management
             *(f"Color hue{i} changed." for i in range(60)),  # though 2 x 3 / (63 + 4) = 0.09
             "Sharp knives.", "Sharp knives.", "Sharp knives.", "Sharp edges.",  # 3 of 4 uses of sharp: not enough
             *(f"Knives tool{i} worked." for i in range(60))]
    def pairs(keywords: Keywords) -> set[tuple[str, str]]:
        terms = keywords.vocabulary.terms
        return {(terms[key >> 32], terms[key & 0xFFFFFFFF]) for key in keywords.collocations.tolist()}
    assert {pair for pair in pairs(Keywords(texts)) if not any(char.isdigit() for char in "".join(pair))} == {
        (stem("working"), stem("group")), (stem("roast"), stem("dates")), (stem("color"), stem("management"))}
    shuffled = [texts[i] for i in np.random.default_rng(5).permutation(len(texts))]
    monkeypatch.setattr(index, "COLLOCATION_PAGES", (len(shuffled) + 2) // 3)  # every third page
    assert pairs(Keywords(shuffled)) == pairs(Keywords(shuffled[::3]))
