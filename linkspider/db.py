"""The audit database: its schema, in one place, for the crawler and the analysis.

The schema is documented column by column in README.md ("The database"). Tables are created
with explicit types so that an empty crawl still has every column the analysis expects.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import sqlite_utils

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0  # how long a write waits for another program's (a crawl and an analysis of one database) to end

PAGES = {
    "url": str,  # normalised requested URL: the key every other table joins on
    "final_url": str,  # where the redirect chain ends (the URL itself when it does not redirect)
    "status": int,  # HTTP status; NULL when no response came back (see error)
    "error": str,
    "redirect_to": str,  # this hop's Location, normalised
    "redirect_chain": str,  # JSON list of {"url", "status"} hops from url to final_url
    "content_type": str,
    "is_html": int,
    "encoding": str,
    "size": int,  # body bytes
    "title": str,
    "description": str,
    "h1": str,
    "canonical": str,  # normalised absolute canonical URL, NULL when the page declares none
    "noindex": int,  # meta robots or X-Robots-Tag
    "nofollow": int,
    "lang": str,
    "published": str,  # declared dates: article meta, JSON-LD, <time>
    "modified": str,
    "depth": int,  # click depth from the start URL(s); NULL when no crawled link reaches the page
    "main_text": str,  # main content without nav, header, footer, sidebars, banners
    "headings": str,  # the main content's headings (h2, h3, ...), one a line: names of the page's parts
    "code_spans": str,  # JSON [[start, end], ...]: where main_text holds code blocks (no place for a link); NULL: none
    "word_count": int,
    "content_hash": str,  # sha1 of title and main_text: the analysis re-embeds a page only when it changes
    "body_hash": str,  # fingerprint of the response and the extraction code: a re-crawl reuses the extraction (reuse.py)
    "stripped_html": str,  # first 2,000 characters of the tag-stripped HTML: the backtest's naive baseline
    "in_sitemap": int,
    "sitemap_only": int,  # in a sitemap, but no crawled page links to it
    "fetched_at": str,  # UTC ISO time of the fetch
    "download_latency": float,  # seconds
    "first_seen_crawl": int,
    "last_seen_crawl": int,
    "gone": int,  # not seen by the latest complete crawl
}

LINKS = {
    "source": str,
    "target": str,  # normalised absolute URL
    "anchor": str,
    "region": str,  # content, nav, header, footer, aside or other
    "context": str,  # for content links: the sentence that holds the link
    "text_offset": int,  # for content links: where the anchor starts in the source's main_text
    "position": int,  # order of the link in the page
    "nofollow": int,
    "external": int,
}

REDIRECTS = {"source": str, "target": str, "status": int, "external": int, "crawl_id": int}

CRAWLS = {
    "id": int,
    "start_urls": str,
    "options": str,  # JSON of the spider arguments
    "started_at": str,
    "finished_at": str,
    "status": str,  # running, finished, interrupted, capped
    "reason": str,  # Scrapy's close reason
    "pages": int,
    "reused": int,  # pages fetched unchanged, whose stored extraction was reused (reuse.py)
    "version": str,
}

SITEMAP_ENTRIES = {"url": str, "sitemap": str, "lastmod": str}


def waiting(db: sqlite_utils.Database, seconds: float | None = None) -> sqlite_utils.Database:
    """The database, made to wait up to this long (BUSY_TIMEOUT_S) for another connection's write to end before it
    writes (SQLite's default, 5 s, is less than a crawl's flush or an analysis's tables may take: either would fail the
    other)."""
    db.conn.execute(f"PRAGMA busy_timeout = {round((BUSY_TIMEOUT_S if seconds is None else seconds) * 1000)}")
    return db


@contextmanager
def writing(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One transaction that takes the write lock as it starts (BEGIN IMMEDIATE, waiting as `waiting` says), committed
    at the end and rolled back on any exception, Ctrl-C included: what it writes is all there or none of it. A deferred
    transaction would read first, and a crawl's write between its read and its first write would fail it at once, busy
    timeout or not (SQLite's "snapshot" conflict). sqlite-utils' atomic() inside it nests as a savepoint."""
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    db.conn.execute("COMMIT")


class Unwritable(Exception):
    """SQLite could not write the database for a cause outside linkspider: another writer, a full disk, a read-only file."""


@contextmanager
def explained(path: str | Path) -> Iterator[None]:
    """Raise Unwritable, with the one line that says why and what to do, for an SQLite error of such a cause met
    inside; any other is a bug, shown whole."""
    try:
        yield
    except sqlite3.OperationalError as error:
        message = str(error)
        if "locked" in message or "busy" in message:
            raise Unwritable(f"{path} is locked: another program is writing to it (a crawl still running?) and did not "
                             f"finish within {BUSY_TIMEOUT_S:.0f} s; none of this run's results were stored: run it again "
                             "when that program has finished") from error
        if any(cause in message for cause in ("readonly", "disk", "full", "unable to open")):
            raise Unwritable(f"{path}: SQLite could not write it ({message}); none of this run's results were "
                             "stored") from error
        raise


class NotALinkspiderDatabase(ValueError):
    """The file exists but was not written by `scrapy crawl site`."""


def open_database(path: str | Path, busy_timeout_s: float | None = None) -> sqlite_utils.Database:
    """Open (creating if needed) an audit database in WAL mode with every crawl table present (waiting: busy_timeout_s)."""
    db = waiting(sqlite_utils.Database(path), busy_timeout_s)
    db.enable_wal()
    db.execute("PRAGMA synchronous = NORMAL")
    create_schema(db)
    return db


def create_schema(db: sqlite_utils.Database) -> None:
    """Create the crawl tables and indexes that are missing; never drops or rewrites data."""
    with db.atomic():
        db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
        db["meta"].insert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, replace=True)
        db["meta"].insert({"key": "generator", "value": "linkspider"}, replace=True)
        db["pages"].create(PAGES, pk="url", if_not_exists=True)
        db["links"].create(LINKS, if_not_exists=True)
        db["redirects"].create(REDIRECTS, pk="source", if_not_exists=True)
        db["crawls"].create(CRAWLS, pk="id", if_not_exists=True)
        db["sitemap_entries"].create(SITEMAP_ENTRIES, pk="url", if_not_exists=True)
        for name, columns in (("pages", PAGES), ("links", LINKS), ("redirects", REDIRECTS), ("crawls", CRAWLS)):
            add_missing_columns(db[name], columns)
    db["links"].create_index(["source"], if_not_exists=True)
    db["links"].create_index(["target"], if_not_exists=True)


def add_missing_columns(table: sqlite_utils.db.Table, columns: dict[str, type]) -> None:
    """A table written by an older linkspider gains the columns it lacks; nothing else changes."""
    existing = table.columns_dict
    for column, kind in columns.items():
        if column not in existing:
            table.add_column(column, kind)


def open_existing(path: str | Path) -> sqlite_utils.Database:
    """Open a database that a crawl wrote, or raise with a message that names the fix."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file; crawl first with `scrapy crawl site -a url=URL -a db={path}`")
    with open(path, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise NotALinkspiderDatabase(f"{path}: not an SQLite database; give the .db file that `scrapy crawl site` wrote")
    db = waiting(sqlite_utils.Database(path))
    if "meta" not in db.table_names() or "pages" not in db.table_names():
        raise NotALinkspiderDatabase(f"{path}: not a linkspider database (no pages table); crawl the site with `scrapy crawl site`")
    return db


def utc_now() -> str:
    """The time stamps stored in the database: UTC, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
