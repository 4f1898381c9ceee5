"""The impact report: the demo site's, from the real `scrapy analyze` and `scrapy report`, opened in a real headless
Chromium; and one built from a crawl whose titles, anchors and URLs carry script and HTML payloads.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlite_utils
from PIL import Image

from analysis.charts import COLOURS
from analysis.export import SUGGESTIONS
from chromium import CHROMIUM, Chromium
from conftest import SCRAPY, CrawlRun, run_crawl
from linkspider.db import open_database
from test_analysis_end_to_end import ANALYZE, Run, copy_database, run

REPORT = [*SCRAPY, "report"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=(
    "Debian's chromium is not installed here (`apt-get install chromium`; .ci/run installs it), "
    "so the report cannot be opened in a real browser"))
CHARTS = 4
MIN_COLOURS = 3  # a drawn chart shows its background, its grid and text, and at least one series colour
MIN_PIXELS = 20  # per colour counted, so that anti-aliasing does not count
MIN_BAR_PIXELS = 1_000  # in the series colours: bars, not only the legend's squares (about 100 pixels each)
SERIES = {tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)) for colour in COLOURS}


@dataclass
class Reports:
    db_path: Path
    analyze: Run
    report: Run
    by_analyze: Path
    by_report: Path


@pytest.fixture(scope="module")
def demo(demo_crawl: CrawlRun, tmp_path_factory: pytest.TempPathFactory) -> Reports:
    folder = tmp_path_factory.mktemp("report")
    db_path = copy_database(demo_crawl.db_path, folder / "demo.db")
    analyze = run(ANALYZE, db_path, "--no-progress")
    assert analyze.returncode == 0, analyze.stderr
    report = run(REPORT, db_path, "--out", folder / "impact.html")
    assert report.returncode == 0, report.stderr
    return Reports(db_path, analyze, report, folder / "demo.report.html", folder / "impact.html")


def test_analyze_writes_the_report_beside_the_database_and_says_so(demo: Reports) -> None:
    assert demo.by_analyze.is_file() and str(demo.by_analyze) in demo.analyze.stdout
    headline = re.search(r"with the \d+ queued links, over all (\d+) live HTML pages: mean depth .* orphans \d+ -> \d+",
                         demo.analyze.stdout)
    assert headline, demo.analyze.stdout
    assert demo.report.stdout.splitlines()[-1] == f"wrote {demo.by_report}"
    db = sqlite_utils.Database(demo.db_path)
    assert int(headline.group(1)) == db["impact"].count  # one row a live page
    assert db["impact"].count == db.execute("SELECT count(*) FROM pages WHERE status = 200 AND final_url = url "
                                            "AND (canonical IS NULL OR canonical = url)").fetchone()[0]
    assert db["impact_summary"].count == 9
    assert db.execute("SELECT count(*) FROM suggestions WHERE pagerank_gain IS NULL").fetchone()[0] == 0


def test_the_report_is_one_small_file_that_loads_nothing(demo: Reports) -> None:
    for path in (demo.by_analyze, demo.by_report):
        page = path.read_text(encoding="utf-8")
        assert len(page) < 150_000
        assert not re.search(r"<script|<link|<img|<iframe|@import|url\(|\ssrc=", page, re.I)
        assert "default-src 'none'" in page  # and a Content-Security-Policy would block it anyway
    assert demo.by_analyze.read_text(encoding="utf-8").count("<svg") == CHARTS
    for path in (demo.by_analyze, demo.by_report):  # the analysis' threshold, kept in the database for `scrapy report`
        assert re.search(r">threshold 0\.\d\d</text>", path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    with Chromium(tmp_path_factory.mktemp("chromium-profile")) as chromium:
        yield chromium


def colours(png: bytes) -> tuple[int, int]:
    """How many distinct colours cover at least MIN_PIXELS pixels of the image, and how many pixels are series colours."""
    counts = Image.open(io.BytesIO(png)).convert("RGB").getcolors(maxcolors=1 << 20)
    return sum(1 for count, _ in counts if count >= MIN_PIXELS), sum(count for count, colour in counts if colour in SERIES)


@needs_chromium
def test_the_demo_report_in_chromium_draws_every_chart_without_errors_or_requests(demo: Reports, browser: Chromium) -> None:
    tab = browser.open(demo.by_report)
    assert browser.problems(tab) == []
    assert [request["request"]["url"] for request in browser.of(tab, "Network.requestWillBeSent")] == [demo.by_report.as_uri()]
    boxes = browser.evaluate(tab, "[...document.querySelectorAll('svg.chart')].map(svg => { const box = "
                                  "svg.getBoundingClientRect(); return {x: box.x + scrollX, y: box.y + scrollY, "
                                  "width: box.width, height: box.height, shapes: svg.querySelectorAll('rect').length}; })")
    assert len(boxes) == CHARTS
    for box in boxes:
        assert box["width"] > 300 and box["height"] > 100 and box["shapes"] > 3, box
        clip = {key: box[key] for key in ("x", "y", "width", "height")}
        distinct, bar_pixels = colours(browser.screenshot(tab, clip))
        assert distinct >= MIN_COLOURS and bar_pixels >= MIN_BAR_PIXELS, (box, distinct, bar_pixels)
    text = browser.evaluate(tab, "document.body.innerText")
    assert "The site, before and after" in text and "Top 25 suggestions" in text
    assert browser.evaluate(tab, "document.querySelectorAll('mark').length") >= 25  # every anchor, highlighted
    assert browser.of(tab, "Page.javascriptDialogOpening") == []


PAYLOAD = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
ANCHOR = "<b>brew</b><script>alert(2)</script>"
CONTEXT = f"Start <iframe src=x></iframe> {ANCHOR} </td></table><svg onload=alert(3)> end."
BASE = "http://site.test"
QUOTED = BASE + '/a"onmouseover="alert(4)'


def hostile_database(path: Path, title: str = PAYLOAD, anchor: str = ANCHOR, context: str = CONTEXT,
                     target: str = QUOTED) -> Path:
    """A crawled and analysed site whose every crawled or queued string tries to run or inject something (or, with
    other strings, is long in some other way)."""
    db = open_database(path)
    db["crawls"].insert({"id": 1, "start_urls": BASE + "/", "status": "finished", "finished_at": title})
    pages = {BASE + "/": "Home", BASE + "/post": title, target: title + " two", BASE + "/lonely": title + " three"}
    db["pages"].insert_all([{"url": url, "final_url": url, "status": 200, "is_html": 1, "title": page_title, "h1": title,
                             "gone": 0, "noindex": 0, "nofollow": 0, "sitemap_only": int(url.endswith("lonely"))}
                            for url, page_title in pages.items()])
    db["links"].insert_all([{"source": BASE + "/", "target": linked, "region": "content", "nofollow": 0, "external": 0}
                            for linked in (BASE + "/post", target)])
    db["suggestions"].create(SUGGESTIONS, pk=("source", "target"))
    db["suggestions"].insert_all([
        {"source": BASE + "/post", "target": target, "target_title": title, "anchor": anchor, "anchor_source": "text",
         "context": context, "similarity": 0.5, "score": 1.0, "status": "pending"},
        {"source": target, "target": BASE + "/lonely", "target_title": title, "anchor": title, "anchor_source": "title",
         "context": None, "similarity": 0.4, "score": 0.9, "status": "approved"},
    ])
    db["cannibalization"].insert({"page": BASE + "/post", "other": target, "similarity": 0.95, "page_title": title,
                                  "other_title": title})
    db["hubs"].insert({"target": target, "title": title, "wanted": 9, "kept": 3})
    sentence = f"{title} read it here."
    db["vague_links"].insert({"source": BASE + "/post", "target": target, "target_title": title, "anchor": "here",
                              "offset": 100 + sentence.index("here"), "context": sentence, "context_offset": 100,
                              "better_anchor": title, "better_offset": 100})
    db.close()
    return path


@needs_chromium
def test_payloads_in_crawled_strings_show_as_text_and_never_run(browser: Chromium, tmp_path: Path) -> None:
    db_path = hostile_database(tmp_path / "hostile.db")
    done = run(REPORT, db_path)
    assert done.returncode == 0, done.stderr
    tab = browser.open(tmp_path / "hostile.report.html")
    assert browser.evaluate(tab, "document.title").startswith("Internal links: impact report")
    assert browser.of(tab, "Page.javascriptDialogOpening") == []
    assert browser.problems(tab) == []  # nothing the policy had to block
    assert browser.evaluate(tab, "document.querySelectorAll('script, img, iframe, b, table table').length") == 0
    assert browser.evaluate(tab, "[...document.querySelectorAll('*')].filter(element => [...element.attributes]"
                                 ".some(attribute => attribute.name.startsWith('on'))).length") == 0
    assert browser.evaluate(tab, "[...document.querySelectorAll('svg')].every(svg => svg.classList.contains('chart'))")
    text = browser.evaluate(tab, "document.body.innerText")
    assert text.count(PAYLOAD) >= 8 and CONTEXT in text
    assert browser.evaluate(tab, "[...document.querySelectorAll('mark')].map(mark => mark.textContent)") == [
        ANCHOR, PAYLOAD, "here"]  # the suggestions' anchors, then the vague link in its sentence
    assert QUOTED in browser.evaluate(tab, "[...document.querySelectorAll('a')].map(link => link.getAttribute('href'))")
    assert [request["request"]["url"] for request in browser.of(tab, "Network.requestWillBeSent")] == [
        (tmp_path / "hostile.report.html").as_uri()]


@needs_chromium
def test_long_paths_titles_and_identifiers_wrap_inside_the_window(browser: Chromium, tmp_path: Path) -> None:
    """An API's paths and identifiers have no place to break ("/c3ref/c_config_covering_index_scan.html"); the report
    wraps them rather than grow wider than the window, and keeps a third of the table for the pages' columns."""
    long = "sqlite3_changeset_iter_" * 6
    db_path = hostile_database(tmp_path / "wide.db", title=f"Configuration {long} Options", anchor=long,
                               context=f"Call {long} and then {long} once more, " + "as a long sentence goes on " * 30,
                               target=f"{BASE}/c3ref/{long}.html")
    assert run(REPORT, db_path).returncode == 0
    tab = browser.open(tmp_path / "wide.report.html")
    assert browser.evaluate(tab, "document.documentElement.scrollWidth <= innerWidth")
    widths = browser.evaluate(tab, "[...document.querySelectorAll('th.p')].map(th => th.offsetWidth / "
                                   "th.closest('table').offsetWidth)")
    assert len(widths) == 2 and all(width > 0.15 for width in widths), widths


