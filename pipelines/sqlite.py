"""Write pages, links, redirects and sitemap entries to the audit database, in batched transactions.

Each batch is one transaction, so a crawl stopped at any moment (Ctrl-C, a kill, a crash) leaves
every page either fully written with its links or not written at all. Re-crawling into the same
file updates pages in place and replaces their links. A batch that another program's write keeps
out longer than SQLITE_BUSY_TIMEOUT (an analysis of the same database writing its tables) is kept
and written with the next; the last batch and the crawl's close, which have no next, wait up to
SQLITE_CLOSE_TIMEOUT more.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import asdict
from functools import partial

from scrapy import Spider, signals
from scrapy.crawler import Crawler

from linkspider import __version__
from linkspider.db import open_database, utc_now, waiting, writing
from linkspider.items import Page, SitemapEntries
from linkspider.urls import site_key
from pipelines.finalize import finalize_crawl

logger = logging.getLogger(__name__)


class SQLitePipeline:
    """Buffers items and flushes them every SQLITE_BATCH_SIZE pages and when the spider closes."""

    LOCKED_OUT = "another program held the database's write lock throughout (SQLITE_CLOSE_TIMEOUT)"

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.batch_size = crawler.settings.getint("SQLITE_BATCH_SIZE", 200)
        self.close_timeout = crawler.settings.getfloat("SQLITE_CLOSE_TIMEOUT", 600.0)
        self.pages: list[Page] = []
        self.sitemaps: list[SitemapEntries] = []
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SQLitePipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        self.options = self.crawler.spider.options
        self.db = open_database(self.options.db, self.crawler.settings.getfloat("SQLITE_BUSY_TIMEOUT"))
        with writing(self.db):
            self.crawl_id = self.db["crawls"].insert({
                "start_urls": " ".join(self.options.start_urls),
                "options": json.dumps(asdict(self.options), default=sorted),  # sites: a set, stored sorted
                "started_at": utc_now(),
                "status": "running",
                "version": __version__,
            }).last_pk
            if self.options.sitemap:
                self.db.execute("DELETE FROM sitemap_entries")
        self.crawler.stats.set_value("linkspider/crawl_id", self.crawl_id)
        self.crawler.stats.set_value("linkspider/db", str(self.options.db))

    def process_item(self, item: Page | SitemapEntries) -> Page | SitemapEntries:
        (self.pages if isinstance(item, Page) else self.sitemaps).append(item)
        if len(self.pages) >= self.batch_size:
            self.flush()
        return item

    def close_spider(self) -> None:
        if not self.pages and not self.sitemaps:
            return
        if self._at_close(partial(self._write, self.pages, self.sitemaps)):
            self.pages, self.sitemaps = [], []
        else:
            logger.error("the last %d pages were not written: %s", len(self.pages), self.LOCKED_OUT)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        """Derive what needs the whole crawl (depth, chains, orphans, gone pages), then close; not with pages unwritten
        (they would count as gone), and the crawl's row stays 'running'."""
        capped = bool(self.options.max_pages) and len(spider.seen) >= self.options.max_pages
        status = {"finished": "capped" if capped else "finished", "shutdown": "interrupted"}.get(reason, reason)
        reused = self.crawler.stats.get_value("linkspider/extraction_reused", 0)
        close = partial(finalize_crawl, self.db, self.crawl_id, self.options.start_urls, status, reason, reused)
        if not self.pages and not self.sitemaps and not self._at_close(close):
            logger.error("the crawl's close (click depths, redirects, orphans, its status) was not written: %s",
                         self.LOCKED_OUT)
        self.db.close()

    def flush(self) -> None:
        """Write the buffered items in one transaction; while another program holds the database's write lock, keep
        them for the next batch."""
        pages, self.pages = self.pages, []
        sitemaps, self.sitemaps = self.sitemaps, []
        try:
            self._write(pages, sitemaps)
        except sqlite3.OperationalError as error:
            if "locked" not in str(error):
                raise
            self.pages, self.sitemaps = pages + self.pages, sitemaps + self.sitemaps
            logger.warning("%d pages not written yet (%s: another program is writing to the database); kept for the "
                           "next batch", len(pages), error)

    def _at_close(self, write: Callable[[], None]) -> bool:
        """Whether a write with no next batch to wait for was made; locked out, it waits SQLITE_CLOSE_TIMEOUT more."""
        for attempt in range(2):
            try:
                write()
                return True
            except sqlite3.OperationalError as error:
                if "locked" not in str(error):
                    raise
                if attempt == 0:
                    logger.warning("the crawl's last write waits up to %.0f s more: another program is writing to the "
                                   "database (%s)", self.close_timeout, error)
                    waiting(self.db, self.close_timeout)
        return False

    def _write(self, pages: list[Page], sitemaps: list[SitemapEntries]) -> None:
        """One transaction."""
        with writing(self.db):
            rows = [_page_row(page, self.crawl_id) for page in pages]
            self.db["pages"].upsert_all(rows, pk="url")
            self.db.execute(
                "UPDATE pages SET first_seen_crawl = ? WHERE first_seen_crawl IS NULL", [self.crawl_id]
            )
            urls = [page.url for page in pages]
            self.db.execute(f"DELETE FROM links WHERE source IN ({','.join('?' * len(urls))})", urls)
            self.db.execute(f"DELETE FROM redirects WHERE source IN ({','.join('?' * len(urls))})", urls)
            self.db["links"].insert_all(
                ({"source": page.url, **vars(link)} for page in pages for link in page.links), batch_size=1000
            )
            self.db["redirects"].insert_all(
                {"source": page.url, "target": page.redirect_to, "status": page.status,
                 "external": int(site_key(page.redirect_to) not in self.options.sites), "crawl_id": self.crawl_id}
                for page in pages if page.redirect_to
            )
            self.db["sitemap_entries"].upsert_all(
                ({"url": url, "sitemap": entries.sitemap, "lastmod": lastmod} for entries in sitemaps for url, lastmod in entries.entries),
                pk="url",
            )
        self.crawler.stats.inc_value("linkspider/pages_written", len(pages))


def _page_row(page: Page, crawl_id: int) -> dict:
    row = {key: value for key, value in vars(page).items() if key != "links"}
    return row | {"last_seen_crawl": crawl_id, "gone": 0}
