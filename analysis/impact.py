"""Impact: what the review queue would do to the site's link graph, measured before anyone edits a page.

The graph is every live HTML page (status 200, its own canonical) and every internal link between two
of them, from any region, resolved through redirects and canonicals as load.py resolves them: a
redirect is not a click, and a duplicate's links count as its canonical's (or as its first copy's:
load.first_copies). Per page, on the crawl's graph and again with the queue's links added as content links:

- click depth: fewest clicks from the latest crawl's start URL(s); none when no path exists;
- internal PageRank (damping 0.85, by power iteration on a sparse matrix as networkx's pagerank
  does, which the tests check it against; a rel=nofollow link, or any link of a nofollow page, passes
  none); all pages together hold 1;
- inbound content links: other pages linking to it from their main content;
- orphan: no inbound content link (sitemap-only pages included; a start page is never one).

Each suggestion also gets its marginal gain, what it alone would do to its target:

- depth: exact, min(target's depth, source's depth + 1), from the one search above;
- PageRank, as a share of the target's: exact up to EXACT_PAGES pages, by the Sherman-Morrison
  formula on one dense inverse of the PageRank system for all suggestions (a link changes one row of
  the random surfer's steps); above, first order: the PageRank the new link would carry,
  0.85 x PR(source) / (followed out-links + 1) (a source without any spreads its share over every
  page). First order leaves out what flows back to the target through cycles and what the source's
  other targets lose: on the demo site, whose template links every page, it is within 2% of exact
  (Spearman 0.9999 over its 111 suggestions that add a link); on the tests' five-page chain, up to 65%.

A link that already exists in any region (a nav link) gains neither. Per-page figures go to the
`impact` table, site figures to `impact_summary`, gains to the suggestions' gain columns.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import sqlite_utils
from scipy import sparse
from scipy.sparse import csgraph

from analysis.export import SUGGESTIONS, replace_table
from analysis.load import SiteLinks, distinct, page_titles, read_links, resolver
from linkspider.db import add_missing_columns

DAMPING = 0.85
DEEP = 3  # a page more clicks than this from the start is hard to reach
TOP_SHARE = 0.01  # PageRank concentration: the share held by this top fraction of pages
QUEUED = ("pending", "approved")  # the statuses applied by default
EXACT_PAGES = 2_000  # exact PageRank gains up to this many pages: a dense inverse of 32 MB, about a second

IMPACT = {
    "url": str, "title": str, "sitemap_only": int, "depth_before": int, "depth_after": int,
    "pagerank_before": float, "pagerank_after": float, "inbound_before": int, "inbound_after": int,
    "orphan_before": int, "orphan_after": int,
}


class NotAnalysed(ValueError):
    """The database has no review queue yet; the message names the command that makes one."""


@dataclass
class Graph:
    """The crawl's resolved link graph (see the module docstring), as sparse matrices over its pages."""

    pages: list[str]  # sorted; a page's row and column in the matrices
    links: sparse.csr_array  # links[i, j]: page i links to page j, from any region
    followed: sparse.csr_array  # the links that pass PageRank
    content: np.ndarray  # pairs linked from the source's main content, as sorted codes source * pages + target
    start: set[str]
    titles: dict[str, str]
    sitemap_only: set[str]

    @cached_property
    def index(self) -> dict[str, int]:
        return {url: i for i, url in enumerate(self.pages)}

    def with_links(self, sources: np.ndarray, targets: np.ndarray) -> Graph:
        """The graph after adding these pairs (rows of pages) as followed content links."""
        added = distinct(sources * len(self.pages) + targets)
        matrix = code_matrix(added, len(self.pages))
        return replace(self, links=_union(self.links, matrix), followed=_union(self.followed, matrix),
                       content=distinct(np.concatenate([self.content, added])))


def code_matrix(codes: np.ndarray, pages: int) -> sparse.csr_array:
    """Distinct pair codes (source * pages + target) as a 0/1 matrix over the pages."""
    sources, targets = np.divmod(codes, pages)
    return sparse.csr_array((np.ones(len(codes)), (sources, targets)), shape=(pages, pages))


