"""Impact: what the review queue would do to the site's link graph, measured before anyone edits a page.

The graph is every live HTML page (status 200, its own canonical) and every internal link between two
of them, from any region, resolved through redirects and canonicals as load.py resolves them: a
redirect is not a click, and a duplicate's links count as its canonical's. Per page, on the crawl's
graph and again with the queue's links added as content links:

- click depth: fewest clicks from the latest crawl's start URL(s); none when no path exists;
- internal PageRank (networkx, damping 0.85; a rel=nofollow link, or any link of a nofollow page,
  passes none); all pages together hold 1;
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
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

import networkx as nx
import numpy as np
import sqlite_utils

from analysis.export import SUGGESTIONS, replace_table
from analysis.load import page_titles, resolver
from linkspider.db import add_missing_columns

DAMPING = 0.85
DEEP = 3  # a page more clicks than this from the start is hard to reach
TOP_SHARE = 0.01  # PageRank concentration: the share held by this top fraction of pages
QUEUED = ("pending", "approved")  # the statuses applied by default
EXACT_PAGES = 2_000  # exact PageRank gains up to this many pages: a dense inverse of 32 MB, about a second

Pair = tuple[str, str]
IMPACT = {
    "url": str, "title": str, "sitemap_only": int, "depth_before": int, "depth_after": int,
    "pagerank_before": float, "pagerank_after": float, "inbound_before": int, "inbound_after": int,
    "orphan_before": int, "orphan_after": int,
}


class NotAnalysed(ValueError):
    """The database has no review queue yet; the message names the command that makes one."""


@dataclass
class Graph:
    """The crawl's resolved link graph (see the module docstring)."""

    links: nx.DiGraph  # one edge per linked pair of pages; `follow`: it passes PageRank
    content: set[Pair]  # pairs linked from the source's main content
    start: set[str]
    titles: dict[str, str]
    sitemap_only: set[str]

    @property
    def followed(self) -> nx.DiGraph:
        """The links that pass PageRank."""
        return nx.subgraph_view(self.links, filter_edge=lambda source, target: self.links[source][target]["follow"])

    def with_links(self, pairs: Iterable[Pair]) -> Graph:
        """The graph after adding these pairs as followed content links."""
        pairs = set(pairs)
        links = self.links.copy()
        links.add_edges_from(pairs, follow=True)
        return replace(self, links=links, content=self.content | pairs)


@dataclass
class Figures:
    """One state of the graph, page by page."""

    depth: dict[str, int]  # the pages a start URL reaches
    pagerank: dict[str, float]
    inbound: Counter[str]
    orphans: set[str]


@dataclass
class Gain:
    """What one suggestion alone would do to its target."""

    depth_before: int | None
    depth_after: int | None
    pagerank: float  # relative change of the target's PageRank: 0.31 is +31%


@dataclass
class Impact:
    """The queue's impact, as stored and as the report and the summary show it."""

    graph: Graph  # before
    before: Figures
    after: Figures
    statuses: tuple[str, ...]  # of the suggestions applied
    applied: int  # suggestions applied
    site: dict[str, tuple[float | None, float | None]]  # figure -> (before, after)
    gains: dict[Pair, Gain]

    def headline(self) -> str:
        """The site figures that matter most, for the summary: "orphans 16 -> 2, ..."."""
        names = ("mean depth", f"deeper than {DEEP} clicks", "unreachable from the start", "orphans")
        return ", ".join(f"{name} {figure(name, self.site[name][0])} -> {figure(name, self.site[name][1])}" for name in names)


def load_graph(db: sqlite_utils.Database) -> Graph:
    """The resolved graph of the crawl in the database, with the latest crawl's start URLs."""
    resolve = resolver(db)
    rows = [row for row in db.query(
        "SELECT url, title, h1, sitemap_only FROM pages WHERE gone = 0 AND status = 200 AND is_html = 1 ORDER BY url"
    ) if resolve.get(row["url"], row["url"]) == row["url"]]
    urls = [row["url"] for row in rows]
    titles = page_titles([row["title"] for row in rows], [row["h1"] for row in rows], urls)
    links = nx.DiGraph()
    links.add_nodes_from(urls)
    content: set[Pair] = set()
    for source, target, region, nofollow in db.execute(
        "SELECT links.source, links.target, links.region, links.nofollow OR coalesce(pages.nofollow, 0) FROM links "
        "JOIN pages ON pages.url = links.source WHERE links.external = 0 AND pages.gone = 0 AND pages.status = 200"
    ):
        pair = (resolve.get(source, source), resolve.get(target, target))
        if pair[0] == pair[1] or pair[0] not in links or pair[1] not in links:
            continue
        followed = not nofollow or links.get_edge_data(*pair, {}).get("follow", False)
        links.add_edge(*pair, follow=followed)
        if region == "content":
            content.add(pair)
    crawl = db.execute("SELECT start_urls FROM crawls ORDER BY id DESC LIMIT 1").fetchone()
    start = {resolve.get(url, url) for url in (crawl[0] or "").split()} & set(urls) if crawl else set()
    return Graph(links, content, start,
                 {row["url"]: title or row["title"] or row["url"] for row, title in zip(rows, titles)},
                 {row["url"] for row in rows if row["sitemap_only"]})


