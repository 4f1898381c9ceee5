"""Stage 1, load: the pages worth linking and the link graph between them, from a crawl database.

A candidate page is HTML, status 200, indexable, self-canonical, has enough main text and is an
article rather than a listing (its main text is not mostly link text). Every
link is resolved through redirects and canonicals, so a link to a URL that redirects or
canonicalises to B counts as a link to B; a page served word for word under two URLs is one page
(first_copies).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain

import json
import re
from urllib.parse import urlsplit

import numpy as np
import sqlite_utils

from analysis.citations import Citations, numbered_by_convention, unnumbered
from analysis.compiled import compiled
from analysis.texts import PageTexts

Pair = tuple[int, int]
# A page whose main text is more than this share link text is a listing (home, archive, tag page),
# not an article: it is neither source nor target of an editorial link. Articles measure under 0.05,
# listings over 0.18 on the demo site and the shared blogs (see BENCHMARKS.md, "Quality").
MAX_LINK_DENSITY = 0.15
# A page whose main text is more than MAX_LINK_DENSITY the anchors of links the extractor kept as text
# but not as links (post titles in the headings of a category or author page: the crawl files those
# links under "other") lists other pages too. It stays a target (editors link a series or an author
# page) but is never a source: its text is generated, with no sentence to put a link in. Anchors
# shorter than this are left out of that count ("Home", "Next" are found in any text).
LISTED_ANCHOR_CHARS = 12
# A line of main text found word for word on this many pages or more is the site's template (a release post's closing
# lines, a help popup the extractor kept), no place for an editor's link: the backtest counts a sentence that links
# one target from three pages boilerplate the same way.
TEMPLATE_LINE_PAGES = 3
LANGUAGE_TAG = re.compile(r"[a-z]{2,3}(-[a-z0-9]{1,8})*")  # BCP 47, in lower case: a language (ISO 639), then subtags
COPY_MIN_WORDS = 50  # words of main text from which two pages with the same title and text are one page (first_copies)
TITLE_SEPARATORS = re.compile(r"\s+[|\u2013\u2014-]\s+")  # "Post title | Site name", "Post - Site"
URL_DATE = re.compile(r"/((?:19|20)\d{2})/(0[1-9]|1[0-2])/(?:(0[1-9]|[12]\d|3[01])/)?")  # /2023/07/13/post.html, /2023/07/post/


def pair_codes(pairs: Collection[Pair], pages: int) -> np.ndarray:
    """(source, target) pairs as sorted numbers source * pages + target: what numpy sorts and searches (made without
    Python arithmetic per pair)."""
    ends = np.fromiter(chain.from_iterable(pairs), dtype=np.int64, count=2 * len(pairs)).reshape(-1, 2)
    return np.sort(ends[:, 0] * pages + ends[:, 1])


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted. np.unique without return_* hashes them (numpy 2.3 on), 60x slower than a sort on
    900k pair codes here (BENCHMARKS.md, "Analysis"), and np.isin and np.setdiff1d call it."""
    ordered = np.sort(values)
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered


def run_items(first: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, place) of the items of runs laid end to end: run i is places first[i], ..., first[i] + counts[i] - 1."""
    owner = np.repeat(np.arange(len(first)), counts)
    return owner, np.arange(len(owner)) + np.repeat(first - (np.cumsum(counts) - counts), counts)


def among(values: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Which values are in members (sorted), by binary search: compiled, so that no array of places as large as the
    values is made (two of 352 MB each for the 44M pairs of 1,000,000 pages)."""
    found = np.empty(len(values), dtype=bool)
    _among(np.ascontiguousarray(values), np.ascontiguousarray(members), found)
    return found


@compiled
def _among(values: np.ndarray, members: np.ndarray, found: np.ndarray) -> None:
    """found[i]: values[i] is in members (sorted); a value no smaller than the one before is searched for past it only."""
    low = 0
    for at in range(len(values)):
        if at and values[at] < values[at - 1]:
            low = 0
        low += np.searchsorted(members[low:], values[at])
        found[at] = low < len(members) and members[low] == values[at]


class EmptyCrawl(ValueError):
    """Too few pages to analyse; the message says why and what to do."""


@dataclass
class InboundAnchors:
    """(target, anchor text) of each content link to a candidate page, as two columns: a list of (int, str) tuples
    would hold ~70 bytes more a link (5.4M links at 1M synthetic pages: ~0.4 GB)."""

    targets: array = field(default_factory=lambda: array("q"))
    texts: list[str] = field(default_factory=list)

    def append(self, target: int, text: str) -> None:
        self.targets.append(target)
        self.texts.append(text)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return zip(self.targets, self.texts)


