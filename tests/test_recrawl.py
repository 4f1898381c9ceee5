"""Review decisions through a publishing batch: crawl, analyse, decide, change the site, crawl and analyse again.

The site changes as a batch would change it: one suggested link is added, one page is removed, one page is
edited and one is published. Real spider, real server, real model, real `scrapy review`.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlite_utils

from conftest import ROOT, SCRAPY, run_crawl
from linkspider.localserver import serve
from tinysite import SLUGS, tiny_site

NEW_POST = "brewing-temperature"


def analyse(db: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "analysis", str(db), "--no-progress"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def statuses(db: Path) -> dict[tuple[str, str], str]:
    return {(row["source"], row["target"]): row["status"] for row in sqlite_utils.Database(db)["suggestions"].rows}


def path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3]


@dataclass
class Batch:
    db: Path
    first: str  # the first analysis' output
    second: str  # the second's, after the batch
    rejected: tuple[str, str]
    approved: tuple[str, str]
    linked: tuple[str, str]  # a pending suggestion whose link the batch added
    removed: str
    edited: str
    published: str


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    folder = tiny_site(tmp_path_factory.mktemp("site") / "site")
    db = tmp_path_factory.mktemp("db") / "tiny.db"
    with serve(folder) as url:
        assert run_crawl(url, db).returncode == 0
        first = analyse(db)
        queue = list(statuses(db))
        rejected, approved, linked = queue[0], queue[1], queue[2]
        involved = {page for pair in (rejected, approved, linked) for page in pair}
        removed = min({page for pair in queue for page in pair} - involved)  # a page with suggestions of its own
        posts = [url.rstrip("/") + f"/blog/{slug}/" for slug in sorted(SLUGS)]
        edited = next(page for page in posts if page not in involved | {removed})  # queued or not: any other post

        decisions = db.with_suffix(".suggestions.csv")
        with open(decisions, newline="") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            row["status"] = {rejected: "rejected", approved: "approved"}.get((row["from"], row["to"]), row["status"])
        with open(decisions, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        review = subprocess.run([*SCRAPY, "review", str(db), str(decisions)], cwd=ROOT, capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert review.returncode == 0, review.stderr

        source = folder / path_of(linked[0]).strip("/") / "index.html"
        html = source.read_text(encoding="utf-8")
        link = f'<div class="entry-content">\n<p>Read next: <a href="{path_of(linked[1])}">the next step</a>.</p>'
        source.write_text(html.replace('<div class="entry-content">', link, 1), encoding="utf-8")
        shutil.rmtree(folder / path_of(removed).strip("/"))
        page = folder / path_of(edited).strip("/") / "index.html"
        paragraph = "<p>Update: we tried this again with a new grinder and the results held up well across three weeks.</p>"
        page.write_text(page.read_text(encoding="utf-8").replace("</article>", paragraph + "</article>", 1), encoding="utf-8")
        tiny_site(folder, [NEW_POST])  # and the home page lists the posts now there

        assert run_crawl(url, db).returncode == 0
        second = analyse(db)
        published = url.rstrip("/") + f"/blog/{NEW_POST}/"
    return Batch(db, first, second, rejected, approved, linked, removed, edited, published)


def test_decisions_survive_the_recrawl(batch: Batch) -> None:
    after = statuses(batch.db)
    assert after[batch.rejected] == "rejected"  # kept as a decision, never proposed again
    assert after[batch.approved] == "approved"
    assert after[batch.linked] == "done"  # its link exists now


def test_suggestions_of_a_removed_page_are_dropped_unless_decided(batch: Batch) -> None:
    decided = {batch.rejected, batch.approved, batch.linked}
    assert [pair for pair in statuses(batch.db) if batch.removed in pair and pair not in decided] == []


def test_new_suggestions_are_pending(batch: Batch) -> None:
    published = [status for pair, status in statuses(batch.db).items() if batch.published in pair]
    assert published and set(published) == {"pending"}


def test_the_second_analysis_reports_what_changed(batch: Batch) -> None:
    assert "pages since the last analysis: first analysis of this database" in batch.first
    # the edited page and the page that gained a link are embedded again; the published one for the first time
    assert "pages since the last analysis: 1 new, 2 changed (embedded again), 1 gone" in batch.second
    assert "(3 embedded now with onnx-int8 on cpu," in batch.second
    runs = list(sqlite_utils.Database(batch.db)["analysis_runs"].rows)
    assert [(run["new_pages"], run["changed_pages"], run["gone_pages"], run["done"]) for run in runs] == [(0, 0, 0, 0), (1, 2, 1, 1)]
    assert "1 done since last run" in batch.second
    assert runs[1]["new_suggestions"] == int(batch.second.split("suggestions: ")[1].split("(")[1].split(" new")[0])


def test_a_recrawl_counts_the_pages_it_no_longer_found(tmp_path: Path) -> None:
    folder = tiny_site(tmp_path / "site")
    db = tmp_path / "moved.db"
    with serve(folder) as url, serve(folder) as moved:  # the same site at another address: the first crawl's pages are gone
        assert run_crawl(url, db).returncode == 0
        second, third = run_crawl(moved, db), run_crawl(moved, db)
    first_pages = sqlite_utils.Database(db).execute("SELECT count(*) FROM pages WHERE url LIKE ?", [url + "%"]).fetchone()[0]
    assert first_pages > 5
    assert f"not found this time (kept, marked gone): {first_pages}, {first_pages} of them since the last crawl" in second.stdout
    assert f"not found this time (kept, marked gone): {first_pages}, 0 of them since the last crawl" in third.stdout
