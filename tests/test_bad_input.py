"""Every bad input gets a clear error and a non-zero exit, or a recorded row, and a sound database."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import sqlite_utils

from badsite import serve_bad_site
from conftest import ROOT, SCRAPY, CrawlRun, run_crawl


@pytest.fixture(scope="module")
def bad_crawl(tmp_path_factory: pytest.TempPathFactory) -> CrawlRun:
    with serve_bad_site() as url:
        run = run_crawl(url, tmp_path_factory.mktemp("bad") / "bad.db")
    run.base = url  # type: ignore[attr-defined]
    assert run.returncode == 0, run.stderr
    return run


def url_of(run: CrawlRun, path: str) -> str:
    return run.base.rstrip("/") + path  # type: ignore[attr-defined]


def wait_for_pages(db_path: Path, count: int, timeout: float) -> None:
    """Poll the database a crawl is writing until it holds count pages."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db_path.exists() and "pages" in (db := sqlite_utils.Database(db_path)).table_names():
            if db.execute("SELECT count(*) FROM pages").fetchone()[0] >= count:
                return
        time.sleep(0.1)
    raise AssertionError(f"the crawl wrote fewer than {count} pages in {timeout} s")


def assert_sound(db_path: Path) -> None:
    assert sqlite_utils.Database(db_path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("args, message", [
    ([], "missing start URL"),
    (["-a", "url="], "missing start URL"),
    (["-a", "url=example.com"], "not an http(s) URL"),
    (["-a", "url=ftp://example.com/"], "not an http(s) URL"),
    (["-a", "url=http://127.0.0.1/", "-a", "max_pages=many"], "max_pages must be a whole number"),
    (["-a", "url=http://127.0.0.1/", "-a", "sitemap=maybe"], "sitemap must be true or false"),
    (["-a", "url=http://127.0.0.1/blog/", "-a", "exclude=/tags/*,/blog/*"], "matches -a exclude=/tags/*,/blog/*"),
])
def test_bad_arguments_fail_in_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run([*SCRAPY, "crawl", "site", *args], cwd=tmp_path.parent, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "SCRAPY_SETTINGS_MODULE": "linkspider.settings"})
    assert done.returncode == 2
    assert [line for line in done.stderr.splitlines() if line.startswith("error:")] == [
        next(line for line in done.stderr.splitlines() if message in line)
    ]
    assert not list(tmp_path.parent.glob("*.db"))


def test_db_that_is_not_sqlite_is_never_overwritten(tmp_path: Path) -> None:
    precious = tmp_path / "notes.db"
    precious.write_text("my notes")
    run = run_crawl("http://127.0.0.1:1/", precious)
    assert run.returncode == 2 and "is not an SQLite database" in run.stderr
    assert precious.read_text() == "my notes"


def test_unreachable_host_is_recorded_and_fails(tmp_path: Path) -> None:
    run = run_crawl("http://127.0.0.1:1/", tmp_path / "down.db", "-s", "RETRY_TIMES=0")
    assert run.returncode == 1
    assert "error: could not fetch http://127.0.0.1:1/" in run.stderr
    page = run.page("http://127.0.0.1:1/")
    assert page["status"] is None and "Connection" in page["error"]


def test_start_url_redirecting_to_another_host(tmp_path: Path) -> None:
    with serve_bad_site() as url:
        run = run_crawl(url + "away", tmp_path / "away.db")
    assert run.returncode == 1
    assert "redirects to another host (http://elsewhere.invalid/landing)" in run.stderr
    assert run.db["redirects"].get(url + "away")["external"] == 1
    assert run.db.execute("SELECT count(*) FROM pages").fetchone()[0] == 1  # elsewhere.invalid never fetched


def test_error_statuses_are_recorded(bad_crawl: CrawlRun) -> None:
    assert bad_crawl.page(url_of(bad_crawl, "/missing"))["status"] == 404
    assert bad_crawl.page(url_of(bad_crawl, "/error"))["status"] == 500  # after its retries


def test_redirect_loop_is_recorded_not_followed_forever(bad_crawl: CrawlRun) -> None:
    loop = bad_crawl.page(url_of(bad_crawl, "/loop-a"))
    assert loop["status"] == 302 and loop["error"] == "redirect loop" and loop["final_url"] is None
    assert [hop["url"] for hop in json.loads(loop["redirect_chain"])] == [url_of(bad_crawl, "/loop-a"), url_of(bad_crawl, "/loop-b")]


def test_wrong_and_non_utf8_encodings_decode(bad_crawl: CrawlRun) -> None:
    latin = bad_crawl.page(url_of(bad_crawl, "/latin1"))
    assert latin["title"] == "Café crème" and "café crème à emporter" in latin["main_text"]
    cyrillic = bad_crawl.page(url_of(bad_crawl, "/cyrillic"))
    assert cyrillic["title"] == "Кофе" and "Свежий кофе" in cyrillic["main_text"]


