"""The `site` spider: every internal page of a site, its metadata, main text and links.

    scrapy crawl site -a url=https://example.com/ [-a db=PATH] [-a max_pages=N] [-a max_depth=N]
                      [-a sitemap=true|false] [-a allow=host,...] [-a max_query_variants=N] [-a exclude=PATTERN,...]
                      [-a analyze=true|false]

Redirects are not followed by Scrapy's middleware but by this spider, so that every hop is
recorded (including one that leaves the site, which is recorded and not crawled).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import scrapy
from lxml.html import HtmlElement
from parsel import Selector
from scrapy.http import Response
from scrapy.utils.gz import gunzip
from scrapy.utils.response import get_base_url
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from twisted.python.failure import Failure

from linkspider.db import utc_now
from linkspider.extract import parse_html
from linkspider.items import Page, SitemapEntries
from linkspider.reuse import StoredPages, body_hash
from linkspider.urls import database_name, is_http_url, matches, normalize_url, site_key

HTML_TYPES = ("text/html", "application/xhtml+xml")
REDIRECT_STATUSES = {301, 302, 303, 307, 308}
PAGE_META = {"dont_redirect": True, "handle_httpstatus_all": True}


class CrawlArgumentError(ValueError):
    """A spider argument that cannot be used; the message says which and why."""


@dataclass
class CrawlOptions:
    """The spider's arguments, parsed and checked before anything is fetched."""

    start_urls: list[str]
    db: str
    max_pages: int = 0  # 0: no limit
    max_depth: int = 50
    sitemap: bool = True
    max_query_variants: int = 20
    exclude: tuple[str, ...] = ()  # URL patterns (linkspider.urls.matches) neither fetched nor followed
    analyze: bool = False  # read by the crawl command, which analyses the database when the crawl ends
    sites: set[str] = field(default_factory=set)

    HELP = {
        "url": ("URL[,URL]", "start URL(s) (required); the crawl stays on their site"),
        "db": ("PATH", "SQLite database to write (default: <host>.db, a port becoming _PORT)"),
        "max_pages": ("N", "stop scheduling pages after this many (default: 0, no limit)"),
        "max_depth": ("N", "follow no links from pages this many clicks deep (default: 50)"),
        "sitemap": ("true|false", "seed from robots.txt sitemaps and /sitemap.xml too (default: true)"),
        "allow": ("HOST[,HOST]", "more hosts that belong to the site (default: none)"),
        "max_query_variants": ("N", "distinct query strings crawled per path (default: 20)"),
        "exclude": ("PATTERN[,PATTERN]", "URLs whose path (with its query) or whole URL matches a shell-style pattern, "
                                         "such as /tag/* or *?sort=*, are neither fetched nor followed (default: none)"),
        "analyze": ("true|false", "analyse the database when the crawl ends, as `scrapy analyze DB` with its defaults "
                                  "would (default: false)"),
    }
    ARGUMENTS = tuple(HELP)

    @classmethod
    def parse(cls, url: str | None = None, db: str | None = None, max_pages: str | int = 0, max_depth: str | int = 50,
              sitemap: str | bool = True, allow: str = "", max_query_variants: str | int = 20, exclude: str = "",
              analyze: str | bool = False) -> CrawlOptions:
        """Check the `-a` arguments; raise CrawlArgumentError with a one-line reason."""
        if not url or not str(url).strip():
            raise CrawlArgumentError("missing start URL: give one with -a url=https://example.com/")
        start_urls = [part.strip() for part in str(url).split(",") if part.strip()]
        for start in start_urls:
            if not is_http_url(start):
                raise CrawlArgumentError(f"not an http(s) URL: {start!r} (expected something like https://example.com/)")
        options = cls(
            start_urls=[normalize_url(start) for start in start_urls],
            db=db or database_name(start_urls[0]),
            max_pages=_non_negative_int("max_pages", max_pages),
            max_depth=_non_negative_int("max_depth", max_depth),
            sitemap=_boolean("sitemap", sitemap),
            max_query_variants=_non_negative_int("max_query_variants", max_query_variants),
            exclude=tuple(pattern.strip() for pattern in str(exclude).split(",") if pattern.strip()),
            analyze=_boolean("analyze", analyze),
        )
        for start in options.start_urls:
            if options.excludes(start):
                raise CrawlArgumentError(f"the start URL {start} matches -a exclude={exclude}: nothing would be crawled")
        _check_database_path(options.db)
        options.sites = {site_key(start) for start in options.start_urls}
        options.sites |= {site_key(host.strip()) for host in str(allow).split(",") if host.strip()}
        return options

    def excludes(self, url: str) -> bool:
        return any(matches(url, pattern) for pattern in self.exclude)