@dataclass
class Spans:
    """(start, end) character spans of each page's text, as arrays: page p's are spans[starts[p]:starts[p + 1]], in
    the order given. A list of tuples a page would hold ~130 bytes a span (5.4M links at 1M synthetic pages: ~0.7 GB)."""

    starts: np.ndarray  # (pages + 1,) int64
    spans: np.ndarray  # (spans, 2) int64

    @classmethod
    def of(cls, pages: int, page: Collection[int], start: Collection[int], end: Collection[int]) -> Spans:
        """The spans (page[i], start[i], end[i]), by page, each page's in the order given."""
        page = np.asarray(page, dtype=np.int64)
        order = np.argsort(page, kind="stable")
        spans = np.stack([np.asarray(start, dtype=np.int64), np.asarray(end, dtype=np.int64)], axis=1).reshape(-1, 2)[order]
        return cls(np.searchsorted(page[order], np.arange(pages + 1)), spans)

    @classmethod
    def empty(cls, pages: int) -> Spans:
        return cls(np.zeros(pages + 1, dtype=np.int64), np.zeros((0, 2), dtype=np.int64))

    @classmethod
    def per_page(cls, spans: list[list[tuple[int, int]]]) -> Spans:
        """From a list of each page's spans."""
        page = np.repeat(np.arange(len(spans)), [len(own) for own in spans])
        flat = np.array([span for own in spans for span in own], dtype=np.int64).reshape(-1, 2)
        return cls.of(len(spans), page, flat[:, 0], flat[:, 1])

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, page: int) -> list[tuple[int, int]]:
        return [(start, end) for start, end in self.spans[self.starts[page]:self.starts[page + 1]].tolist()]

    def __iter__(self) -> Iterator[list[tuple[int, int]]]:
        return (self[page] for page in range(len(self)))

    def in_pages(self, pages: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(place of the page among pages, the spans) of every span of these pages, by place."""
        pages = np.asarray(pages, dtype=np.int64)
        first = self.starts[pages]
        place, at = run_items(first, self.starts[pages + 1] - first)
        return place, self.spans[at]


@dataclass
class SiteLinks:
    """Every internal link between two of the crawl's live HTML pages that are their own canonicals (`pages`, sorted),
    resolved through redirects and canonicals: the graph impact.py measures. Read with the corpus's links, so that an
    analysis reads the links table once (a second read was ~3 s of the impact stage at 100,000 synthetic pages)."""

    pages: list[str]
    codes: np.ndarray  # source * len(pages) + target of each link (rows of pages), one a link, not distinct
    kinds: np.ndarray  # int8 per link: 2 if from the content, + 1 if it passes PageRank (neither it nor its page nofollow)


@dataclass
class Corpus:
    """The candidate pages (index i everywhere below) and what the analysis needs to know of them."""

    urls: list[str]
    titles: list[str]
    texts: PageTexts  # main content (a list is taken in: tests, benchmarks)
    hashes: list[str]
    depths: list[int | None]
    published: list[str | None]
    inbound: list[int]  # content links from other candidate pages
    content_codes: np.ndarray  # pairs whose source already links the target from its main content, as pair_codes
    template_codes: np.ndarray  # pairs linked only from nav, header, footer or sidebars, as pair_codes (a template
    # repeats its links on every page: at 100,000 pages a set of tuples would hold millions of them)
    link_spans: Spans  # per source: (start, end) of its content links in its text
    orphans: list[dict] = field(default_factory=list)
    listings: np.ndarray | None = None  # per page: it lists other pages, a target only (LISTED_ANCHOR_CHARS); None: none does
    inbound_anchors: InboundAnchors = field(default_factory=InboundAnchors)  # of every content link to a page
    headings: list[str] = field(default_factory=list)  # per page: its main content's headings, one a line ("": none known)
    code_spans: Spans | None = None  # per page: (start, end) of its code blocks in its text; None: none
    template_spans: Spans | None = None  # per page: (start, end) of its template_lines; None: none
    site: SiteLinks | None = None  # the whole site's link graph, for impact.py; None: not read
    copies: list[tuple[int, str]] = field(default_factory=list)  # (page, another URL that serves it word for word: first_copies)
    languages: list[str] = field(default_factory=list)  # per page: its declared language tag (language_of), "" where none

    def __post_init__(self) -> None:
        if not isinstance(self.texts, PageTexts):
            self.texts = PageTexts(self.texts)
        if self.listings is None:
            self.listings = np.zeros(len(self.urls), dtype=bool)
        if self.code_spans is None:
            self.code_spans = Spans.empty(len(self.urls))
        if self.template_spans is None:
            self.template_spans = Spans.empty(len(self.urls))
        if not self.languages:
            self.languages = [""] * len(self.urls)
        if not self.headings:
            self.headings = [""] * len(self.urls)

    def __len__(self) -> int:
        return len(self.urls)

    def linked(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Which (sources[i], targets[i]) pairs are linked from the source's main content."""
        return among(sources * len(self) + targets, self.content_codes)

    def linked_pairs(self) -> set[Pair]:
        """content_codes as a set of (source, target): for small sites and tests (a tuple a link)."""
        return set(zip(*(part.tolist() for part in np.divmod(self.content_codes, len(self)))))

    @property
    def index(self) -> dict[str, int]:
        return {url: i for i, url in enumerate(self.urls)}

    @cached_property
    def citations(self) -> Citations:
        """Which page each number at the head of a title names, for citations by number ("see Section 8.16.6")."""
        return Citations(self.titles)

    @cached_property
    def names(self) -> list[str]:
        """The titles without a section number at their head (citations.unnumbered): the title fallback's text. The
        target's title words keep the number, and so do the names said where numbers are the site's convention
        (written_titles): a manual's editors cite a page with it ("Section 7.35, “Remove Alpha Channel”"), and without
        it recall fell (BENCHMARKS.md, "Quality")."""
        return unnumbered(self.titles)

    @cached_property
    def written_titles(self) -> list[str]:
        """The titles as the site's editors write them out in prose, to find where a source names a page: with their
        section numbers where numbers are the site's convention ("Section 7.35, “Remove Alpha Channel”"; names: the
        menu paths that write "Remove Alpha Channel" would name the page too), else its names ("Virtual Environments
        and Packages": a site whose few chapters are numbered cites them by name)."""
        return self.titles if numbered_by_convention(self.titles) else self.names

    @cached_property
    def language_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """Per page, the number of its language tag (the tags sorted), and which two numbers may be paired
        (same_language): only pages of those are paired (candidates.py). Made once (0.4 s at 1,000,000 pages)."""
        tags, groups = np.unique(np.array(self.languages, dtype=object), return_inverse=True)
        return groups, np.array([[same_language(one, other) for other in tags] for one in tags], dtype=bool).reshape(len(tags), len(tags))

    @property
    def multilingual(self) -> bool:
        """Pages declare two languages (or two regions of one) that are not paired."""
        return not self.language_groups[1].all()

    def one_language(self, pairs: np.ndarray) -> np.ndarray:
        """Which pairs (pair_codes) join two pages that may be paired (same_language)."""
        groups, compatible = self.language_groups
        return compatible[groups[pairs // len(self)], groups[pairs % len(self)]]

    def languages_line(self) -> str | None:
        """The pages of each language, for the summary and the report, where the site has several; else None."""
        if not self.multilingual:
            return None
        counts = Counter(self.languages)
        each = [f"{language} {count}" for language, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                if language] + ([f"none declared {counts['']}"] if counts[""] else [])
        return f"{', '.join(each)} pages: a page is paired only with pages of its own language (and region), or of none declared"


def language_of(declared: str | None) -> str:
    """The language tag a page declares (<html lang>, else its Content-Language header) in lower case ("en_GB" is
    "en-gb"); "" where it declares none, an undetermined language ("und"), several at once ("de, en": a header may) or
    what is no language tag."""
    tag = (declared or "").strip().lower().replace("_", "-")
    return tag if LANGUAGE_TAG.fullmatch(tag) and tag.split("-")[0] != "und" else ""


def same_language(one: str, other: str) -> bool:
    """Pages of these two language tags may be paired: one declares none, or one tag is the other or starts it (as a
    language range matches a tag, RFC 4647): "en" goes with "en-us" and with "en-gb", but "en-us" and "en-gb" are two
    regional sections of an international site, and "de" is another language."""
    return not one or not other or one == other or one.startswith(other + "-") or other.startswith(one + "-")


def crawl_note(db: sqlite_utils.Database) -> str | None:
    """What the analysis misses when the latest crawl did not finish, in a line for the summary and the report; None
    when it finished (or the database records no crawl)."""
    crawl = db.execute("SELECT id, status, pages FROM crawls ORDER BY id DESC LIMIT 1").fetchone()
    if crawl is None or crawl[1] == "finished":
        return None
    crawl_id, status, pages = crawl
    if pages is None:  # set when a crawl closes
        pages = db.execute("SELECT count(*) FROM pages WHERE last_seen_crawl = ?", [crawl_id]).fetchone()[0]
    if status == "running":
        return (f"crawl #{crawl_id} has not finished (it is running, or was stopped before it could close): this analysis "
                f"sees the {pages} pages stored so far, the newest without a click depth; analyse again once it ends")
    missed = "pages it did not reach are missing, or as an earlier crawl stored them"
    if status == "capped":
        return f"crawl #{crawl_id} stopped at max_pages ({pages} pages): {missed}; crawl with a higher max_pages to cover the site"
    return f"crawl #{crawl_id} ended early ({status}, {pages} pages): {missed}; run the same `scrapy crawl site` command again to complete it"


def resolver(db: sqlite_utils.Database) -> dict[str, str]:
    """Where each crawled URL really points: the end of its redirect chain, then its canonical, then the first of its
    exact copies (first_copies)."""
    return resolution(db)[0]


def resolution(db: sqlite_utils.Database) -> tuple[dict[str, str], dict[str, str]]:
    """resolver's mapping, and the copies it folds into another page (copy -> that page), for the report."""
    final = {url: target for url, target in db.execute("SELECT url, final_url FROM pages WHERE gone = 0 AND final_url IS NOT NULL")}
    pages = db.execute(  # the live pages, with what first_copies asks of them
        "SELECT url, content_hash, depth, NOT noindex AND content_hash IS NOT NULL AND word_count >= ? "
        "FROM pages WHERE gone = 0 AND status = 200 AND is_html = 1", [COPY_MIN_WORDS]
    ).fetchall()
    live = {url for url, *_ in pages}
    canonical = {url: target for url, target in db.execute("SELECT url, canonical FROM pages WHERE gone = 0 AND canonical IS NOT NULL")}
    resolved = {}
    for url in final.keys() | live:
        target = final.get(url) or url
        if canonical.get(target) in live:
            target = canonical[target]
        resolved[url] = target
    first = first_copies(pages, resolved)
    copies = {url: page for url, page in first.items() if url != page}
    return {url: first.get(target, target) for url, target in resolved.items()}, copies


def first_copies(pages: list[tuple[str, str | None, int | None, bool]], resolved: dict[str, str]) -> dict[str, str]:
    """Each indexable page that another one repeats word for word, title and main text (content_hash), with
    COPY_MIN_WORDS words or more and no canonical elsewhere, mapped to the copy a reader would name: the shallowest,
    then the shortest URL ("/" before "/index.html"), then the first by URL. A site that serves one page under two
    URLs without a canonical (a static site's "/" and "/index.html", nearly every documentation book crawled) then
    counts it once, as a canonical would: one source, one target, one count of its inbound links, and no suggestion to
    link the copy a page already links. pages: (url, content_hash, depth, whether it may be a copy) of the live pages."""
    copies: dict[str, list[tuple[bool, int, int, str]]] = {}
    for url, content_hash, depth, may_be_a_copy in pages:
        if may_be_a_copy and resolved.get(url, url) == url:
            copies.setdefault(content_hash, []).append((depth is None, depth or 0, len(url), url))
    return {url: min(group)[3] for group in copies.values() if len(group) > 1 for *_, url in group}


def resolved_rows(resolve: dict[str, str], index: dict[str, int]) -> dict[str, int]:
    """Each crawled URL that resolves (resolver) to a page of the index, with that page's row: a link's two ends in
    one look-up each."""
    return {url: index[target] for url, target in resolve.items() if target in index}


def page_titles(titles: list[str | None], headings: list[str | None], urls: list[str]) -> list[str | None]:
    """Each page's own title: <title> without the site name it shares with many pages, else its h1, else its URL.

    The site name is a title segment (split on " | ", " - ", dashes) found on at least a fifth of the
    pages. None for a page titled by the site name alone: a home or archive page, not an article.
    """
    segmented = [[part.strip() for part in TITLE_SEPARATORS.split(title or "") if part.strip()] for title in titles]
    frequency = Counter(part for parts in segmented for part in set(parts))
    site_names = {part for part, count in frequency.items() if count >= max(3, 0.2 * len(titles))}
    cleaned: list[str | None] = []
    for parts, heading, url in zip(segmented, headings, urls):
        own = [part for part in parts if part not in site_names]
        cleaned.append(" - ".join(own) if own else None if parts else heading or url)
    return cleaned


def url_date(url: str) -> str | None:
    """The date a blog-style URL holds (/2023/07/13/..., /2023/07/...), as YYYY-MM-DD or YYYY-MM; None if it holds none."""
    match = URL_DATE.search(urlsplit(url).path)
    return None if match is None else "-".join(part for part in match.groups() if part)


def template_lines(texts: Sequence[str]) -> Spans:
    """Per text, the (start, end) of each of its lines that TEMPLATE_LINE_PAGES texts or more hold word for word.
    Lines are counted by their hashes: a table of the lines themselves would hold a copy of every text."""
    hashes = array("q")
    for text in texts:
        hashes.extend({hash(line) for line in text.split("\n")})
    values, pages = np.unique(np.frombuffer(hashes, dtype=np.int64), return_counts=True)
    repeated = set(values[pages >= TEMPLATE_LINE_PAGES].tolist())
    spans = array("q")  # text, start, end
    for page, text in enumerate(texts):
        start = 0
        for line in text.split("\n"):
            if hash(line) in repeated and line.strip():
                spans.extend((page, start, start + len(line)))
            start += len(line) + 1
    page, start, end = np.frombuffer(spans, dtype=np.int64).reshape(-1, 3).T
    return Spans.of(len(texts), page, start, end)


def site_pages(db: sqlite_utils.Database, resolve: dict[str, str]) -> list[str]:
    """The live HTML pages that are their own canonicals and no copy of another (first_copies), sorted: the nodes of
    SiteLinks."""
    return [url for (url,) in db.execute("SELECT url FROM pages WHERE gone = 0 AND status = 200 AND is_html = 1 ORDER BY url")
            if resolve.get(url, url) == url]


def read_links(db: sqlite_utils.Database, resolve: dict[str, str]) -> SiteLinks:
    """The site's link graph alone (impact.py, when no analysis read it just before)."""
    return _read_links(db, resolve)[0]


def _read_links(db: sqlite_utils.Database, resolve: dict[str, str], index: dict[str, int] | None = None,
                hidden: set[tuple[str, str]] = frozenset()) -> tuple[SiteLinks, tuple[array, array, array, InboundAnchors]]:
    """The site's links in one pass over the links of live pages, and with the corpus's index (url -> page), the
    corpus's links, `hidden` (source, target) URL pairs left out: (pair codes linked from its content, pair codes
    linked from outside the content (some from it too), (page, start, end) of each content link of a page, the anchors
    of the content links to its pages)."""
    pages = site_pages(db, resolve)
    position = {url: row for row, url in enumerate(pages)}
    index = index or {}
    page_of = {position[url]: page for url, page in index.items()}  # the corpus's pages are site pages
    rows_of = {url: (row, page_of.get(row)) for url, row in resolved_rows(resolve, position).items()}  # where a URL resolves
    nowhere = (None, None)
    codes, kinds, size = array("q"), array("b"), len(pages)
    content, template, spans, inbound_anchors = array("q"), array("q"), array("q"), InboundAnchors()
    last = None
    for source, target, in_content, offset, anchor, external, followed in db.execute(
        "SELECT links.source, links.target, links.region IS 'content', links.text_offset, links.anchor, links.external, "
        "NOT (links.nofollow OR coalesce(pages.nofollow, 0)) "
        "FROM links JOIN pages ON pages.url = links.source WHERE pages.gone = 0 AND pages.status = 200"
    ):
        if source != last:  # a page's links come together: its look-ups once
            last, (a, from_page), i = source, rows_of.get(source, nowhere), index.get(source)
        b, j = nowhere if external else rows_of.get(target, nowhere)
        if a is not None and b is not None and a != b:
            codes.append(a * size + b)
            kinds.append(2 * in_content + followed)
        if not index or hidden and (source, target) in hidden:
            continue
        if i is not None and in_content and offset is not None:
            spans.extend((i, offset, offset + len(anchor or "")))  # no anchor inside any link
        if j is None or from_page == j:
            continue
        if in_content:  # from any live page's content, listings included
            inbound_anchors.append(j, anchor or "")
        if i is not None:
            (content if in_content else template).append(i * len(index) + j)
    return (SiteLinks(pages, np.frombuffer(codes, dtype=np.int64), np.frombuffer(kinds, dtype=np.int8)),
            (content, template, spans, inbound_anchors))


def load_corpus(db: sqlite_utils.Database, min_words: int = 50, hidden: set[tuple[str, str]] = frozenset(),
                languages: bool = True) -> Corpus:
    """Read candidate pages and their resolved links; `hidden` (source, target) URL pairs are treated as unlinked. With
    languages False, the pages' declared languages are not read (--all-languages): every page is paired with any."""
    resolve, copied = resolution(db)
    kept = db["pages"].columns_dict
    headings = "headings" if "headings" in kept else "NULL AS headings"  # a crawl before they were kept
    code = "code_spans" if "code_spans" in kept else "NULL AS code_spans"
    texts, rows = PageTexts(), []
    for row in db.query(
        f"SELECT url, title, h1, main_text, {headings}, {code}, lang, content_hash, depth, published, sitemap_only, "
        "(SELECT coalesce(sum(length(anchor)), 0) FROM links WHERE source = url AND region = 'content') AS link_chars, "
        "(SELECT coalesce(sum(length(anchor)), 0) FROM links WHERE source = url AND region = 'other' AND length(anchor) >= ? "
        "AND instr(main_text, anchor) > 0) AS listed_chars "
        "FROM pages WHERE gone = 0 AND status = 200 AND is_html = 1 AND NOT noindex AND word_count >= ? ORDER BY url",
        [LISTED_ANCHOR_CHARS, min_words],
    ):
        text = row.pop("main_text") or ""  # to the file as it is read: the rows hold no text
        if resolve.get(row["url"], row["url"]) == row["url"] and row["link_chars"] <= MAX_LINK_DENSITY * len(text):
            texts.append(text)
            row["listing"] = row["listed_chars"] > MAX_LINK_DENSITY * len(text)
            rows.append(row)
    titles = page_titles([row["title"] for row in rows], [row["h1"] for row in rows], [row["url"] for row in rows])
    kept = [at for at, title in enumerate(titles) if title is not None]
    rows = [rows[at] | {"title": titles[at]} for at in kept]
    if len(rows) < 2:
        raise EmptyCrawl(
            f"only {len(rows)} indexable HTML page(s) with at least {min_words} words of main content; "
            "crawl more of the site (check max_pages, robots.txt and the start URL) or lower --min-words"
        )
    column = {name: [row[name] for row in rows] for name in rows[0]}
    corpus = Corpus(
        urls=column["url"], titles=column["title"],
        texts=texts if len(kept) == len(texts) else texts.subset(kept), hashes=column["content_hash"], depths=column["depth"],
        published=[date or url_date(url) for date, url in zip(column["published"], column["url"])],
        inbound=[0] * len(rows), content_codes=np.zeros(0, dtype=np.int64), template_codes=np.zeros(0, dtype=np.int64),
        link_spans=Spans.empty(len(rows)), listings=np.array(column["listing"], dtype=bool),
        headings=[text or "" for text in column["headings"]],
        code_spans=Spans.per_page([json.loads(spans) if spans else [] for spans in column["code_spans"]]),
        languages=[language_of(declared) for declared in column["lang"]] if languages else [],
    )
    corpus.template_spans = template_lines(corpus.texts)
    page_of = corpus.index
    corpus.copies = sorted((page_of[page], url) for url, page in copied.items() if page in page_of)
    corpus.site, (content, template, spans, corpus.inbound_anchors) = _read_links(db, resolve, page_of, hidden)
    corpus.content_codes = distinct(np.frombuffer(content, dtype=np.int64))
    template_codes = distinct(np.frombuffer(template, dtype=np.int64))
    corpus.template_codes = template_codes[~among(template_codes, corpus.content_codes)]
    corpus.inbound = np.bincount(corpus.content_codes % len(rows), minlength=len(rows)).tolist()
    page, start, end = np.frombuffer(spans, dtype=np.int64).reshape(-1, 3).T
    corpus.link_spans = Spans.of(len(rows), page, start, end)
    nav_inbound = np.bincount(corpus.template_codes % len(rows), minlength=len(rows)).tolist()
    linked_from_content = np.bincount(np.frombuffer(corpus.inbound_anchors.targets, dtype=np.int64), minlength=len(rows)).tolist()
    corpus.orphans = [
        {"url": url, "title": corpus.titles[j], "depth": corpus.depths[j], "sitemap_only": bool(column["sitemap_only"][j]),
         "template_inbound": nav_inbound[j]}
        for j, url in enumerate(corpus.urls) if not linked_from_content[j]
    ]
    return corpus