def measure(graph: Graph) -> Figures:
    """Depth, PageRank, inbound content links and orphans of every page of this state of the graph."""
    depth = nx.multi_source_dijkstra_path_length(graph.links, graph.start) if graph.start else {}
    inbound = Counter(target for _, target in graph.content)
    return Figures(depth, nx.pagerank(graph.followed, alpha=DAMPING), inbound,
                   {url for url in graph.links if not inbound[url] and url not in graph.start})


def marginal_gains(graph: Graph, figures: Figures, pairs: list[Pair], exact_pages: int = EXACT_PAGES) -> list[Gain]:
    """Each pair's gain for its target if it alone were added (see the module docstring)."""
    if not pairs:
        return []
    followed, pages = graph.followed, list(graph.links)
    index = {url: i for i, url in enumerate(pages)}
    if exact := len(pages) <= exact_pages:
        steps = nx.to_numpy_array(followed, nodelist=pages)
        out = steps.sum(axis=1, keepdims=True)
        steps = np.divide(steps, out, out=np.full_like(steps, 1 / len(pages)), where=out > 0)  # no link: anywhere
        inverse = np.linalg.inv(np.identity(len(pages)) - DAMPING * steps.T)
    gains = []
    for source, target in pairs:
        s, t, links = index[source], index[target], followed.out_degree(source)
        if followed.has_edge(source, target):
            carried = 0.0
        elif exact:
            change = steps[s] * links / (links + 1) - steps[s]
            change[t] += 1 / (links + 1)
            carried = inverse[t] @ change / (1 - DAMPING * inverse[s] @ change)
        else:
            carried = 1 / (links + 1) if links else 1 - 1 / len(pages)
        before, via = figures.depth.get(target), figures.depth.get(source)
        after = before if via is None or (before is not None and before <= via + 1) else via + 1
        gains.append(Gain(before, after, DAMPING * figures.pagerank[source] * carried / figures.pagerank[target]))
    return gains


def site_figures(graph: Graph, figures: Figures) -> dict[str, float | None]:
    """The site-level figures, by the name the report shows; depths count reachable pages only."""
    depths = list(figures.depth.values())
    ranks = sorted(figures.pagerank.values(), reverse=True)
    top = max(1, math.ceil(TOP_SHARE * len(ranks)))
    return {
        "pages": len(graph.links),
        "content links": len(graph.content),
        "mean depth": statistics.fmean(depths) if depths else None,
        "median depth": statistics.median(depths) if depths else None,
        f"deeper than {DEEP} clicks": sum(depth > DEEP for depth in depths),
        "unreachable from the start": len(graph.links) - len(depths),
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


def measure_impact(db: sqlite_utils.Database, approved_only: bool = False) -> Impact:
    """Measure the crawl's graph with and without the queue, store the figures and gains, return them."""
    if "suggestions" not in db.table_names():
        raise NotAnalysed("this database has no review queue yet; run `scrapy analyze DB` on it first")
    graph = load_graph(db)
    statuses = ("approved",) if approved_only else QUEUED
    suggestions = [(source, target, status) for source, target, status in
                   db.execute("SELECT source, target, status FROM suggestions")
                   if source in graph.links and target in graph.links]  # pages gone since the analysis are left out
    applied = [(source, target) for source, target, status in suggestions if status in statuses]
    after_graph = graph.with_links(applied)
    before, after = measure(graph), measure(after_graph)
    site_before, site_after = site_figures(graph, before), site_figures(after_graph, after)
    pairs = [(source, target) for source, target, _ in suggestions]
    impact = Impact(graph, before, after, statuses, len(applied),
                    {name: (site_before[name], site_after[name]) for name in site_before},
                    dict(zip(pairs, marginal_gains(graph, before, pairs))))
    save(db, impact)
    return impact


def save(db: sqlite_utils.Database, impact: Impact) -> None:
    """Rewrite the impact tables whole and every suggestion's gain (NULL for one whose pages are gone)."""
    before, after = impact.before, impact.after
    replace_table(db, "impact", [{
        "url": url, "title": impact.graph.titles[url], "sitemap_only": int(url in impact.graph.sitemap_only),
        "depth_before": before.depth.get(url), "depth_after": after.depth.get(url),
        "pagerank_before": before.pagerank[url], "pagerank_after": after.pagerank[url],
        "inbound_before": before.inbound[url], "inbound_after": after.inbound[url],
        "orphan_before": int(url in before.orphans), "orphan_after": int(url in after.orphans),
    } for url in sorted(impact.graph.links)], IMPACT)
    replace_table(db, "impact_summary", [{"figure": name, "before": values[0], "after": values[1]}
                                         for name, values in impact.site.items()],
                  {"figure": str, "before": float, "after": float})
    add_missing_columns(db["suggestions"], SUGGESTIONS)
    with db.conn:
        db.execute("UPDATE suggestions SET depth_before = NULL, depth_after = NULL, pagerank_gain = NULL")
        db.conn.executemany(
            "UPDATE suggestions SET depth_before = ?, depth_after = ?, pagerank_gain = ? WHERE source = ? AND target = ?",
            [(gain.depth_before, gain.depth_after, gain.pagerank, *pair) for pair, gain in impact.gains.items()])


def figure(name: str, value: float | None) -> str:
    """A site figure as people read it: counts whole, shares in percent, the rest to two decimals."""
    if value is None:
        return "none"
    if "share" in name:
        return f"{value:.1%}"
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"
