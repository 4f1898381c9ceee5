"""Impact of the review queue on small hand-made crawl databases, with exact expected depths, orphans and PageRank.

Each database is a fresh one from linkspider.db.open_database with rows as the crawler stores them, and a
suggestions table in the analysis' schema with the statuses a reviewer would set.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import sqlite_utils
from scipy import sparse

from analysis.export import CSV_HEADER, SUGGESTIONS, export_csv
from analysis.impact import DAMPING, NotAnalysed, gini, load_graph, marginal_gains, measure, measure_impact, pagerank
from analysis.load import load_corpus
from linkspider.db import open_database

BASE = "http://site.test"


def url(path: str) -> str:
    return BASE + path


def crawl(tmp_path: Path, pages: dict[str, dict], links: list[tuple], start: str = "/") -> sqlite_utils.Database:
    """A finished crawl: pages by path (200 HTML unless overridden), links as (source, target, region[, nofollow])."""
    db = open_database(tmp_path / "site.db")
    db["crawls"].insert({"id": 1, "start_urls": url(start), "status": "finished"})
    db["pages"].insert_all([{"url": url(path), "final_url": url(path), "status": 200, "is_html": 1, "title": f"Page {path}",
                             "gone": 0, "noindex": 0, "nofollow": 0, "sitemap_only": 0, **extra} for path, extra in pages.items()])
    db["links"].insert_all([{"source": url(source), "target": url(target), "region": region,
                             "nofollow": int(bool(rest and rest[0])), "external": 0} for source, target, region, *rest in links])
    return db


def queue(db: sqlite_utils.Database, *suggestions: tuple[str, str, str], score: float = 1.0) -> None:
    db["suggestions"].create(SUGGESTIONS, pk=("source", "target"))
    db["suggestions"].insert_all([{"source": url(source), "target": url(target), "target_title": f"Page {target}",
                                   "anchor": "a phrase", "anchor_source": "text", "context": "With a phrase in it.",
                                   "similarity": 0.6, "score": score, "status": status} for source, target, status in suggestions])


def chain(tmp_path: Path) -> sqlite_utils.Database:
    """Home -> a -> b -> c -> d in main content, every page back to home from its nav; e is only in the sitemap."""
    paths = ["/", "/a", "/b", "/c", "/d"]
    links = [(source, target, "content") for source, target in zip(paths, paths[1:])]
    links += [(path, "/", "nav") for path in paths[1:]]
    return crawl(tmp_path, {path: {} for path in paths} | {"/e": {"sitemap_only": 1}}, links)


def column(db: sqlite_utils.Database, name: str) -> dict[str, object]:
    return {row["url"].removeprefix(BASE): row[name] for row in db["impact"].rows}


def site(db: sqlite_utils.Database) -> dict[str, tuple[float | None, float | None]]:
    return {row["figure"]: (row["before"], row["after"]) for row in db["impact_summary"].rows}


def test_depth_pagerank_inbound_and_orphans_of_a_chain(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db)
    measure_impact(db)
    assert column(db, "depth_before") == {"/": 0, "/a": 1, "/b": 2, "/c": 3, "/d": 4, "/e": None}
    assert column(db, "inbound_before") == {"/": 0, "/a": 1, "/b": 1, "/c": 1, "/d": 1, "/e": 0}
    assert {path for path, orphan in column(db, "orphan_before").items() if orphan} == {"/e"}  # the start page never is
    ranks = column(db, "pagerank_before")
    assert sorted(ranks, key=ranks.get, reverse=True) == ["/", "/a", "/b", "/c", "/d", "/e"]
    assert sum(ranks.values()) == pytest.approx(1)
    assert site(db) == {
        "pages": (6, 6), "content links": (4, 4), "mean depth": (2, 2), "median depth": (2, 2), "deeper than 3 clicks": (1, 1),
        "unreachable from the start": (1, 1), "orphans": (1, 1),
        "PageRank Gini": (pytest.approx(gini(ranks.values())),) * 2, "PageRank share of the top 1%": (ranks["/"], ranks["/"]),
    }


def test_the_queue_applied_pending_and_approved_by_default(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db, ("/a", "/d", "pending"), ("/b", "/e", "approved"), ("/", "/c", "rejected"), ("/c", "/e", "done"))
    impact = measure_impact(db)
    assert impact.applied == 2
    assert column(db, "depth_after") == {"/": 0, "/a": 1, "/b": 2, "/c": 3, "/d": 2, "/e": 3}
    assert column(db, "inbound_after") == {"/": 0, "/a": 1, "/b": 1, "/c": 1, "/d": 2, "/e": 1}
    assert not any(column(db, "orphan_after").values())
    after = column(db, "pagerank_after")
    assert after["/d"] > column(db, "pagerank_before")["/d"] and after["/e"] > column(db, "pagerank_before")["/e"]
    assert site(db)["deeper than 3 clicks"] == (1, 0)
    assert site(db)["unreachable from the start"] == (1, 0)
    assert site(db)["orphans"] == (1, 0)
    assert site(db)["content links"] == (4, 6)
    assert site(db)["mean depth"] == (2, pytest.approx(11 / 6))


def test_approved_only_applies_the_approved_suggestions(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db, ("/a", "/d", "pending"), ("/b", "/e", "approved"))
    assert measure_impact(db, approved_only=True).applied == 1
    assert column(db, "depth_after") == {"/": 0, "/a": 1, "/b": 2, "/c": 3, "/d": 4, "/e": 3}
    assert site(db)["deeper than 3 clicks"] == (1, 1)


def gains(db: sqlite_utils.Database) -> dict[tuple[str, str], tuple[int | None, int | None, float]]:
    return {(row["source"].removeprefix(BASE), row["target"].removeprefix(BASE)):
            (row["depth_before"], row["depth_after"], row["pagerank_gain"]) for row in db["suggestions"].rows}


def networkx_graph(db: sqlite_utils.Database) -> nx.DiGraph:
    """The crawl's links that pass PageRank, for networkx: the independent PageRank the gains are checked against."""
    graph = load_graph(db)
    followed = nx.DiGraph()
    followed.add_nodes_from(graph.pages)
    followed.add_edges_from((graph.pages[i], graph.pages[j]) for i, j in zip(*graph.followed.nonzero()))
    return followed