@needs_chromium
def test_the_browser_checks_would_see_a_payload_run_and_a_request(browser: Chromium, tmp_path: Path) -> None:
    """The checks above are not blind: the same payload, unescaped and without the policy, runs and fetches."""
    page = tmp_path / "unsafe.html"
    page.write_text(f"<!doctype html><title>unsafe</title><body>{PAYLOAD}<img src='https://cdn.example/x.png'>")
    tab = browser.open(page)
    assert browser.evaluate(tab, "document.title") == "pwned"
    assert browser.of(tab, "Page.javascriptDialogOpening") and browser.problems(tab)
    assert "https://cdn.example/x.png" in [request["request"]["url"] for request in browser.of(tab, "Network.requestWillBeSent")]


def test_report_on_a_database_that_was_never_analysed_fails_in_one_line(demo_crawl: CrawlRun, tmp_path: Path) -> None:
    db_path = copy_database(demo_crawl.db_path, tmp_path / "crawled.db")
    done = run(REPORT, db_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == "error: this database has no review queue yet; run `scrapy analyze DB` on it first"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["crawled.db"]


def test_an_analysis_of_a_crawl_that_did_not_finish_says_what_it_misses(demo_url: str, tmp_path: Path) -> None:
    crawl = run_crawl(demo_url, tmp_path / "capped.db", "-a", "max_pages=15")
    assert crawl.returncode == 0, crawl.stderr
    analyze = run(ANALYZE, crawl.db_path, "--no-progress")
    assert analyze.returncode == 0, analyze.stderr
    capped = "crawl #1 stopped at max_pages (15 pages): pages it did not reach are missing, or as an earlier crawl stored them"
    assert f"  note: {capped}" in analyze.stdout.splitlines()[1]
    assert f"<p class=note>Note: {capped}" in crawl.db_path.with_suffix(".report.html").read_text(encoding="utf-8")
    for status, finished_at, said in (
            ("running", None, "crawl #1 has not finished (it is running, or was stopped before it could close): this "
                              "analysis sees the 15 pages stored so far"),
            ("interrupted", "2026-12-02T01:00:00+00:00", "crawl #1 ended early (interrupted, 15 pages)")):
        with crawl.db.conn:  # as a crawl that is still writing, or that Ctrl-C stopped, leaves its row
            crawl.db.execute("UPDATE crawls SET status = ?, finished_at = ?, pages = NULL", [status, finished_at])
        report = run(REPORT, crawl.db_path, "--out", tmp_path / f"{status}.html")
        assert report.returncode == 0, report.stderr
        page = (tmp_path / f"{status}.html").read_text(encoding="utf-8")
        assert ("crawled 2026-12-02T01:00:00+00:00." if finished_at else "crawl not finished.") in page
        assert f"<p class=note>Note: {said}" in page
    with crawl.db.conn:
        crawl.db.execute("UPDATE crawls SET status = 'finished'")
    assert run(REPORT, crawl.db_path, "--out", tmp_path / "finished.html").returncode == 0
    page = (tmp_path / "finished.html").read_text(encoding="utf-8")
    assert "crawled 2026-12-02T01:00:00+00:00." in page and "class=note" not in page