def _union(first: sparse.csr_array, second: sparse.csr_array) -> sparse.csr_array:
    return ((first + second) > 0).astype(np.float64)


@dataclass
class Figures:
    """One state of the graph, page by page."""

    depth: dict[str, int]  # the pages a start URL reaches
    pagerank: dict[str, float]
    inbound: dict[str, int]
    orphans: set[str]


@dataclass
class Gains:
    """What each of some suggestions alone would do to its target, one item a suggestion."""

    depth_before: np.ndarray  # -1: not reachable from the start
    depth_after: np.ndarray
    pagerank: np.ndarray  # relative change of the target's PageRank: 0.31 is +31%


@dataclass
class Impact:
    """The queue's impact, as stored and as the report and the summary show it."""

    graph: Graph  # before
    before: Figures
    after: Figures
    statuses: tuple[str, ...]  # of the suggestions applied
    applied: int  # suggestions applied
    site: dict[str, tuple[float | None, float | None]]  # figure -> (before, after)
    gains: Gains
    measured: np.ndarray  # the rowid in suggestions of each gain
    unmeasured: np.ndarray  # the rowids of suggestions whose pages are gone since the analysis

    def headline(self) -> str:
        """The site figures that matter most, for the summary: "over all 40 live HTML pages: ..., orphans 16 -> 2". Over
        every live page, not only the analysed ones (the summary's other orphan count), since a listing or a short page
        is clicked through as much as an article."""
        names = ("mean depth", f"deeper than {DEEP} clicks", "unreachable from the start", "orphans")
        figures = ", ".join(f"{name} {figure(name, self.site[name][0])} -> {figure(name, self.site[name][1])}" for name in names)
        return f"over all {len(self.graph.pages)} live HTML pages: {figures}"


def load_graph(db: sqlite_utils.Database, links: SiteLinks | None = None) -> Graph:
    """The resolved graph of the crawl in the database, with the latest crawl's start URLs; its links as given (read
    by the analysis just before, load_corpus) when they are of these very pages, else read here.

    The 1.5M links of 100,000 pages are read as pair codes into arrays: a set and a dict of URL pairs took
    11 s of the stage's 25 (BENCHMARKS.md, "Analysis")."""
    resolve = resolver(db)
    rows = [row for row in db.query(
        "SELECT url, title, h1, sitemap_only FROM pages WHERE gone = 0 AND status = 200 AND is_html = 1 ORDER BY url"
    ) if resolve.get(row["url"], row["url"]) == row["url"]]
    urls = [row["url"] for row in rows]
    titles = page_titles([row["title"] for row in rows], [row["h1"] for row in rows], urls)
    index = {url: i for i, url in enumerate(urls)}
    if links is None or links.pages != urls:
        links = read_links(db, resolve)
    pages, linked, kind = len(urls), links.codes, links.kinds
    crawl = db.execute("SELECT start_urls FROM crawls ORDER BY id DESC LIMIT 1").fetchone()
    start = {resolve.get(url, url) for url in (crawl[0] or "").split()} & index.keys() if crawl else set()
    return Graph(urls, code_matrix(distinct(linked), pages), code_matrix(distinct(linked[kind % 2 == 1]), pages),
                 distinct(linked[kind >= 2]), start,
                 {row["url"]: title or row["title"] or row["url"] for row, title in zip(rows, titles)},
                 {row["url"] for row in rows if row["sitemap_only"]})


def measure(graph: Graph) -> Figures:
    """Depth, PageRank, inbound content links and orphans of every page of this state of the graph."""
    depth: dict[str, int] = {}
    if graph.start:
        clicks = csgraph.shortest_path(graph.links, unweighted=True, indices=[graph.index[url] for url in graph.start]).min(axis=0)
        depth = {graph.pages[i]: int(clicks[i]) for i in np.flatnonzero(np.isfinite(clicks))}
    inbound = dict(zip(graph.pages, np.bincount(graph.content % len(graph.pages), minlength=len(graph.pages)).tolist()))
    return Figures(depth, dict(zip(graph.pages, pagerank(graph.followed).tolist())), inbound,
                   {url for url, count in inbound.items() if not count and url not in graph.start})