def test_pagerank_is_networkx_pagerank() -> None:
    """On a random graph with pages that link nowhere and pages nothing links to."""
    rng = np.random.default_rng(7)
    links = (rng.random((60, 60)) < 0.05) & ~np.identity(60, dtype=bool)
    links[:5] = False  # dangling
    expected = nx.pagerank(nx.from_numpy_array(links.astype(float), create_using=nx.DiGraph), alpha=DAMPING, tol=1e-14)
    ranks = pagerank(sparse.csr_array(links.astype(float)), tolerance=1e-14, rounds=1000)
    assert ranks == pytest.approx([expected[i] for i in range(60)], rel=1e-9)
    assert ranks.sum() == pytest.approx(1.0)


def exact_gain(db: sqlite_utils.Database, source: str, target: str) -> float:
    """The target's relative PageRank change, recomputed with the one link added."""
    graph = networkx_graph(db)
    before = nx.pagerank(graph, alpha=DAMPING, tol=1e-12)
    graph.add_edge(url(source), url(target))
    return nx.pagerank(graph, alpha=DAMPING, tol=1e-12)[url(target)] / before[url(target)] - 1


SUGGESTED = (("/a", "/d", "pending"), ("/b", "/e", "approved"), ("/", "/c", "rejected"), ("/d", "/", "pending"),
             ("/c", "/a", "pending"))


def test_each_suggestion_gets_its_marginal_gain_whatever_its_status(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db, *SUGGESTED)
    measure_impact(db)
    found = gains(db)
    assert {pair: depths for pair, (*depths, _) in found.items()} == {
        ("/a", "/d"): [4, 2], ("/b", "/e"): [None, 3], ("/", "/c"): [3, 1], ("/d", "/"): [0, 0], ("/c", "/a"): [1, 1]}
    assert found[("/d", "/")][2] == 0  # already linked from the nav: the same graph
    for pair, (*_, gain) in found.items():  # a small site: exact, as recomputing PageRank with the link added
        assert gain == pytest.approx(exact_gain(db, *pair), rel=1e-4, abs=1e-9), pair


def test_above_the_exact_limit_pagerank_gains_are_first_order(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db, *SUGGESTED)
    graph = load_graph(db)
    figures = measure(graph)
    pairs = [(url(source), url(target)) for source, target, _ in SUGGESTED]
    sources, targets = (np.array([graph.index[page] for page in pages]) for pages in zip(*pairs))
    first_order = dict(zip(pairs, marginal_gains(graph, figures, sources, targets, exact_pages=0).pagerank.tolist()))
    rank = figures.pagerank
    assert first_order[url("/a"), url("/d")] == pytest.approx(DAMPING * rank[url("/a")] / 3 / rank[url("/d")])  # a had 2 links
    assert first_order[url("/d"), url("/")] == 0
    exact = {pair: exact_gain(db, pair[0].removeprefix(BASE), pair[1].removeprefix(BASE)) for pair in pairs}
    assert sorted(pairs, key=first_order.get) == sorted(pairs, key=exact.get)
    assert all(exact[pair] * 0.5 < first_order[pair] < exact[pair] * 2 for pair in pairs if exact[pair] > 1e-9)


def test_redirects_and_canonicals_resolve_and_dead_pages_are_not_in_the_graph(tmp_path: Path) -> None:
    db = crawl(tmp_path, {
        "/": {}, "/new": {}, "/post": {}, "/deep": {},
        "/old": {"status": 301, "redirect_to": url("/new"), "final_url": url("/new")},
        "/post/print": {"canonical": url("/post")},
        "/missing": {"status": 404}, "/gone": {"gone": 1},
    }, [("/", "/old", "content"), ("/new", "/post/print", "content"), ("/post/print", "/deep", "content"),
        ("/", "/missing", "content"), ("/", "/gone", "content"), ("/gone", "/deep", "content")])
    queue(db)
    measure_impact(db)
    assert column(db, "depth_before") == {"/": 0, "/new": 1, "/post": 2, "/deep": 3}  # a redirect is not a click
    assert column(db, "inbound_before") == {"/": 0, "/new": 1, "/post": 1, "/deep": 1}


