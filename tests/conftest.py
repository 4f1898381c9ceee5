"""Shared fixtures: local HTTP servers on 127.0.0.1 and real `scrapy crawl site` runs against them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlite_utils

from linkspider.db import open_database
from linkspider.localserver import serve

if TYPE_CHECKING:
    from analysis.index import Keywords
    from analysis.load import Corpus
    from handmade import Site

ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = ROOT / "demo" / "site"
SCRAPY = [sys.executable, "-m", "scrapy.cmdline"]


# `python -m MODULE ARGS` with a hook that lists, at its exit, the libraries the process imported: -X importtime does not
# report imports made through importlib.import_module, as Scrapy loads its commands and settings.
LIBRARIES_AT_EXIT = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print('LIBRARIES', sorted({m.split('.')[0] for m in sys.modules}), file=sys.stderr))\n"
    "module, sys.argv = sys.argv[1], sys.argv[1:]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def libraries_imported(module: str, *args: str, env: dict[str, str] | None = None,
                       timeout: float = 300) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The finished `python -m module args` and the top-level libraries it imported."""
    done = subprocess.run([sys.executable, "-c", LIBRARIES_AT_EXIT, module, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    [line] = [line for line in done.stderr.splitlines() if line.startswith("LIBRARIES ")]
    return done, set(ast.literal_eval(line.removeprefix("LIBRARIES ")))


@dataclass
class CrawlRun:
    """One finished `scrapy crawl site` process and the database it wrote."""

    returncode: int
    stdout: str
    stderr: str
    db_path: Path

    @property
    def db(self) -> sqlite_utils.Database:
        return sqlite_utils.Database(self.db_path)

    def page(self, url: str) -> dict:
        return self.db["pages"].get(url)


def run_crawl(url: str, db_path: Path, *args: str, timeout: float = 180) -> CrawlRun:
    """Run the real crawl command in a subprocess, from the project root, fast settings for loopback."""
    command = [*SCRAPY, "crawl", "site", "-a", f"url={url}", "-a", f"db={db_path}",
               "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=WARNING", *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return CrawlRun(done.returncode, done.stdout, done.stderr, db_path)


@pytest.fixture(scope="session")
def demo_url() -> Iterator[str]:
    with serve(DEMO_SITE) as url:
        yield url


@pytest.fixture(scope="session")
def demo_crawl(demo_url: str, tmp_path_factory: pytest.TempPathFactory) -> CrawlRun:
    """The demo site crawled once for the whole session (tests must not write to it)."""
    run = run_crawl(demo_url, tmp_path_factory.mktemp("demo") / "demo.db")
    assert run.returncode == 0, run.stderr
    return run


def two_page_database(path: Path) -> Path:
    """A crawl database of two plain 60-word pages: enough for `scrapy analyze` to load a model."""
    db = open_database(path)
    for page in ("a", "b"):
        db["pages"].insert({"url": f"http://127.0.0.1:1/{page}", "final_url": f"http://127.0.0.1:1/{page}", "status": 200,
                            "is_html": 1, "title": page, "main_text": "word " * 60, "word_count": 60, "content_hash": page,
                            "gone": 0, "noindex": 0})
    db.close()
    return path


# --- the analysis stage tests' hand-made crawl databases (handmade.py): the fixtures more than one stage file uses ---
# Each fixture imports what it needs of handmade.py when it runs: handmade imports ROOT from this module, and the
# crawler's tests need not load the analysis.


@pytest.fixture
def site(tmp_path: Path) -> Site:
    from handmade import Site

    return Site(tmp_path / "crawl.db")


@pytest.fixture
def five(site: Site) -> tuple[Corpus, Keywords]:
    from analysis.index import Keywords
    from handmade import prose, url

    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming", "roast-levels"]):
        site.post(f"/p{i}/", slug)
    site.link("/p0/", "/p1/", prose("french-press-guide").links[1][1])  # content link 0 -> 1
    site.link("/p3/", "/p4/", "Roast levels", region="nav")  # template link 3 -> 4
    corpus = site.corpus()
    assert corpus.urls == [url(f"/p{i}/") for i in range(5)]
    return corpus, Keywords(corpus.texts)


@pytest.fixture
def ranked_site(tmp_path: Path) -> tuple[Corpus, Keywords]:
    from analysis.index import Keywords
    from handmade import RANK_SLUGS, blog_site

    corpus = blog_site(tmp_path / "rank.db", RANK_SLUGS).corpus()
    return corpus, Keywords(corpus.texts)
