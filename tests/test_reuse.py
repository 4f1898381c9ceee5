"""Re-crawls reuse the stored extraction of unchanged pages and extract the changed ones afresh.

Real spider, real server, the tiny site from tinysite.py crawled twice into one database; the
reused rows must be exactly what extracting again would have stored.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import run_crawl
from linkspider import reuse
from linkspider.localserver import serve
from linkspider.reuse import EXTRACTED, LINK_FIELDS, body_hash
from tinysite import SLUGS, tiny_site


def extracted(db: Path) -> tuple[list[tuple], list[tuple]]:
    """Every page's extracted fields and every link, as a fresh extraction would store them."""
    with sqlite3.connect(db) as connection:
        pages = connection.execute(f"SELECT url, status, {', '.join(EXTRACTED)} FROM pages ORDER BY url").fetchall()
        links = connection.execute(f"SELECT source, {', '.join(LINK_FIELDS)} FROM links ORDER BY source, position").fetchall()
    return pages, links


def reused(db: Path) -> list[int]:
    with sqlite3.connect(db) as connection:
        return [count for (count,) in connection.execute("SELECT reused FROM crawls ORDER BY id")]


def test_an_unchanged_site_is_reused_whole_and_a_changed_page_is_extracted_again(tmp_path: Path) -> None:
    site = tiny_site(tmp_path / "site")
    twice, fresh = tmp_path / "twice.db", tmp_path / "fresh.db"
    with serve(site) as url:
        assert run_crawl(url, twice).returncode == 0
        again = run_crawl(url, twice)
        assert again.returncode == 0
        with sqlite3.connect(twice) as connection:  # the posts, the home page and the demo posts they link to (404s)
            (html_pages,) = connection.execute("SELECT count(*) FROM pages WHERE is_html = 1").fetchone()
        assert html_pages > len(SLUGS)
        assert reused(twice) == [0, html_pages]
        assert f"unchanged since the last crawl: {html_pages} pages" in again.stdout
        assert run_crawl(url, fresh).returncode == 0
        assert extracted(twice) == extracted(fresh)

        edited = site / "blog" / SLUGS[0] / "index.html"
        html = edited.read_text()
        assert "<p>The dose is the weight" in html
        edited.write_text(html.replace("<p>The dose is", "<p>A sentence added since the last crawl. The dose is", 1))
        assert run_crawl(url, twice).returncode == 0
        assert reused(twice)[-1] == html_pages - 1
        with sqlite3.connect(twice) as connection:
            (text,) = connection.execute("SELECT main_text FROM pages WHERE url LIKE ?", [f"%/{SLUGS[0]}/"]).fetchone()
        assert "A sentence added since the last crawl." in text
        fresh.unlink()
        assert run_crawl(url, fresh).returncode == 0
        assert extracted(twice) == extracted(fresh)


CHANGES = {"url": {"url": "http://site.test/b/"}, "status": {"status": 404},
           "headers": {"headers": {"content-type": "text/html; charset=utf-8", "x-robots-tag": "noindex"}},
           "sites": {"sites": {"site.test", "other.test"}}, "body": {"body": b"<html><p>Hello!</p></html>"}}


@pytest.mark.parametrize("change", [*CHANGES, "extractor"])
def test_the_fingerprint_changes_with_everything_extraction_reads(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = {"url": "http://site.test/a/", "status": 200, "headers": {"content-type": "text/html; charset=utf-8"},
             "body": b"<html><p>Hello</p></html>", "sites": {"site.test"}}
    before = body_hash(**parts)
    if change == "extractor":
        monkeypatch.setattr(reuse, "EXTRACTOR", "another version of the extraction code")
    assert body_hash(**{**parts, **CHANGES.get(change, {})}) != before