def test_the_links_an_analysis_read_make_the_graph_a_read_of_its_own_makes(tmp_path: Path) -> None:
    """load_corpus reads the whole site's links with the corpus's (one pass over the links table); impact takes them
    as its graph when they are of its pages, and reads its own when not."""
    text = {"main_text": "words " * 60, "word_count": 60}
    db = crawl(tmp_path, {
        "/": text, "/new": text, "/post": text, "/deep": text, "/c": {**text, "nofollow": 1},
        "/old": {"status": 301, "redirect_to": url("/new"), "final_url": url("/new")},
        "/post/print": {**text, "canonical": url("/post")}, "/missing": {"status": 404}, "/gone": {**text, "gone": 1},
    }, [("/", "/old", "content"), ("/new", "/post/print", "content", True), ("/post/print", "/deep", "nav"),
        ("/", "/missing", "content"), ("/", "/gone", "content"), ("/gone", "/deep", "content"), ("/c", "/deep", "content"),
        ("/deep", "/", "nav"), ("/deep", "/deep", "content")])
    db["links"].insert({"source": url("/"), "target": "https://elsewhere.test/", "region": "content", "nofollow": 0, "external": 1})
    own, given = load_graph(db), load_graph(db, load_corpus(db, min_words=1).site)
    for graph in (own, given):
        assert graph.pages == [url(path) for path in ("/", "/c", "/deep", "/new", "/post")]
    assert (given.links != own.links).nnz == 0 and (given.followed != own.followed).nnz == 0
    assert given.content.tolist() == own.content.tolist() and own.links.nnz == 5 and own.followed.nnz == 3
    read = load_corpus(db, min_words=1).site
    taken = load_graph(db, replace(read, codes=read.codes[:1], kinds=read.kinds[:1]))  # taken as they are
    assert taken.links.nnz == 1
    assert (load_graph(db, replace(read, pages=read.pages[1:])).links != own.links).nnz == 0  # of other pages: not taken


def test_a_nofollow_link_is_a_click_that_passes_no_pagerank(tmp_path: Path) -> None:
    db = crawl(tmp_path, {"/": {}, "/a": {}, "/b": {}, "/c": {"nofollow": 1}, "/alone": {"sitemap_only": 1}},
               [("/", "/a", "nav", True), ("/", "/b", "nav"), ("/", "/c", "nav"), ("/c", "/a", "content")])
    queue(db)
    measure_impact(db)
    assert column(db, "depth_before") == {"/": 0, "/a": 1, "/b": 1, "/c": 1, "/alone": None}
    ranks = column(db, "pagerank_before")
    assert ranks["/a"] == pytest.approx(ranks["/alone"])  # as if nothing linked to it
    assert ranks["/b"] == pytest.approx(ranks["/c"]) and ranks["/b"] > ranks["/a"]


def test_the_csv_shows_the_gain_last_and_breaks_score_ties_by_it(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db, ("/d", "/", "pending"), ("/a", "/d", "pending"), ("/b", "/e", "pending"), ("/c", "/a", "pending"))
    measure_impact(db)
    path = tmp_path / "queue.csv"
    assert export_csv(db, path) == 4
    with open(path, newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    assert header == CSV_HEADER and header[-2:] == ["status", "gain"]
    assert [(row[0].removeprefix(BASE), row[1].removeprefix(BASE)) for row in rows] == [
        ("/b", "/e"), ("/a", "/d"), ("/c", "/a"), ("/d", "/")]  # newly reachable, 2 clicks closer, more PageRank, nothing
    found = gains(db)
    assert rows[0][-1] == f"depth unreachable -> 3, PageRank {found[('/b', '/e')][2]:+.1%}"
    assert rows[1][-1] == f"depth 4 -> 2, PageRank {found[('/a', '/d')][2]:+.1%}"
    assert found[("/c", "/a")][2] > 0 and rows[3][-1] == "PageRank +0.0%"


def test_a_suggestion_whose_page_is_gone_since_loses_its_gain_and_is_not_applied(tmp_path: Path) -> None:
    db = chain(tmp_path)
    queue(db, ("/a", "/d", "pending"), ("/b", "/e", "pending"))
    measure_impact(db)
    assert gains(db)[("/b", "/e")] == (None, 3, pytest.approx(exact_gain(db, "/b", "/e"), rel=1e-4))
    db["pages"].update(url("/e"), {"gone": 1})  # a re-crawl found it gone before the queue was analysed again
    impact = measure_impact(db)
    assert impact.applied == 1
    assert gains(db)[("/b", "/e")] == (None, None, None)
    assert gains(db)[("/a", "/d")][:2] == (4, 2)


def test_gini_of_known_shares() -> None:
    assert gini([0.25] * 4) == 0
    assert gini([0, 0, 0, 1]) == pytest.approx(0.75)
    assert gini([]) is None


def test_a_database_without_a_queue_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotAnalysed, match="run `scrapy analyze DB`"):
        measure_impact(chain(tmp_path))
