"""What can only be known once a crawl ends: click depth, redirect chains, orphans, gone pages."""

from __future__ import annotations

import json
from collections import deque

import sqlite_utils

from linkspider.db import utc_now, writing

MAX_REDIRECT_HOPS = 20


def finalize_crawl(db: sqlite_utils.Database, crawl_id: int, start_urls: list[str], status: str, reason: str,
                   reused: int = 0) -> None:
    """Update the derived columns of every page and close the crawl's row, in one transaction."""
    with writing(db):
        if status == "finished":
            db.execute("UPDATE pages SET gone = (last_seen_crawl IS NOT ?)", [crawl_id])
        _resolve_redirects(db)
        _click_depths(db, start_urls)
        db.execute("UPDATE pages SET in_sitemap = (url IN (SELECT url FROM sitemap_entries))")
        db.execute(
            "UPDATE pages SET sitemap_only = in_sitemap AND NOT EXISTS "
            "(SELECT 1 FROM links WHERE links.target = pages.url AND links.source != pages.url AND links.external = 0)"
        )
        pages = db.execute("SELECT count(*) FROM pages WHERE last_seen_crawl = ?", [crawl_id]).fetchone()[0]
        db["crawls"].update(crawl_id, {"finished_at": utc_now(), "status": status, "reason": reason, "pages": pages,
                                       "reused": reused})


def _resolve_redirects(db: sqlite_utils.Database) -> None:
    """Set final_url and the hop-by-hop redirect_chain of every page; flag loops."""
    hops = {url: (target, status) for url, target, status in
            db.execute("SELECT url, redirect_to, status FROM pages WHERE redirect_to IS NOT NULL AND gone = 0")}
    db.execute("UPDATE pages SET final_url = url, redirect_chain = NULL WHERE redirect_to IS NULL")
    for url in hops:
        chain, current, loop = [], url, False
        while current in hops and len(chain) < MAX_REDIRECT_HOPS:
            target, status = hops[current]
            chain.append({"url": current, "status": status})
            if any(hop["url"] == target for hop in chain):
                loop = True
                break
            current = target
        update = {"redirect_chain": json.dumps(chain), "final_url": None if loop or current in hops else current}
        if loop or current in hops:
            update["error"] = "redirect loop" if loop else f"more than {MAX_REDIRECT_HOPS} redirects"
        db["pages"].update(url, update)


def _click_depths(db: sqlite_utils.Database, start_urls: list[str]) -> None:
    """Fewest clicks from a start URL, over the links of live pages; a redirect hop is not a click."""
    clicks: dict[str, list[str]] = {}
    for source, target in db.execute(
        "SELECT DISTINCT links.source, links.target FROM links JOIN pages ON pages.url = links.source "
        "WHERE links.external = 0 AND pages.gone = 0"
    ):
        clicks.setdefault(source, []).append(target)
    redirects = dict(db.execute("SELECT url, redirect_to FROM pages WHERE redirect_to IS NOT NULL AND gone = 0").fetchall())
    depth = {url: 0 for url in start_urls}
    queue = deque(start_urls)
    while queue:  # 0-1 breadth-first search: a redirect costs no click and goes to the queue's front
        url = queue.popleft()
        steps = [(target, 1) for target in clicks.get(url, ())]
        if url in redirects:
            steps.append((redirects[url], 0))
        for target, cost in steps:
            if depth[url] + cost < depth.get(target, depth[url] + 2):
                depth[target] = depth[url] + cost
                (queue.appendleft if cost == 0 else queue.append)(target)
    db.execute("UPDATE pages SET depth = NULL")
    db.conn.executemany("UPDATE pages SET depth = ? WHERE url = ?", [(d, url) for url, d in depth.items()])