class SiteSpider(scrapy.Spider):
    """Crawl one site breadth-first, staying on its hosts, and yield a Page per URL."""

    name = "site"
    custom_settings = {"ITEM_PIPELINES": {"pipelines.sqlite.SQLitePipeline": 300}}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        known = CrawlOptions.ARGUMENTS
        self.options = CrawlOptions.parse(**{key: value for key, value in kwargs.items() if key in known})
        super().__init__(*args, **{key: value for key, value in kwargs.items() if key not in known})
        self.seen: set[str] = set()
        self.excluded: set[str] = set()  # URLs that -a exclude kept from being fetched
        self.query_variants: dict[str, set[str]] = defaultdict(set)
        self.stored = StoredPages(self.options.db)

    def closed(self, reason: str) -> None:
        self.crawler.stats.set_value("linkspider/excluded", len(self.excluded))  # for the crawl's summary
        self.stored.close()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.options.start_urls:
            if request := self._page_request(url, depth=0, priority=100):
                yield request
        if self.options.sitemap:
            for origin in {f"{urlsplit(url).scheme}://{urlsplit(url).netloc}" for url in self.options.start_urls}:
                yield scrapy.Request(f"{origin}/robots.txt", self.parse_robots, meta=PAGE_META, priority=50)
                yield self._sitemap_request(f"{origin}/sitemap.xml")

    def is_internal(self, url: str) -> bool:
        return site_key(url) in self.options.sites

    def parse_page(self, response: Response) -> Iterator[Page | scrapy.Request]:
        page = self._page(response)
        if response.status in REDIRECT_STATUSES and "location" in response.headers:
            yield from self._follow_redirect(response, page)
        elif not page.is_html:
            yield page
        else:
            self._extract(response, page)
            if response.status != 200:
                page.links = []  # an error page's template links are not part of the site's link graph
            yield page
            if response.meta["depth"] < self.options.max_depth:
                for link in page.links:
                    if not link.external and (request := self._page_request(link.target, response.meta["depth"] + 1)):
                        yield request

    def page_failed(self, failure: Failure) -> Page:
        """A URL that gave no response (DNS, refused, time-out, size cap) is recorded with the reason."""
        request = failure.request  # type: ignore[attr-defined]
        self.crawler.stats.inc_value("linkspider/fetch_errors")
        message = failure.getErrorMessage() or failure.type.__name__
        if failure.check(scrapy.exceptions.IgnoreRequest) and "robots" in message.lower():
            message = "disallowed by robots.txt"
        return Page(url=request.meta["page_url"], error=f"{failure.type.__name__}: {message}"[:500],
                    fetched_at=utc_now())

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        if response.status == 200:
            for url in sitemap_urls_from_robots(response.body, base_url=response.url):
                if is_http_url(url) and self.is_internal(url):
                    yield self._sitemap_request(url)

    def parse_sitemap(self, response: Response) -> Iterator[SitemapEntries | scrapy.Request]:
        if response.status != 200:
            return
        try:
            body = gunzip(response.body, max_size=self.settings.getint("DOWNLOAD_MAXSIZE")) if response.body[:2] == b"\x1f\x8b" else response.body
            sitemap = Sitemap(body)
        except Exception as error:  # noqa: BLE001 (lxml and gzip raise many types on bad input)
            self.logger.warning("unreadable sitemap %s: %s", response.url, error)
            return
        locations = [(entry["loc"], entry.get("lastmod")) for entry in sitemap if is_http_url(entry.get("loc", ""))]
        if sitemap.type == "sitemapindex":
            for loc, _ in locations:
                if self.is_internal(loc):
                    yield self._sitemap_request(loc)
            return
        entries = [(normalize_url(loc), lastmod) for loc, lastmod in locations if self.is_internal(loc)]
        yield SitemapEntries(sitemap=normalize_url(response.url), entries=entries)
        for url, _ in entries:
            if request := self._page_request(url, depth=1, priority=-10):
                yield request

    def _extract(self, response: Response, page: Page) -> None:
        """Fill the page from its HTML, or from the database when an earlier crawl extracted the same response."""
        headers = _headers(response)
        fingerprint = body_hash(response.url, response.status, headers, response.body, self.options.sites)
        if self.stored.fill(page, fingerprint):
            self.crawler.stats.inc_value("linkspider/extraction_reused")
            return
        parse_html(page, _document(response, page), get_base_url(response), headers, self.is_internal)
        page.body_hash = fingerprint

    def _page_request(self, url: str, depth: int, priority: int = 0) -> scrapy.Request | None:
        """A request for a page not seen before, within the page cap and the query-variant cap, and not excluded."""
        if url in self.seen or (self.options.max_pages and len(self.seen) >= self.options.max_pages):
            return None
        if url in self.excluded or self.options.exclude and self.options.excludes(url):  # a URL's patterns matched once
            self.excluded.add(url)
            return None
        parts = urlsplit(url)
        if parts.query:
            variants = self.query_variants[f"{parts.netloc}{parts.path}"]
            if len(variants) >= self.options.max_query_variants and parts.query not in variants:
                self.crawler.stats.inc_value("linkspider/query_variants_skipped")
                return None
            variants.add(parts.query)
        self.seen.add(url)
        meta = {**PAGE_META, "page_url": url, "depth": depth}
        return scrapy.Request(url, self.parse_page, errback=self.page_failed, meta=meta, priority=priority - depth)

    def _sitemap_request(self, url: str) -> scrapy.Request:
        return scrapy.Request(url, self.parse_sitemap, meta=PAGE_META, priority=50)

    def _follow_redirect(self, response: Response, page: Page) -> Iterator[Page | scrapy.Request]:
        location = urljoin(response.url, response.headers["location"].decode("latin-1").strip())
        page.redirect_to = normalize_url(location) if is_http_url(location) else location
        yield page
        if is_http_url(location) and self.is_internal(location):
            if request := self._page_request(page.redirect_to, response.meta["depth"]):
                yield request

    def _page(self, response: Response) -> Page:
        """The fields every response has, whatever its type."""
        content_type = response.headers.get("content-type", b"").decode("latin-1").split(";")[0].strip().lower()
        page = Page(
            url=response.meta["page_url"],
            status=response.status,
            content_type=content_type or None,
            size=len(response.body),
            fetched_at=utc_now(),
            download_latency=response.meta.get("download_latency"),
        )
        page.is_html = content_type in HTML_TYPES and response.status not in REDIRECT_STATUSES
        if page.is_html and _looks_binary(response.body):
            page.is_html, page.error = False, "binary content served as HTML; not parsed"
        return page


