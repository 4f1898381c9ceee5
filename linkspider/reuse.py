"""Re-crawls reuse what was extracted from a page whose response has not changed since it was stored.

Extraction (trafilatura, the link regions, the sentences) is most of a crawl's CPU. A page's
`body_hash` fingerprints everything its extraction reads: the body, the URL it is resolved
against, the headers parse_html looks at, the site's hosts (which decide what is external) and the
extraction code itself (the source of linkspider/extract.py and linkspider/sentences.py, and the
trafilatura and lxml versions). When a re-crawl fetches the same fingerprint, the stored fields and
links are read back instead of extracted again; any change to any of these extracts afresh.
"""

from __future__ import annotations

import hashlib
import inspect
import sqlite3
from dataclasses import fields
from importlib.metadata import version
from pathlib import Path

from linkspider import extract, sentences
from linkspider.items import Link, Page

# The Page fields that parse_html (and the spider's decoding) fill in; the rest come from the response.
EXTRACTED = ("encoding", "noindex", "nofollow", "title", "description", "h1", "canonical", "lang", "published", "modified",
             "main_text", "headings", "code_spans", "word_count", "content_hash", "stripped_html")
HEADERS = ("content-type", "x-robots-tag", "content-language")  # what decoding and parse_html read of the headers
LINK_FIELDS = tuple(field.name for field in fields(Link))


def _extractor() -> bytes:
    """The extraction code and the libraries it leans on: a new version of any extracts afresh."""
    code = "".join(inspect.getsource(module) for module in (extract, sentences))  # from the egg too, under Scrapyd
    return f"{code}trafilatura {version('trafilatura')} lxml {version('lxml')}".encode()


EXTRACTOR = hashlib.sha1(_extractor()).hexdigest()


def body_hash(url: str, status: int, headers: dict[str, str], body: bytes, sites: set[str]) -> str:
    """The fingerprint of everything a page's extraction depends on (see the module docstring)."""
    digest = hashlib.sha1(EXTRACTOR.encode())
    for part in (url, str(status), *(headers.get(name, "") for name in HEADERS), *sorted(sites)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(body)
    return digest.hexdigest()


class StoredPages:
    """The extraction results of an earlier crawl in the same database, by URL and fingerprint."""

    def __init__(self, db_path: str | Path) -> None:
        self.connection: sqlite3.Connection | None = None
        self.hashes: dict[str, str] = {}
        if Path(db_path).is_file() and Path(db_path).stat().st_size:
            self.connection = sqlite3.connect(f"file:{Path(db_path).resolve()}?mode=ro", uri=True)
            self.connection.row_factory = sqlite3.Row
            columns = {row["name"] for row in self.connection.execute("PRAGMA table_info(pages)")}
            if "body_hash" in columns:
                self.hashes = dict(self.connection.execute("SELECT url, body_hash FROM pages WHERE body_hash IS NOT NULL"))

    def fill(self, page: Page, fingerprint: str) -> bool:
        """Copy the stored extraction into page if the stored fingerprint is this one; say whether it did."""
        if self.connection is None or self.hashes.get(page.url) != fingerprint:
            return False
        row = self.connection.execute(f"SELECT {', '.join(EXTRACTED)} FROM pages WHERE url = ?", [page.url]).fetchone()
        for name in EXTRACTED:
            setattr(page, name, row[name])
        page.noindex, page.nofollow = bool(page.noindex), bool(page.nofollow)
        page.links = [Link(**{**dict(link), "nofollow": bool(link["nofollow"]), "external": bool(link["external"])})
                      for link in self.connection.execute(
                          f"SELECT {', '.join(LINK_FIELDS)} FROM links WHERE source = ? ORDER BY position", [page.url])]
        page.body_hash = fingerprint
        return True

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