def pagerank(followed: sparse.csr_array, tolerance: float = 1e-6, rounds: int = 100) -> np.ndarray:
    """PageRank by power iteration, as networkx's pagerank: a page without links spreads its share over every page,
    and the iteration stops when the total change is under pages x tolerance."""
    pages = followed.shape[0]
    if not pages:
        return np.zeros(0)
    out = np.asarray(followed.sum(axis=1)).ravel()
    steps = sparse.csr_array(followed.multiply(np.divide(1.0, out, out=np.zeros(pages), where=out > 0)[:, None]))
    dangling, uniform = out == 0, np.full(pages, 1.0 / pages)
    rank = uniform
    for _ in range(rounds):
        previous = rank
        rank = DAMPING * (rank @ steps + sum(rank[dangling]) * uniform) + (1 - DAMPING) * uniform
        if np.abs(rank - previous).sum() < pages * tolerance:
            return rank
    raise ArithmeticError(f"PageRank did not converge in {rounds} rounds")


def marginal_gains(graph: Graph, figures: Figures, sources: np.ndarray, targets: np.ndarray,
                   exact_pages: int = EXACT_PAGES) -> Gains:
    """Each pair's gain for its target (pages' rows) if it alone were added (see the module docstring), all at once.

    Depth is exact: the target's, or one click below the source where that is less."""
    pages, adjacency = graph.pages, graph.followed
    depth = np.array([figures.depth.get(url, -1) for url in pages], dtype=np.int64)
    before, via = depth[targets], depth[sources]
    after = np.where((via >= 0) & ((before < 0) | (before > via + 1)), via + 1, before)
    if not len(sources):
        return Gains(before, after, np.zeros(0))
    out = np.asarray(adjacency.sum(axis=1)).ravel()  # followed out-links of each page
    links = out[sources]
    if len(pages) <= exact_pages:
        # The source's row of steps becomes (links x row + e_target) / (links + 1), a change of
        # (e_target - row) / (links + 1); and inverse @ steps.T = (inverse - I) / DAMPING, so
        # inverse[i] @ steps[j] is (inverse[i, j] - [i == j]) / DAMPING: no product of matrices.
        steps = np.divide(adjacency.toarray(), out[:, None], out=np.full((len(pages), len(pages)), 1 / len(pages)),
                          where=out[:, None] > 0)  # no link: anywhere
        inverse = np.linalg.inv(np.identity(len(pages)) - DAMPING * steps.T)
        reach = (inverse[targets, targets] - inverse[targets, sources] / DAMPING) / (links + 1)
        feedback = (inverse[sources, targets] - (inverse[sources, sources] - 1) / DAMPING) / (links + 1)
        carried = reach / (1 - DAMPING * feedback)
    else:
        carried = np.where(links > 0, 1 / (links + 1), 1 - 1 / len(pages))
    carried = np.where(adjacency[sources, targets] > 0, 0.0, carried)  # an existing link gains nothing
    ranks = np.array([figures.pagerank[url] for url in pages])
    return Gains(before, after, DAMPING * ranks[sources] * carried / ranks[targets])


def site_figures(graph: Graph, figures: Figures) -> dict[str, float | None]:
    """The site-level figures, by the name the report shows; depths count reachable pages only."""
    depths = list(figures.depth.values())
    ranks = sorted(figures.pagerank.values(), reverse=True)
    top = max(1, math.ceil(TOP_SHARE * len(ranks)))
    return {
        "pages": len(graph.pages),
        "content links": len(graph.content),
        "mean depth": statistics.fmean(depths) if depths else None,
        "median depth": statistics.median(depths) if depths else None,
        f"deeper than {DEEP} clicks": sum(depth > DEEP for depth in depths),
        "unreachable from the start": len(graph.pages) - len(depths),
        "orphans": len(figures.orphans),
        "PageRank Gini": gini(ranks),
        "PageRank share of the top 1%": sum(ranks[:top]) / sum(ranks) if ranks else None,
    }