def test_malformed_html_still_parses(bad_crawl: CrawlRun) -> None:
    page = bad_crawl.page(url_of(bad_crawl, "/malformed"))
    assert page["title"] == "Broken" and page["is_html"] == 1


def test_oversized_page_is_cut_off_and_recorded(bad_crawl: CrawlRun) -> None:
    page = bad_crawl.page(url_of(bad_crawl, "/huge"))
    assert page["status"] is None and "larger than download max size" in page["error"]


def test_binary_served_as_html_is_not_parsed(bad_crawl: CrawlRun) -> None:
    page = bad_crawl.page(url_of(bad_crawl, "/binary"))
    assert page["status"] == 200 and page["is_html"] == 0 and "binary" in page["error"]
    image = bad_crawl.page(url_of(bad_crawl, "/image.png"))
    assert image["content_type"] == "image/png" and image["is_html"] == 0 and image["main_text"] is None


def test_infinite_spaces_are_bounded(bad_crawl: CrawlRun) -> None:
    db = bad_crawl.db
    calendar = db.execute("SELECT count(*), max(depth) FROM pages WHERE url LIKE '%/calendar/%'").fetchone()
    assert calendar == (50, 50)  # default max_depth: pages at depth 50 are fetched, their links not followed
    sessions = db.execute("SELECT count(*) FROM pages WHERE url LIKE '%/session?%'").fetchone()[0]
    assert sessions == 20  # default max_query_variants per path


def test_a_frameset_s_pages_are_crawled_through_its_frames(bad_crawl: CrawlRun) -> None:
    depths = {path: bad_crawl.page(url_of(bad_crawl, path))["depth"]
              for path in ("/frames/", "/frames/toc.html", "/frames/cover.html", "/frames/chapter.html")}
    assert depths == {"/frames/": 1, "/frames/toc.html": 2, "/frames/cover.html": 2, "/frames/chapter.html": 3}
    assert bad_crawl.page(url_of(bad_crawl, "/frames/chapter.html"))["status"] == 200


def test_max_depth_and_max_pages(tmp_path: Path) -> None:
    with serve_bad_site() as url:
        shallow = run_crawl(url, tmp_path / "shallow.db", "-a", "max_depth=3", "-a", "max_query_variants=100")
        capped = run_crawl(url, tmp_path / "capped.db", "-a", "max_pages=5")
    assert shallow.db.execute("SELECT count(*) FROM pages WHERE url LIKE '%/calendar/%'").fetchone()[0] == 3
    assert shallow.db.execute("SELECT max(depth) FROM pages").fetchone()[0] == 3
    assert capped.db.execute("SELECT count(*) FROM pages").fetchone()[0] == 5
    assert capped.db["crawls"].get(1)["status"] == "capped"


