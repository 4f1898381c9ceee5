"""The impact report: one self-contained HTML file, for reading what the review queue would change.

It makes no request: system fonts, inline CSS, inline SVG charts (charts.py), no script at all, and
a Content-Security-Policy that would block any. Every string from a crawled page or from the
queue goes through html.escape, so a page titled `<script>alert(1)</script>` shows as text. A few
functions, one per section, stand in for a template engine.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

import sqlite_utils

from analysis.charts import bars, hbars
from analysis.export import QUEUE_ORDER, gain_text, replace_file
from analysis.impact import DEEP, Impact, figure
from analysis.load import crawl_note

TOP_SUGGESTIONS = 25
LIST_LIMIT = 50  # rows per list of pages
TOP_TARGETS = 12
PAGERANK_BINS = (0.25, 0.5, 1, 2, 4, 8)  # PageRank times the number of pages: 1 is an average page's share
SIMILARITY_STEP = 0.05
BAND_KEYS = ("report:threshold", "report:max_similarity")
SCOPE_KEY = "report:scope"
LANGUAGES_KEY = "report:languages"
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;color:#1a202c;max-width:1060px;margin:2em auto;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #e2e8f0}
table{border-collapse:collapse;width:100%;font-size:.92em}th,td{text-align:left;padding:.3em .5em;vertical-align:top}
tr:nth-child(even){background:#f7fafc}th{background:#edf2f7}td.n{text-align:right;white-space:nowrap}
mark{background:#fefcbf;font-weight:600}.muted{color:#718096}a,.muted,td.s{overflow-wrap:anywhere}a{color:#2b6cb0}th.p{width:17%}
.note{background:#fffbeb;border-left:4px solid #d69e2e;padding:.4em .8em}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:1em}
figure{margin:0}figcaption{font-weight:600;margin-bottom:.3em}svg.chart{width:100%;height:auto;font-size:11px}
"""


def save_report_settings(db: sqlite_utils.Database, band: tuple[float, float], scope: str, languages: str) -> None:
    """Keep what the report says of the analysis for every later report: its band (threshold, max similarity), `scope`
    what its --exclude and --targets left ("" for none: InScope.line) and `languages` the pages of each language where
    there are several (Corpus.languages_line)."""
    with db.atomic():
        db["meta"].upsert_all([{"key": key, "value": str(value)} for key, value in
                               [*zip(BAND_KEYS, band), (SCOPE_KEY, scope), (LANGUAGES_KEY, languages)]], pk="key")


def write_report(db: sqlite_utils.Database, impact: Impact, path: Path) -> Path:
    """Write the report, with the last analysis's settings (save_report_settings); the file is whole or as it was."""
    stored = dict(db.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?)",
                             [*BAND_KEYS, SCOPE_KEY, LANGUAGES_KEY]).fetchall())
    band = (float(stored[BAND_KEYS[0]]), float(stored[BAND_KEYS[1]])) if all(key in stored for key in BAND_KEYS) else None
    with replace_file(path) as handle:
        handle.write(render(db, impact, band, stored.get(SCOPE_KEY), stored.get(LANGUAGES_KEY)))
    return path


def render(db: sqlite_utils.Database, impact: Impact, band: tuple[float, float] | None, scope: str | None = None,
           languages: str | None = None) -> str:
    sections = [header(db, impact, scope, languages), figures(impact), charts(db, impact, band), suggestions(db, impact),
                cannibalisation(db), vague_links(db, impact), orphans(impact), hard_to_reach(impact)]
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Internal links: impact report for {escape(', '.join(sorted(impact.graph.start)))}</title>"
            f"<style>{STYLE}</style></head>\n"
            "<body>\n" + "\n".join(sections) + "\n</body></html>\n")