def gini(values: Iterable[float]) -> float | None:
    """0 when every page holds the same PageRank, towards 1 as one page holds it all."""
    ordered = sorted(values)
    count, total = len(ordered), sum(ordered)
    if not total:
        return None
    return sum((2 * rank - count - 1) * value for rank, value in enumerate(ordered, 1)) / (count * total)


def measure_impact(db: sqlite_utils.Database, approved_only: bool = False, links: SiteLinks | None = None) -> Impact:
    """Measure the crawl's graph with and without the queue, store the figures and gains, return them (links: as
    load_graph takes them)."""
    if "suggestions" not in db.table_names():
        raise NotAnalysed("this database has no review queue yet; run `scrapy analyze DB` on it first")
    graph = load_graph(db, links)
    statuses = ("approved",) if approved_only else QUEUED
    rows, sources, targets, applied = _suggestions(db, graph.index, statuses)
    measured = (sources >= 0) & (targets >= 0)  # pages gone since the analysis are left out
    applied &= measured
    after_graph = graph.with_links(sources[applied], targets[applied])
    before, after = measure(graph), measure(after_graph)
    site_before, site_after = site_figures(graph, before), site_figures(after_graph, after)
    impact = Impact(graph, before, after, statuses, int(applied.sum()),
                    {name: (site_before[name], site_after[name]) for name in site_before},
                    marginal_gains(graph, before, sources[measured], targets[measured]), rows[measured], rows[~measured])
    save(db, impact)
    return impact


def _suggestions(db: sqlite_utils.Database, index: dict[str, int], statuses: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    """(rowid, source's page, target's page, whether applied) of every suggestion: a page not in the index is -1."""
    found = db.execute("SELECT rowid, source, target, status FROM suggestions").fetchall()
    return (np.array([row for row, _, _, _ in found], dtype=np.int64),
            np.array([index.get(source, -1) for _, source, _, _ in found], dtype=np.int64),
            np.array([index.get(target, -1) for _, _, target, _ in found], dtype=np.int64),
            np.array([status in statuses for _, _, _, status in found], dtype=bool))


def save(db: sqlite_utils.Database, impact: Impact) -> None:
    """Rewrite the impact tables whole and every suggestion's gain (NULL for one whose pages are gone), by rowid: by
    (source, target) it took twice as long at 100,000 pages."""
    before, after = impact.before, impact.after
    replace_table(db, "impact", ({
        "url": url, "title": impact.graph.titles[url], "sitemap_only": int(url in impact.graph.sitemap_only),
        "depth_before": before.depth.get(url), "depth_after": after.depth.get(url),
        "pagerank_before": before.pagerank[url], "pagerank_after": after.pagerank[url],
        "inbound_before": before.inbound[url], "inbound_after": after.inbound[url],
        "orphan_before": int(url in before.orphans), "orphan_after": int(url in after.orphans),
    } for url in impact.graph.pages), IMPACT)
    replace_table(db, "impact_summary", [{"figure": name, "before": values[0], "after": values[1]}
                                         for name, values in impact.site.items()],
                  {"figure": str, "before": float, "after": float})
    add_missing_columns(db["suggestions"], SUGGESTIONS)
    gains = impact.gains
    update = "UPDATE suggestions SET depth_before = ?, depth_after = ?, pagerank_gain = ? WHERE rowid = ?"
    with db.atomic():
        db.conn.executemany(update, ((None, None, None, row) for row in impact.unmeasured.tolist()))
        db.conn.executemany(update, ((None if depth < 0 else depth, None if later < 0 else later, gain, row) for depth, later, gain, row
                                     in zip(gains.depth_before.tolist(), gains.depth_after.tolist(), gains.pagerank.tolist(),
                                            impact.measured.tolist())))


def figure(name: str, value: float | None) -> str:
    """A site figure as people read it: counts whole, shares in percent, the rest to two decimals."""
    if value is None:
        return "none"
    if "share" in name:
        return f"{value:.1%}"
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"
