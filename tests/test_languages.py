"""A site in two languages: each page is paired with pages of its own language only (or of none declared).

The German pages are the English posts under /de/, declared `lang="de-DE"` with titles of their own: a page and its
translation at their closest, the same words. Real spider, real server, real model.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sqlite_utils

from analysis.backtest import editorial_links
from analysis.load import Corpus, Spans, language_of, load_corpus
from conftest import ROOT, run_crawl
from linkspider.localserver import serve
from tinysite import HOME, SLUGS, tiny_site

GERMAN = SLUGS[:5]


def bilingual_site(folder: Path) -> Path:
    """The tiny site, with GERMAN's posts again under /de/blog/ in German, all listed on the home page."""
    tiny_site(folder, SLUGS[:6])
    for slug in GERMAN:
        english = (folder / "blog" / slug / "index.html").read_text(encoding="utf-8")
        german = (english.replace('<html lang="en">', '<html lang="de-DE">').replace("<title>", "<title>Auf Deutsch: ")
                  .replace(f'href="/blog/{slug}/"', f'href="/de/blog/{slug}/"'))
        assert german.count("Auf Deutsch") == 1 and 'lang="de-DE"' in german
        (folder / "de" / "blog" / slug).mkdir(parents=True)
        (folder / "de" / "blog" / slug / "index.html").write_text(german, encoding="utf-8")
    paths = [f"/blog/{slug}/" for slug in SLUGS[:6]] + [f"/de/blog/{slug}/" for slug in GERMAN]
    items = "".join(f"<li><a href='{path}'>{path}</a></li>" for path in paths)
    (folder / "index.html").write_text(HOME.format(title="Two languages", items=items), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = bilingual_site(tmp_path_factory.mktemp("site") / "site")
    db = tmp_path_factory.mktemp("db") / "two.db"
    with serve(folder) as url:
        assert run_crawl(url, db).returncode == 0
    done = subprocess.run([sys.executable, "-m", "analysis", str(db), "--no-progress"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return db, done.stdout


def german(url: str) -> bool:
    return "/de/" in url


def test_no_suggestion_and_no_cannibalisation_joins_two_languages(analysed: tuple[Path, str]) -> None:
    db, stdout = analysed
    suggestions = list(sqlite_utils.Database(db)["suggestions"].rows)
    assert {german(row["source"]) for row in suggestions} == {True, False}  # both languages get suggestions
    assert all(german(row["source"]) == german(row["target"]) for row in suggestions)
    with open(db.with_suffix(".cannibalization.csv"), newline="") as handle:
        pairs = list(csv.DictReader(handle))
    assert all(german(row["page"]) == german(row["other"]) for row in pairs)
    line = "en 6, de-de 5 pages: a page is paired only with pages of its own language (and region), or of none declared"
    assert f"languages: {line}" in stdout and f"Languages: {line}." in db.with_suffix(".report.html").read_text(encoding="utf-8")


def test_all_languages_pairs_pages_whatever_they_declare(analysed: tuple[Path, str], tmp_path: Path) -> None:
    """--all-languages, for a site whose language tags are wrong: a page and its translation (here the same text) are
    cannibalisation again, and the summary says nothing of languages."""
    db = tmp_path / "copy.db"
    shutil.copy(analysed[0], db)
    done = subprocess.run([sys.executable, "-m", "analysis", str(db), "--no-progress", "--all-languages"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    with open(db.with_suffix(".cannibalization.csv"), newline="") as handle:
        pairs = list(csv.DictReader(handle))
    assert any(german(row["page"]) != german(row["other"]) for row in pairs) and "languages:" not in done.stdout


def test_the_backtest_hides_no_link_between_two_languages(analysed: tuple[Path, str]) -> None:
    """The German posts link the English ones in their text (their links were left as they were): links the engine
    would never propose, so the backtest never hides one."""
    db = sqlite_utils.Database(analysed[0])
    across = db.execute("SELECT count(*) FROM links WHERE region = 'content' AND source LIKE '%/de/%' AND target LIKE '%/blog/%' "
                        "AND target NOT LIKE '%/de/%'").fetchone()[0]
    links = editorial_links(db, load_corpus(db))
    assert across > 0 and links and all(german(link.source) == german(link.resolved) for link in links)


@pytest.mark.parametrize(("declared", "language"), [
    ("en", "en"), ("en-US", "en-us"), ("EN_gb", "en-gb"), (" de-DE ", "de-de"), ("zh-Hant-TW", "zh-hant-tw"), ("haw", "haw"),
    ("und", ""), ("und-US", ""), ("de, en", ""), ("x-klingon", ""), ("", ""), (None, ""), ("english", ""), ("en-", ""),
])
def test_a_page_s_language_is_its_tag_in_lower_case(declared: str | None, language: str) -> None:
    assert language_of(declared) == language


def corpus_in(languages: list[str]) -> Corpus:
    pages = len(languages)
    return Corpus(urls=[f"http://s/{i}" for i in range(pages)], titles=languages, texts=languages, hashes=languages,
                  depths=[1] * pages, published=[None] * pages, inbound=[0] * pages, content_codes=np.zeros(0, dtype=np.int64),
                  template_codes=np.zeros(0, dtype=np.int64), link_spans=Spans.empty(pages), languages=languages)


def test_a_language_goes_with_its_regions_and_pages_of_none_with_all() -> None:
    """en goes with en-us and en-gb, which are two sections of an international site; de with neither; "" with all."""
    corpus = corpus_in(["en", "en-us", "en-gb", "de", "", "en-us"])
    assert corpus.one_language(np.arange(36)).reshape(6, 6).tolist() == [[True, True, True, False, True, True],
                                                                         [True, True, False, False, True, True],
                                                                         [True, False, True, False, True, False],
                                                                         [False, False, False, True, True, False],
                                                                         [True, True, True, True, True, True],
                                                                         [True, True, False, False, True, True]]
    assert corpus.multilingual and not corpus_in(["en", "en-us", "", "en-us"]).multilingual
    assert corpus_in(["en-us", "en-gb"]).multilingual and corpus_in(["en", "en"]).languages_line() is None