def _document(response: Response, page: Page) -> HtmlElement:
    """The parsed document, re-decoded when its declared encoding does not fit its bytes.

    A page labelled UTF-8 but written in Windows-1252 decodes with replacement characters;
    the first encoding that decodes the body cleanly wins, and is recorded.
    """
    page.encoding = response.encoding
    if "\ufffd" in response.text:
        for encoding in ("utf-8", "cp1252"):
            try:
                text = response.body.decode(encoding)
            except UnicodeDecodeError:
                continue
            if encoding != response.encoding:
                page.encoding = encoding
                return Selector(text=text, type="html").root
            break
    return response.selector.root


def _check_database_path(path: str) -> None:
    """Refuse a db path that would fail mid-crawl or overwrite a file that is not an SQLite database."""
    target = Path(path)
    if target.is_dir():
        raise CrawlArgumentError(f"db={path} is a directory; give a file name such as {path.rstrip('/')}/site.db")
    if not target.parent.resolve().is_dir():
        raise CrawlArgumentError(f"db={path}: folder {target.parent} does not exist")
    if target.exists() and target.stat().st_size:
        with open(target, "rb") as handle:
            if handle.read(16) != b"SQLite format 3\x00":
                raise CrawlArgumentError(f"db={path} exists and is not an SQLite database; refusing to overwrite it")


def _looks_binary(body: bytes) -> bool:
    """NUL bytes or mostly control bytes in the first 4 KB: not a text document, whatever its label."""
    head = body[:4096]
    if b"\x00" in head:
        return True
    controls = sum(1 for byte in head if byte < 9 or 13 < byte < 32)
    return bool(head) and controls / len(head) > 0.1


def _headers(response: Response) -> dict[str, str]:
    return {key.decode("latin-1").lower(): b", ".join(values).decode("latin-1") for key, values in response.headers.items()}


def _non_negative_int(name: str, value: str | int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise CrawlArgumentError(f"{name} must be a whole number, got {value!r}") from None
    if number < 0:
        raise CrawlArgumentError(f"{name} must be 0 or more, got {number}")
    return number


def _boolean(name: str, value: str | bool) -> bool:
    text = str(value).strip().lower()
    if text in {"true", "1", "yes", "on"}:
        return True
    if text in {"false", "0", "no", "off"}:
        return False
    raise CrawlArgumentError(f"{name} must be true or false, got {value!r}")