def test_ctrl_c_leaves_a_consistent_database_and_a_rerun_completes(tmp_path: Path) -> None:
    db_path = tmp_path / "interrupted.db"
    with serve_bad_site(delay=0.1) as url:
        command = [*SCRAPY, "crawl", "site", "-a", f"url={url}", "-a", f"db={db_path}", "-s", "AUTOTHROTTLE_ENABLED=False",
                   "-s", "SQLITE_BATCH_SIZE=5", "-s", "LOG_LEVEL=WARNING"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_pages(db_path, 5, timeout=60)  # mid-crawl: a first batch is written, the calendar goes on
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 1 and "interrupted" in stderr
        assert_sound(db_path)
        db = sqlite_utils.Database(db_path)
        assert db["crawls"].get(1)["status"] == "interrupted"
        partial = db.execute("SELECT count(*) FROM pages").fetchone()[0]
        assert 5 <= partial < 80
        rerun = run_crawl(url, db_path)
    assert rerun.returncode == 0, rerun.stderr
    assert_sound(db_path)
    assert rerun.db.execute("SELECT count(*) FROM pages WHERE url LIKE '%/calendar/%'").fetchone()[0] == 50
    assert rerun.db.execute("SELECT count(*) FROM pages WHERE gone = 1").fetchone()[0] == 0


def test_a_batch_another_programs_write_holds_out_is_written_with_the_next(bad_crawl: CrawlRun, tmp_path: Path) -> None:
    """An analysis of the same database holds its write lock while it writes its tables: a crawl's batch kept out past
    SQLITE_BUSY_TIMEOUT is kept and written with the next, and the crawl stores every page all the same."""
    db_path = tmp_path / "shared.db"
    with serve_bad_site(delay=0.1) as url:
        command = [*SCRAPY, "crawl", "site", "-a", f"url={url}", "-a", f"db={db_path}", "-s", "AUTOTHROTTLE_ENABLED=False",
                   "-s", "SQLITE_BATCH_SIZE=5", "-s", "SQLITE_BUSY_TIMEOUT=0.2", "-s", "LOG_LEVEL=WARNING"]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_pages(db_path, 5, timeout=60)
        with closing(sqlite3.connect(db_path)) as analysis:
            analysis.execute("BEGIN IMMEDIATE")  # its tables, being written
            time.sleep(0.8)
            analysis.rollback()
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert "pages not written yet (database is locked" in stderr
    assert_sound(db_path)
    assert crawled_paths(db_path) == crawled_paths(bad_crawl.db_path)


def crawl_under_a_lock(url: str, db_path: Path, log: Path, release_on: str | None) -> subprocess.CompletedProcess:
    """Crawl into db_path, every page in the last batch, while a second connection (an analysis writing its tables)
    holds the write lock from the crawl's start: until the log says release_on, or to the end."""
    command = [*SCRAPY, "crawl", "site", "-a", f"url={url}", "-a", f"db={db_path}", "-s", "AUTOTHROTTLE_ENABLED=False",
               "-s", "SQLITE_BATCH_SIZE=10000", "-s", "SQLITE_BUSY_TIMEOUT=0.2", "-s", "SQLITE_CLOSE_TIMEOUT=2",
               "-s", "LOG_LEVEL=WARNING", "-s", f"LOG_FILE={log}"]
    crawls = sqlite_utils.Database(db_path)["crawls"].count if db_path.exists() else 0
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (db_path.exists() and "crawls" in (db := sqlite_utils.Database(db_path)).table_names()
               and db["crawls"].count > crawls):
        assert time.monotonic() < deadline and process.poll() is None, "the crawl did not start"
        time.sleep(0.02)
    with closing(sqlite3.connect(db_path)) as analysis:
        analysis.execute("BEGIN IMMEDIATE")
        while release_on is not None and release_on not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline and process.poll() is None, "the crawl did not wait for the lock"
            time.sleep(0.05)
        if release_on is None:
            process.wait(timeout=120)
        analysis.rollback()
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def crawled_paths(db_path: Path, where: str = "1") -> set[str]:
    with closing(sqlite3.connect(db_path)) as db:
        return {urlsplit(page).path for page, in db.execute(f"SELECT url FROM pages WHERE {where}")}


def test_a_crawls_last_batch_waits_longer_for_another_programs_write(bad_crawl: CrawlRun, tmp_path: Path) -> None:
    """The last batch and the crawl's close have no next batch to go with: held out past SQLITE_BUSY_TIMEOUT, they
    wait up to SQLITE_CLOSE_TIMEOUT more, and the crawl ends whole."""
    db_path, log = tmp_path / "shared.db", tmp_path / "crawl.log"
    with serve_bad_site(delay=0.1) as url:
        done = crawl_under_a_lock(url, db_path, log, release_on="the crawl's last write waits up to 2 s more")
    assert done.returncode == 0, done.stderr + log.read_text()
    assert "another program is writing to the database (database is locked)" in log.read_text()
    assert_sound(db_path)
    assert sqlite_utils.Database(db_path)["crawls"].get(1)["status"] == "finished"
    assert crawled_paths(db_path) == crawled_paths(bad_crawl.db_path)


def test_a_crawl_whose_end_stays_locked_out_says_so_and_marks_no_stored_page_gone(bad_crawl: CrawlRun,
                                                                                   tmp_path: Path) -> None:
    """Locked out past SQLITE_CLOSE_TIMEOUT as well, the last batch is lost and the crawl's close is not made (it would
    count that batch's pages gone): the crawl's row stays 'running', the command says so in one line and exits 1,
    and the same command run again completes the crawl."""
    db_path, log = tmp_path / "recrawl.db", tmp_path / "crawl.log"
    db_path.write_bytes(bad_crawl.db_path.read_bytes())
    before = crawled_paths(db_path, "gone = 0")
    with serve_bad_site(delay=0.1) as url:
        done = crawl_under_a_lock(url, db_path, log, release_on=None)
        assert done.returncode == 1
        assert done.stderr.strip().splitlines()[-1] == (
            "error: the crawl's last pages or its close were not written (see the log above); the pages written are "
            "kept: run the same command again to complete it")
        assert "were not written: another program held the database's write lock throughout" in log.read_text()
        assert_sound(db_path)
        assert sqlite_utils.Database(db_path)["crawls"].get(2)["status"] == "running"
        assert crawled_paths(db_path, "gone = 0") == before
        again = run_crawl(url, db_path)
    assert again.returncode == 0, again.stderr
    assert crawled_paths(db_path, "gone = 0") == before
