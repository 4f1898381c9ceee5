"""The few lines a crawl ends with, and whether the crawl failed outright."""

from __future__ import annotations

import json
from pathlib import Path

import sqlite_utils


def crawl_summary(db: sqlite_utils.Database, crawl_id: int, excluded: int = 0) -> str:
    """Pages by status, content links, sitemap-only URLs, the URLs `-a exclude` kept out (excluded: how many) and where
    the database is."""
    crawl = db["crawls"].get(crawl_id)
    statuses = db.execute(
        "SELECT coalesce(CAST(status AS TEXT), 'no response'), count(*) FROM pages WHERE last_seen_crawl = ? "
        "GROUP BY 1 ORDER BY 1", [crawl_id]
    ).fetchall()
    links = dict(db.execute(
        "SELECT region = 'content', count(*) FROM links JOIN pages ON pages.url = links.source "
        "WHERE pages.last_seen_crawl = ? AND links.external = 0 GROUP BY 1", [crawl_id]
    ).fetchall())
    sitemap_only = db.execute("SELECT count(*) FROM pages WHERE sitemap_only AND gone = 0").fetchone()[0]
    gone = db.execute("SELECT count(*) FROM pages WHERE gone = 1").fetchone()[0]
    previous = db.execute("SELECT max(id) FROM crawls WHERE id < ?", [crawl_id]).fetchone()[0]
    newly_gone = db.execute("SELECT count(*) FROM pages WHERE gone = 1 AND last_seen_crawl = ?", [previous]).fetchone()[0]
    lines = [
        f"Crawl {crawl_id} {crawl['status']}: {crawl['pages']} URLs from {crawl['start_urls']}",
        "  by status: " + ", ".join(f"{status} x{count}" for status, count in statuses),
        f"  internal links: {links.get(1, 0)} in main content, {links.get(0, 0)} in nav/header/footer/sidebars",
        f"  sitemap-only URLs: {sitemap_only}" + (f"; not found this time (kept, marked gone): {gone}, {newly_gone} of them since the last crawl" if gone else ""),
        *([f"  unchanged since the last crawl: {crawl['reused']} pages (their stored extraction reused)"]
          if crawl.get("reused") else []),
        *([f"  excluded by -a exclude: {excluded} URLs, not fetched"] if excluded else []),
        f"  database: {Path(db.conn.execute('PRAGMA database_list').fetchone()[2])}",
    ]
    return "\n".join(lines)


def crawl_problem(db: sqlite_utils.Database, crawl_id: int, start_urls: list[str]) -> str | None:
    """A one-line reason when the crawl did not really happen or did not finish, else None."""
    crawl = db["crawls"].get(crawl_id)
    if crawl["status"] == "interrupted":
        return "crawl interrupted; the database is consistent: run the same command again to complete it"
    if crawl["status"] == "running":
        return ("the crawl's last pages or its close were not written (see the log above); the pages written are kept: "
                "run the same command again to complete it")
    external = {source: target for source, target in db.execute("SELECT source, target FROM redirects WHERE external = 1")}
    for url in start_urls:
        page = next(db["pages"].rows_where("url = ?", [url]), None)
        if page is None:
            return f"{url} was not fetched (disallowed or filtered)"
        if page["status"] is None:
            return f"could not fetch {url}: {page['error']}"
        chain = [hop["url"] for hop in json.loads(page["redirect_chain"] or "[]")]
        if leaving := next((hop for hop in chain if hop in external), None):
            return f"{url} redirects to another host ({external[leaving]}): crawl that URL, or add its host with -a allow=HOST"
        if page["status"] >= 400:
            return f"{url} answered HTTP {page['status']}"
    return None