def header(db: sqlite_utils.Database, impact: Impact, scope: str | None = None, languages: str | None = None) -> str:
    crawl = db.execute("SELECT finished_at FROM crawls ORDER BY id DESC LIMIT 1").fetchone()
    queued = db.execute("SELECT count(*) FROM suggestions").fetchone()[0]
    start = ", ".join(link(url) for url in sorted(impact.graph.start)) or "No start URL"
    crawled = "never crawled" if crawl is None else f"crawled {escape(crawl[0])}" if crawl[0] else "crawl not finished"
    note = crawl_note(db)
    return (f"<h1>Internal links: impact report</h1><p>{start}, {crawled}. "
            f"&ldquo;After&rdquo; adds the {impact.applied} {' and '.join(impact.statuses)} suggestions of the "
            f"{queued} in the review queue as links in their sources' main content.</p>"
            + (f"<p class=note>Note: {escape(note)}</p>" if note else "")
            + (f"<p class=note>The queue keeps to a scope (--exclude, --targets): {escape(scope)}.</p>" if scope else "")
            + (f"<p class=note>Languages: {escape(languages)}.</p>" if languages else ""))


def figures(impact: Impact) -> str:
    rows = []
    for name, (before, after) in impact.site.items():
        change = "" if before is None or after is None else figure(name, after - before)
        rows.append(f"<tr><td>{escape(name)}</td><td class=n>{figure(name, before)}</td><td class=n>{figure(name, after)}</td>"
                    f"<td class=n>{'+' if change and after > before else ''}{change}</td></tr>")
    return ("<h2>The site, before and after</h2><table><tr><th>figure</th><th>before</th><th>after</th><th>change</th></tr>"
            + "".join(rows) + "</table><p class=muted>Depth counts clicks from the start page (a redirect is not one); "
            "PageRank is internal (damping 0.85), Gini 0 when every page holds the same share; an orphan has no link from "
            "another page's main content.</p>")


def charts(db: sqlite_utils.Database, impact: Impact, band: tuple[float, float] | None) -> str:
    made = [depth_chart(impact), pagerank_chart(impact), similarity_chart(db, band), targets_chart(db, impact)]
    return "<h2>Charts</h2><div class=charts>" + "".join(
        f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>" for caption, svg in made) + "</div>"


def depth_chart(impact: Impact) -> tuple[str, str]:
    deepest = max([*impact.before.depth.values(), *impact.after.depth.values(), 0])
    categories = [str(depth) for depth in range(deepest + 1)] + ["none"]
    series = {}
    for name, state in (("before", impact.before), ("after", impact.after)):
        counts = Counter(state.depth.get(url, deepest + 1) for url in impact.graph.pages)
        series[name] = [counts[depth] for depth in range(deepest + 2)]
    return "Pages by click depth (none: unreachable from the start)", bars("Pages by click depth", categories, series)


def pagerank_chart(impact: Impact) -> tuple[str, str]:
    edges = (0, *PAGERANK_BINS, math.inf)
    categories = [f"< {PAGERANK_BINS[0]:g}", *(f"{low:g}-{high:g}" for low, high in zip(PAGERANK_BINS, PAGERANK_BINS[1:])),
                  f"{PAGERANK_BINS[-1]:g}+"]
    series = {}
    for name, state in (("before", impact.before), ("after", impact.after)):
        pages = len(state.pagerank)
        series[name] = [sum(low <= rank * pages < high for rank in state.pagerank.values()) for low, high in zip(edges, edges[1:])]
    return ("Pages by PageRank, in multiples of an average page's share",
            bars("Pages by PageRank", categories, series))


def similarity_chart(db: sqlite_utils.Database, band: tuple[float, float] | None) -> tuple[str, str]:
    kinds = {"suggestions": [value for (value,) in db.execute("SELECT similarity FROM suggestions")],
             "cannibalisation pairs": [value for (value,) in db.execute("SELECT similarity FROM cannibalization")]
             if "cannibalization" in db.table_names() else []}
    low = min((similarity_bin(value) for found in [*kinds.values(), band or []] for value in found), default=0)
    last = round(1 / SIMILARITY_STEP) - 1  # the last bin holds 1.0 too
    categories = [f"{i * SIMILARITY_STEP:.2f}" for i in range(low, last + 1)]
    series = {}
    for name, found in kinds.items():
        counts = Counter(min(similarity_bin(value), last) for value in found)
        series[name] = [counts[i] for i in range(low, last + 1)]
    markers = {} if band is None else {f"threshold {band[0]:.2f}": band[0] / SIMILARITY_STEP - low,
                                       f"max {band[1]:.2f}": band[1] / SIMILARITY_STEP - low}
    return ("Pairs by similarity (bins from their lower edge)",
            bars("Pairs by similarity", categories, series, markers))


def similarity_bin(value: float) -> int:
    return math.floor(value / SIMILARITY_STEP + 1e-9)  # 0.35 in the 0.35 bin, whatever the float rounding


def targets_chart(db: sqlite_utils.Database, impact: Impact) -> tuple[str, str]:
    queued = Counter(target for (target,) in db.execute(
        f"SELECT target FROM suggestions WHERE status IN ({','.join('?' * len(impact.statuses))})", impact.statuses))
    wanted = dict(db.execute("SELECT target, wanted FROM hubs")) if "hubs" in db.table_names() else {}
    top = sorted(queued.keys() | wanted.keys(), key=lambda url: (-wanted.get(url, queued[url]), -queued[url], url))[:TOP_TARGETS]
    return ("Most-suggested targets: pairs found, and kept under the per-target cap (hubs)",
            hbars("Most-suggested targets", [impact.graph.titles.get(url, url) for url in top],
                  {"pairs found": [wanted.get(url, queued[url]) for url in top], "in the queue": [queued[url] for url in top]}))


def suggestions(db: sqlite_utils.Database, impact: Impact) -> str:
    rows = list(db.query(
        f"SELECT * FROM suggestions WHERE status IN ({','.join('?' * len(impact.statuses))}) ORDER BY {QUEUE_ORDER} LIMIT ?",
        [*impact.statuses, TOP_SUGGESTIONS]))
    body = "".join(
        f"<tr><td class=n>{rank}</td><td>{page_link(impact, row['source'])}</td><td>{link(row['target'], row['target_title'])}</td>"
        f"<td class=s>{in_context(row['anchor'], row['context'])}</td><td class=n>{row['similarity']:.2f}</td><td class=n>{row['score']:.3f}</td>"
        f"<td>{escape(gain_text(row['depth_before'], row['depth_after'], row['pagerank_gain']))}</td><td>{escape(row['status'])}</td></tr>"
        for rank, row in enumerate(rows, 1))
    return (f"<h2>Top {len(rows)} suggestions</h2><table><tr><th>#</th><th class=p>from</th><th class=p>to</th><th>anchor, in its sentence</th>"
            "<th>similarity</th><th>score</th><th>gain if alone</th><th>status</th></tr>" + body + "</table>"
            "<p class=muted>Gain: the target's click depth and PageRank with this link alone added.</p>")


def in_context(anchor: str, context: str | None) -> str:
    """The sentence with the anchor marked; a title anchor, which has no sentence, on its own."""
    at = (context or "").find(anchor)
    if at < 0:
        return f"<mark>{escape(anchor)}</mark> <span class=muted>(the target's title: no phrase of the source fits)</span>"
    return marked(context, at, len(anchor))


def cannibalisation(db: sqlite_utils.Database) -> str:
    found = "cannibalization" in db.table_names()
    rows = list(db.query("SELECT * FROM cannibalization ORDER BY similarity DESC LIMIT ?", [LIST_LIMIT])) if found else []
    if not rows:
        return "<h2>Cannibalisation</h2><p>No pair of pages is similar enough to compete for the same searches.</p>"
    return ("<h2>Cannibalisation</h2><p>Near-duplicate pages: merge them, or make each clearly about its own topic.</p>"
            "<table><tr><th>page</th><th>other</th><th>similarity</th></tr>" + "".join(
                f"<tr><td>{link(row['page'], row['page_title'])}</td><td>{link(row['other'], row['other_title'])}</td>"
                f"<td class=n>{row['similarity']:.3f}</td></tr>" for row in rows) + "</table>")


def vague_links(db: sqlite_utils.Database, impact: Impact) -> str:
    """The links anchored on "here" and the like (vague.py), each marked in its sentence, with the better anchor."""
    title = "<h2>Links anchored on &ldquo;here&rdquo;</h2>"
    total = db["vague_links"].count if "vague_links" in db.table_names() else 0
    if not total:
        return title + "<p>No content link is anchored on &ldquo;here&rdquo;, &ldquo;read more&rdquo; or the like.</p>"
    rows = db.query("SELECT * FROM vague_links ORDER BY source, offset LIMIT ?", [LIST_LIMIT])
    body = "".join(
        f"<tr><td>{page_link(impact, row['source'])}</td><td>{link(row['target'], row['target_title'])}</td>"
        f"<td class=s>{marked(row['context'], row['offset'] - row['context_offset'], len(row['anchor']))}</td>"
        f"<td>{escape(row['better_anchor']) if row['better_anchor'] else '<span class=muted>none in the sentence</span>'}</td></tr>"
        for row in rows)
    more = f" The first {LIST_LIMIT} are listed." if total > LIST_LIMIT else ""
    return (title + f"<p>{total} content links say nothing of their target: a search engine and a screen reader learn "
            f"nothing from &ldquo;here&rdquo;. Link a phrase that names the page instead.{more}</p><table><tr><th>from</th>"
            f"<th>to</th><th>link, in its sentence</th><th>better anchor</th></tr>{body}</table>")


def marked(sentence: str, at: int, length: int) -> str:
    """The sentence, escaped, with its characters at:at + length marked."""
    return f"{escape(sentence[:at])}<mark>{escape(sentence[at:at + length])}</mark>{escape(sentence[at + length:])}"


def orphans(impact: Impact) -> str:
    pages = sorted(impact.before.orphans, key=lambda url: (url in impact.after.orphans, url))
    fixed = len(impact.before.orphans - impact.after.orphans)
    return page_table(
        impact, "Orphans", pages,
        f"{len(pages)} pages have no link from another page's main content; the queue links {fixed} of them.",
        [("sitemap only", lambda url: "yes" if url in impact.graph.sitemap_only else ""),
         ("content links after", lambda url: str(impact.after.inbound[url]))])


def hard_to_reach(impact: Impact) -> str:
    before, after = impact.before.depth, impact.after.depth
    pages = sorted((url for url in impact.graph.pages if before.get(url, math.inf) > DEEP),
                   key=lambda url: (-before.get(url, math.inf), url))
    return page_table(
        impact, "Hard to reach", pages,
        f"{len(pages)} pages are more than {DEEP} clicks from the start page, or unreachable from it.",
        [("depth before", lambda url: str(before.get(url, "none"))), ("depth after", lambda url: str(after.get(url, "none")))])


def page_table(impact: Impact, title: str, pages: list[str], lead: str, columns: list[tuple[str, Callable[[str], str]]]) -> str:
    more = f" The first {LIST_LIMIT} are listed." if len(pages) > LIST_LIMIT else ""
    rows = "".join("<tr><td>" + page_link(impact, url) + "</td>" + "".join(f"<td>{escape(cell(url))}</td>" for _, cell in columns)
                   + "</tr>" for url in pages[:LIST_LIMIT])
    header = "".join(f"<th>{escape(name)}</th>" for name, _ in columns)
    return f"<h2>{escape(title)}</h2><p>{escape(lead + more)}</p>" + (
        f"<table><tr><th>page</th>{header}</tr>{rows}</table>" if pages else "")


def page_link(impact: Impact, url: str) -> str:
    return link(url, impact.graph.titles.get(url))


def link(url: str, title: str | None = None) -> str:
    """The page's title linked to its URL (plain text unless the URL is http or https), the URL's path beneath."""
    shown = escape(title or url)
    if not url.startswith(("http://", "https://")):
        return shown
    return f'<a href="{escape(url)}">{shown}</a>' + (f"<br><span class=muted>{escape(urlsplit(url).path)}</span>" if title else "")
