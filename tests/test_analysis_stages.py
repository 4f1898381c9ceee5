"""The analysis stages one at a time, on small crawl databases written by hand, with exact expectations.

Every database here is a fresh one from linkspider.db.open_database with rows inserted as the crawler stores
them; page texts are real prose from demo/content/posts with the tags stripped. Weights and constants of
analysis/score.py and analysis/anchors.py are still being tuned, so these tests check mechanisms (what is
excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import html
import inspect
import itertools
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from analysis import anchor_keys, anchors, contexts, fill, index, load, memory, pipeline, score, stop_words
from analysis.anchors import SHORTER_ANCHOR, Anchor, AnchorFinder, Found, page_names, title_anchor
from analysis.backtest import HiddenLink, editorial_links, hidden_links, tfidf_baseline
from analysis.candidates import (PEERS, Candidate, Candidates, cosines, find_candidates, one_copy_each, same_texts,
                                 with_peer_links)
from analysis.citations import Citations
from analysis.export import CSV_HEADER, export_csv, neutralise, rejected_pairs, save_cannibalization, save_suggestions
from analysis.index import Keywords, nearest
from analysis.locality import rows_of, source_starts, steps, visit_order
from analysis.lookup import HashTable
from analysis.phrases import MAX_WORDS, MIN_WORDS, phrases_of, version_numbers, web_addresses
from analysis.windows import WINDOWS_AT_FIRST, choose, runs_held, spoken_words, strong_windows
from analysis.load import (LISTED_ANCHOR_CHARS, MAX_LINK_DENSITY, Corpus, EmptyCrawl, Spans, among, distinct, load_corpus, pair_codes,
                           template_lines)
from analysis.scope import Scope, ScopeError
from analysis.series import Series
from analysis.vague import is_vague, vague_links
from analysis.score import Suggestion, _firsts, rank
from analysis.words import (ARTICLES, CLAUSE_WORDS, COPULAS, PHRASE_BREAKS, PHRASE_JOINERS, WORD, TokenFile, Tokens,
                            Vocabulary, is_stop_word, run_hashes, stem, terms, word_counts)
from conftest import ROOT
from linkspider.db import open_database
from linkspider.sentences import sentence_at, sentence_spans

POSTS_DIR = ROOT / "demo" / "content" / "posts"
SLUGS = sorted(path.stem for path in POSTS_DIR.glob("*.html"))
BASE = "https://blog.example"
_BLOCK_END = re.compile(r"</(?:p|li|h[1-6]|ul|ol)>")
_LINK = re.compile(r'<a href="([^"]+)">(.*?)</a>', re.S)
_TAG = re.compile(r"<[^>]+>")

# Not a word of English, so no coffee post mentions any of it.
LOREM_TITLE = "Lorem Ipsum Dolor Sit Amet Consectetur Adipiscing"
LOREM = " ".join([
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed eiusmod tempor incididunt ut labore et dolore",
    "magna aliqua. Quis nostrud exercitation ullamco laboris nisi aliquip commodo consequat. Duis aute irure",
    "reprehenderit voluptate velit esse cillum fugiat nulla pariatur. Excepteur sint occaecat cupidatat non",
    "proident, sunt culpa qui officia deserunt mollit anim id est laborum. Curabitur pretium tincidunt lacus,",
    "nulla gravida orci. Pellentesque habitant morbi tristique senectus netus malesuada fames turpis egestas.",
])


# --- hand-made crawl databases ---------------------------------------------------------------------------------


def _flatten(markup: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", markup)).split())


@dataclass(frozen=True)
class Prose:
    title: str
    text: str  # one line per paragraph, heading and list item, as the extractor writes main_text
    links: tuple[tuple[str, str, int], ...]  # (href as written, anchor, offset of the anchor in text)


@cache
def prose(slug: str) -> Prose:
    """A demo post's title, tag-stripped text and links."""
    _, front, body = (POSTS_DIR / f"{slug}.html").read_text(encoding="utf-8").split("---", 2)
    title = html.unescape(next(line.split(":", 1)[1].strip() for line in front.splitlines() if line.startswith("title:")))
    text = "\n".join(line for line in (_flatten(part) for part in _BLOCK_END.split(body)) if line)
    links, cursor = [], 0
    for href, inner in _LINK.findall(body):
        anchor = _flatten(inner)
        offset = text.index(anchor, cursor)
        links.append((href, anchor, offset))
        cursor = offset + len(anchor)
    return Prose(title, text, tuple(links))


def url(path: str) -> str:
    return path if path.startswith("http") else BASE + path


def page_numbers(corpus: Corpus) -> dict[str, int]:
    """Each page's number in the corpus, by its path ("/notes/")."""
    return {urlsplit(address).path: page for page, address in enumerate(corpus.urls)}


class Site:
    """A crawl database written row by row, the way `scrapy crawl site` stores pages and links."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = open_database(path)
        self.texts: dict[str, str] = {}
        self.positions: Counter[str] = Counter()

    def page(self, path: str, title: str | None = None, text: str | None = None, *, status: int = 200, is_html: int = 1,
             noindex: int = 0, canonical: str | None = None, redirect_to: str | None = None, depth: int | None = 1,
             sitemap_only: int = 0, words: int | None = None, published: str | None = None, headings: str | None = None,
             code_spans: str | None = None) -> str:
        page_url = url(path)
        self.db["pages"].insert({
            "url": page_url, "final_url": url(redirect_to) if redirect_to else page_url,
            "redirect_to": url(redirect_to) if redirect_to else None, "status": status, "is_html": is_html,
            "title": title, "h1": title, "canonical": url(canonical) if canonical else None, "noindex": noindex,
            "main_text": text, "word_count": len((text or "").split()) if words is None else words,
            "content_hash": hashlib.sha1(f"{title}\n{text}".encode()).hexdigest() if text else None,
            "gone": 0, "depth": depth, "sitemap_only": sitemap_only, "in_sitemap": 1, "published": published, "headings": headings,
            "code_spans": code_spans,
        })
        if text:
            self.texts[page_url] = text
        return page_url

    def post(self, path: str, slug: str, **kwargs: object) -> str:
        return self.page(path, prose(slug).title, prose(slug).text, **kwargs)

    def link(self, source: str, target: str, anchor: str, region: str = "content", offset: int | None = None,
             context: str | None = None) -> None:
        """A link; one from the content has its anchor for its sentence unless a context is given."""
        source, target = url(source), url(target)
        if region == "content" and offset is None:
            offset = self.texts[source].index(anchor)
        self.positions[source] += 1
        self.db["links"].insert({
            "source": source, "target": target, "anchor": anchor, "region": region,
            "context": (context or anchor) if region == "content" else None, "text_offset": offset if region == "content" else None,
            "position": self.positions[source], "nofollow": 0, "external": int(not target.startswith(BASE + "/")),
        })

    def corpus(self, **kwargs: object) -> Corpus:
        return load_corpus(self.db, **kwargs)


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path / "crawl.db")


def blog_site(path: Path, slugs: list[str], *, links: bool = True) -> Site:
    """Posts at /blog/<slug>/ with their real content links between them (links to other posts are left out)."""
    built = Site(path)
    for slug in slugs:
        built.post(f"/blog/{slug}/", slug)
    if links:
        for slug in slugs:
            for href, anchor, offset in prose(slug).links:
                if href.startswith("/blog/") and href.strip("/").split("/")[-1] in slugs:
                    built.link(f"/blog/{slug}/", href, anchor, offset=offset)
    return built


def plain_corpus(texts: list[str], titles: list[str], **fields: object) -> Corpus:
    """A corpus made in memory of these pages, with no crawl: depth 1, undated, unlinked, unless fields say otherwise."""
    pages = len(texts)
    plain = dict(urls=[f"http://s/{i}" for i in range(pages)], hashes=["h"] * pages, depths=[1] * pages, published=[None] * pages,
                 inbound=[0] * pages, content_codes=np.zeros(0, dtype=np.int64), template_codes=np.zeros(0, dtype=np.int64),
                 link_spans=Spans.empty(pages))
    return Corpus(texts=texts, titles=titles, **{**plain, **fields})


def pairs_of(corpus: Corpus, pairs: set[tuple[int, int]]) -> set[tuple[str, str]]:
    return {(corpus.urls[a], corpus.urls[b]) for a, b in pairs}


# --- stage 1: load -----------------------------------------------------------------------------------------------


def mixed_site(site: Site) -> None:
    """Six articles and one of every page that must never be a source or target."""
    site.post("/a/", "french-press-guide")
    site.post("/b/", "aeropress-recipes")
    site.post("/c/", "pour-over-basics")
    site.post("/d/", "cupping-at-home", sitemap_only=1, depth=None)  # found only through the sitemap
    site.post("/e/", "travel-coffee-kit")  # linked from the nav only
    site.post("/f/", "coffee-on-a-budget")  # linked from a listing's content only
    site.page("/old-b/", status=301, is_html=0, redirect_to="/b/")
    site.post("/c/print/", "pour-over-basics", canonical="/c/")
    site.post("/draft/", "espresso-basics", noindex=1)
    site.post("/missing/", "v60-technique", status=404)
    thin = " ".join(prose("moka-pot-guide").text.split()[:20])
    site.page("/thin/", "Moka notes", thin)
    titles = [prose(slug).title for slug in SLUGS[:12]]
    site.page("/tags/brewing/", "Brewing", "Posts tagged brewing\n" + "\n".join(titles))
    for i, title in enumerate(titles):
        site.link("/tags/brewing/", "/f/" if i == 0 else f"/blog/{SLUGS[i]}/", title)
    a_links = prose("french-press-guide").links
    site.link("/a/", "/old-b/", a_links[1][1], offset=a_links[1][2])  # redirects to /b/
    site.link("/a/", "/c/print/", a_links[2][1], offset=a_links[2][2])  # canonicalised to /c/
    site.link("/a/", "/missing/", a_links[3][1], offset=a_links[3][2])
    site.link("/a/", "https://en.wikipedia.org/wiki/French_press", a_links[0][1], offset=a_links[0][2])
    site.link("/a/", "/e/", "Travel kit", region="nav")
    site.link("/a/", "/draft/", "Draft", region="nav")
    b_links = prose("aeropress-recipes").links
    site.link("/b/", "/c/", b_links[1][1], offset=b_links[1][2])
    site.link("/b/", "/c/", "Pour-over", region="footer")  # also in content: a content pair, not a template pair
    site.link("/b/", "/a/", "French press", region="footer")
    site.link("/c/", "/a/", prose("pour-over-basics").links[1][1], offset=prose("pour-over-basics").links[1][2])


def test_only_indexable_self_canonical_articles_are_loaded(site: Site) -> None:
    mixed_site(site)
    corpus = site.corpus()
    assert corpus.urls == [url(path) for path in ("/a/", "/b/", "/c/", "/d/", "/e/", "/f/")]
    assert corpus.titles[0] == prose("french-press-guide").title and corpus.texts[0] == prose("french-press-guide").text


def test_thin_pages_are_left_out_below_min_words(site: Site) -> None:
    mixed_site(site)
    assert url("/thin/") not in site.corpus().urls  # 20 words, default min_words 50
    assert url("/thin/") in site.corpus(min_words=20).urls
    assert url("/thin/") not in site.corpus(min_words=21).urls


@pytest.mark.parametrize("share, loaded", [(0.5, True), (1.0, True), (1.2, False), (2.0, False)])
def test_listing_pages_are_left_out_by_link_density(site: Site, share: float, loaded: bool) -> None:
    """A page whose content links cover more than MAX_LINK_DENSITY of its main text is a listing."""
    site.post("/a/", "french-press-guide")
    site.post("/b/", "aeropress-recipes")
    text = prose("pour-over-basics").text
    link_chars = int(share * MAX_LINK_DENSITY * len(text))  # at share 1.0: at the limit, not over it
    site.post("/c/", "pour-over-basics")
    site.link("/c/", "/a/", text[:link_chars], offset=0)
    assert (url("/c/") in site.corpus().urls) is loaded


def test_links_resolve_through_redirects_and_canonicals(site: Site) -> None:
    mixed_site(site)
    corpus = site.corpus()
    assert pairs_of(corpus, corpus.linked_pairs()) == {
        (url("/a/"), url("/b/")),  # through /old-b/ (301)
        (url("/a/"), url("/c/")),  # through /c/print/ (canonical)
        (url("/b/"), url("/c/")),
        (url("/c/"), url("/a/")),
    }
    assert corpus.inbound == [1, 1, 2, 0, 0, 0]


def test_pairs_linked_only_from_the_template_are_template_pairs(site: Site) -> None:
    mixed_site(site)
    corpus = site.corpus()
    template = set(zip((corpus.template_codes // len(corpus)).tolist(), (corpus.template_codes % len(corpus)).tolist()))
    assert pairs_of(corpus, template) == {(url("/a/"), url("/e/")), (url("/b/"), url("/a/"))}
    assert not template & corpus.linked_pairs()


def test_content_link_spans_are_recorded_per_source(site: Site) -> None:
    mixed_site(site)
    corpus = site.corpus()
    a_links = prose("french-press-guide").links
    spans = set(corpus.link_spans[0])
    for _, anchor, offset in (a_links[1], a_links[2]):  # to /old-b/ and /c/print/
        assert (offset, offset + len(anchor)) in spans
        assert corpus.texts[0][offset:offset + len(anchor)] == anchor


def test_hidden_pairs_are_treated_as_unlinked(site: Site) -> None:
    mixed_site(site)
    anchor, offset = prose("french-press-guide").links[1][1:]
    corpus = site.corpus(hidden={(url("/a/"), url("/old-b/"))})  # (source, target as linked)
    assert (url("/a/"), url("/b/")) not in pairs_of(corpus, corpus.linked_pairs())
    assert (offset, offset + len(anchor)) not in corpus.link_spans[0]  # the text stays, as after removing the link
    assert corpus.inbound[1] == 0
    assert url("/b/") in {orphan["url"] for orphan in corpus.orphans}
    assert pairs_of(corpus, corpus.linked_pairs()) == {(url("/a/"), url("/c/")), (url("/b/"), url("/c/")), (url("/c/"), url("/a/"))}


def test_orphans_are_pages_without_an_inbound_content_link(site: Site) -> None:
    mixed_site(site)
    orphans = site.corpus().orphans
    assert [orphan["url"] for orphan in orphans] == [url("/d/"), url("/e/")]  # /f/ is linked from a listing's content
    by_url = {orphan["url"]: orphan for orphan in orphans}
    assert by_url[url("/d/")]["sitemap_only"] is True and by_url[url("/d/")]["template_inbound"] == 0
    assert by_url[url("/e/")]["sitemap_only"] is False and by_url[url("/e/")]["template_inbound"] == 1
    assert by_url[url("/d/")]["title"] == prose("cupping-at-home").title and by_url[url("/d/")]["depth"] is None


def test_a_canonical_to_a_page_that_is_not_live_is_ignored(site: Site) -> None:
    site.post("/a/", "french-press-guide", canonical="/gone/")
    site.post("/b/", "aeropress-recipes")
    site.page("/gone/", status=404, is_html=1)
    assert site.corpus().urls == [url("/a/"), url("/b/")]


def test_a_page_served_word_for_word_under_two_urls_is_one_page_the_shallowest(site: Site) -> None:
    """A static site's "/" and "/index.html" with no canonical: one source and one target, whichever copy a link names;
    a page with the same text under another title is no copy (it is cannibalisation: candidates.same_texts)."""
    site.post("/", "french-press-guide", depth=0)
    site.post("/index.html", "french-press-guide", depth=2)
    site.post("/b/", "aeropress-recipes")
    site.page("/print/", "Printable", prose("aeropress-recipes").text)
    anchor, offset = prose("aeropress-recipes").links[0][1:]
    site.link("/b/", "/index.html", anchor, offset=offset)
    corpus = site.corpus()
    assert corpus.urls == [url("/"), url("/b/"), url("/print/")]
    assert pairs_of(corpus, corpus.linked_pairs()) == {(url("/b/"), url("/"))}
    assert corpus.inbound == [1, 0, 0]
    assert load.resolver(site.db)[url("/index.html")] == url("/")
    assert corpus.copies == [(0, url("/index.html"))]  # reported as cannibalisation, for a canonical or a redirect
    save_cannibalization(site.db, corpus, [], site.path.with_suffix(".cannibalization.csv"))
    assert [(row["page"], row["other"], row["similarity"]) for row in site.db["cannibalization"].rows] == [(url("/"), url("/index.html"), 1.0)]


def test_an_empty_crawl_raises(site: Site) -> None:
    with pytest.raises(EmptyCrawl, match="only 0 indexable"):
        site.corpus()


def test_a_crawl_with_one_candidate_page_raises(site: Site) -> None:
    site.post("/a/", "french-press-guide")
    site.post("/draft/", "espresso-basics", noindex=1)
    site.post("/missing/", "v60-technique", status=404)
    site.page("/thin/", "Thin", "Just a few words here.")
    site.page("/old/", status=301, is_html=0, redirect_to="/a/")
    with pytest.raises(EmptyCrawl, match="only 1 indexable"):
        site.corpus()


# --- stage 4: candidates -----------------------------------------------------------------------------------------

# Unit vectors with known cosines: (0,1) 0.8, (0,2) 0.96, (1,2) 0.768, (3,4) 0.6, every other pair 0.
VECTORS = np.array([
    [1.0, 0.0, 0.0, 0.0, 0.0],
    [0.8, 0.6, 0.0, 0.0, 0.0],
    [0.96, 0.0, 0.28, 0.0, 0.0],
    [0.0, 0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 0.6, 0.8],
], dtype=np.float32)
Neighbours = tuple[np.ndarray, np.ndarray]


@pytest.fixture
def five(site: Site) -> tuple[Corpus, Keywords]:
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming", "roast-levels"]):
        site.post(f"/p{i}/", slug)
    site.link("/p0/", "/p1/", prose("french-press-guide").links[1][1])  # content link 0 -> 1
    site.link("/p3/", "/p4/", "Roast levels", region="nav")  # template link 3 -> 4
    corpus = site.corpus()
    assert corpus.urls == [url(f"/p{i}/") for i in range(5)]
    return corpus, Keywords(corpus.texts)


def candidates_of(five: tuple[Corpus, Keywords], threshold: float, max_similarity: float, *,
                  excluded: set[tuple[int, int]] = frozenset(), mentions: set[tuple[int, int]] = frozenset(),
                  by_meaning: Neighbours | None = None, by_words: Neighbours | None = None, scope: Scope | None = None
                  ) -> tuple[Candidates, list[tuple[int, int, float]]]:
    """find_candidates on the five pages, every page a neighbour of every other by meaning and none by words (a source's
    nearest by words are candidates below the threshold) unless neighbours are given."""
    corpus, keywords = five
    arguments = {
        "corpus": corpus, "vectors": VECTORS, "keywords": keywords, "threshold": threshold, "max_similarity": max_similarity,
        "excluded": excluded, "by_meaning": nearest(VECTORS, 10) if by_meaning is None else by_meaning,
        "by_words": (np.zeros((5, 0), dtype=np.float32), np.zeros((5, 0), dtype=np.int64)) if by_words is None else by_words,
    }
    if scope is not None:
        arguments["allowed"] = scope.of(corpus.urls)
    if "mentions" in inspect.signature(find_candidates).parameters:  # pairs where the source names the target
        arguments["mentions"] = pair_codes(set(mentions), len(corpus))
    else:
        assert not mentions
    return find_candidates(**arguments)


def found(candidates: Candidates) -> set[tuple[int, int, bool]]:
    return {(c.source, c.target, c.template_linked) for c in candidates}


def test_candidates_are_the_unlinked_pairs_in_the_similarity_band(five: tuple[Corpus, Keywords]) -> None:
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, excluded={(2, 1)})
    # (0,1) is linked from content, (2,1) excluded (rejected), (0,2) and (2,0) near-duplicates, the rest under 0.5
    assert found(candidates) == {(1, 0, False), (1, 2, False), (3, 4, True), (4, 3, False)}
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]
    assert cannibalised[0][2] == pytest.approx(0.96, abs=1e-5)
    expected = {(1, 0): 0.8, (1, 2): 0.768, (3, 4): 0.6, (4, 3): 0.6}
    keywords = five[1]
    for candidate in candidates:
        assert candidate.similarity == pytest.approx(expected[candidate.source, candidate.target], abs=1e-5)
        lexical = keywords.similarity(np.array([candidate.source]), np.array([candidate.target]))[0]
        assert candidate.lexical == pytest.approx(lexical)


def test_threshold_and_exclusions_drop_candidates(five: tuple[Corpus, Keywords]) -> None:
    assert found(candidates_of(five, 0.7, 0.9)[0]) == {(1, 0, False), (1, 2, False), (2, 1, False)}
    assert found(candidates_of(five, 0.79, 0.9)[0]) == {(1, 0, False)}
    assert len(candidates_of(five, 0.5, 0.9, excluded={(1, 0), (1, 2), (2, 1), (3, 4), (4, 3)})[0]) == 0
    # a content-linked pair is never a candidate, whatever the band
    assert all((c.source, c.target) != (0, 1) for c in candidates_of(five, 0.0, 1.0)[0])


def test_an_excluded_page_is_neither_source_nor_target_and_only_chosen_targets_are_targets(
        five: tuple[Corpus, Keywords]) -> None:
    everything = found(candidates_of(five, 0.0, 1.0)[0])
    assert {0, 1, 2, 3, 4} <= {source for source, _, _ in everything} | {target for _, target, _ in everything}
    excluded = found(candidates_of(five, 0.0, 1.0, scope=Scope(exclude=("/p1/", "*/p3/")))[0])
    assert excluded == {pair for pair in everything if not {1, 3} & set(pair[:2])}  # a path or a whole URL
    chosen = found(candidates_of(five, 0.0, 1.0, scope=Scope(exclude=("/p4/",), targets=("/p[02]/",)))[0])
    assert chosen == {pair for pair in everything if pair[0] != 4 and pair[1] in (0, 2)}
    # the cannibalisation report is the site's, whatever the scope
    assert candidates_of(five, 0.5, 0.9, scope=Scope(targets=("/p1/",)))[1] == candidates_of(five, 0.5, 0.9)[1]


def test_a_scope_is_matched_on_paths_with_queries_and_leaving_nothing_is_an_error() -> None:
    urls = ["https://example.com/", "https://example.com/tag/tea/", "https://example.com/blog/?page=2", "https://example.com/blog/a/"]
    allowed = Scope(exclude=("/tag/*", "/blog/?page=*"), targets=("/blog/*", "/shop/*")).of(urls)
    assert allowed.sources.tolist() == [True, False, False, True]
    assert allowed.targets.tolist() == [False, False, False, True]
    assert allowed.line == ("pages excluded (neither source nor target): 2, pages that may be targets: 1; "
                            "matching no page: '/shop/*'")
    assert Scope(targets=("https://example.com/blog/*",)).of(urls).targets.tolist() == [False, False, True, True]
    with pytest.raises(ScopeError, match=re.escape("no analysed page outside --exclude matches --targets '/Blog/*'")):
        Scope(targets=("/Blog/*",)).of(urls)  # case-sensitive, as paths are
    with pytest.raises(ScopeError, match="leaves none of the 4 analysed pages"):
        Scope(exclude=("*",)).of(urls)
    with pytest.raises(ScopeError, match="outside --exclude"):
        Scope(exclude=("/blog/*",), targets=("/blog/a/",)).of(urls)


def test_the_tfidf_baseline_keeps_to_the_scope(five: tuple[Corpus, Keywords]) -> None:
    corpus, _ = five
    everything = tfidf_baseline(corpus, 4)  # every unlinked pair: four a page of five
    assert len(everything) == 5 * 4 - 1
    scoped = tfidf_baseline(corpus, 4, Scope(exclude=("/p1/",), targets=("/p[023]/",)).of(corpus.urls))
    assert scoped == {(source, target): title for (source, target), title in everything.items()
                      if source != 1 and target in (0, 2, 3)}


def test_pairs_above_max_similarity_are_cannibalisation_once(five: tuple[Corpus, Keywords]) -> None:
    candidates, cannibalised = candidates_of(five, 0.5, 0.7)
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 1), (0, 2), (1, 2)]  # a < b, each pair once
    assert found(candidates) == {(3, 4, True), (4, 3, False)}


def test_two_pages_with_the_same_main_text_are_cannibalisation_whatever_their_similarity(site: Site) -> None:
    """A page copied under another URL and title (a print version, a type re-exported under two paths) is a duplicate
    though its title keeps the embeddings apart (0.6 here, under the upper bound): reported, not suggested. A text of
    the same length that differs by a character is no copy."""
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming"]):
        site.post(f"/p{i}/", slug)
    site.page("/p4/", "Steaming milk, printable", prose("milk-steaming").text)
    corpus = site.corpus()
    assert corpus.texts[3] == corpus.texts[4]
    keywords = Keywords(corpus.texts)
    candidates, cannibalised = candidates_of((corpus, keywords), 0.5, 0.9)
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2), (3, 4)]
    assert cannibalised[1][2] == pytest.approx(0.6, abs=1e-5)
    assert not {(3, 4), (4, 3)} & {(c.source, c.target) for c in candidates}
    copy = corpus.texts[4]
    altered = dataclasses.replace(corpus, texts=[*list(corpus.texts)[:4], copy[:-1] + ("?" if copy[-1] != "?" else "!")])
    pairs = np.array([3 * len(corpus) + 4, 4 * len(corpus) + 3, 0 * len(corpus) + 1])
    assert same_texts(corpus, pairs).tolist() == [True, True, False]
    assert same_texts(altered, pairs).tolist() == [False, False, False]


def test_a_source_is_offered_one_copy_of_a_text_and_none_of_a_text_it_links() -> None:
    """Pages 1-4 are one type under four paths. Source 0 (in ffi/) gets the copy in its own section, though another
    is linked more; source 5 (at the top) the copy most pages link; source 6, which links page 4 already, none; page 7's
    text is its own, so its pair stays. Page 4, linked most, is not offered to 5 (dropped before): it is never kept."""
    paths = ["ffi/type.c_long.html", "ffi/type.c_int.html", "os/raw/type.c_int.html", "os/type.c_int.html",
             "x/type.c_int.html", "index.html", "guide.html", "ffi/index.html"]
    copy = "The type of a C int. " * 10
    corpus = plain_corpus(["c long", copy, copy, copy, copy, "top", "guide", "ffi"], [""] * 8,
                          urls=[f"http://s/{path}" for path in paths], inbound=[0, 1, 3, 2, 5, 0, 0, 0],
                          content_codes=pair_codes({(6, 4)}, 8))
    offered = {(0, 1), (0, 2), (0, 3), (5, 1), (5, 2), (5, 3), (6, 1), (6, 2), (0, 7)}
    pairs = np.array(sorted(pair_codes(offered | {(5, 4)}, 8).tolist()))
    keep = ~among(pairs, pair_codes({(5, 4)}, 8))  # a pair dropped already is never the copy kept
    one_copy_each(corpus, pairs, keep, corpus.texts.copy_sets())
    assert {tuple(divmod(int(code), 8)) for code in pairs[keep]} == {(0, 1), (5, 2), (0, 7)}


def test_candidates_come_only_from_the_neighbour_lists(five: tuple[Corpus, Keywords]) -> None:
    scores = np.zeros((5, 2), dtype=np.float32)
    by_meaning = (scores, np.array([[0, -1], [1, 2], [2, -1], [3, -1], [4, -1]]))  # self and -1 (missing) entries
    by_words = (scores, np.array([[0, -1], [1, -1], [2, -1], [3, -1], [4, 3]]))
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, by_meaning=by_meaning, by_words=by_words)
    assert found(candidates) == {(1, 2, False), (4, 3, False)} and cannibalised == []
    only_self = (scores, np.array([[i, -1] for i in range(5)]))
    candidates, cannibalised = candidates_of(five, 0.0, 1.0, by_meaning=only_self, by_words=only_self)
    assert len(candidates) == 0 and cannibalised == []


def test_neighbour_rows_of_some_pages_give_those_pages_pairs(five: tuple[Corpus, Keywords]) -> None:
    scores = np.zeros((2, 2), dtype=np.float32)
    first_two = (scores, np.array([[2, 1], [0, 2]]))  # rows for pages 0 and 1 only
    none = (np.zeros((0, 0), dtype=np.float32), np.zeros((0, 0), dtype=np.int64))
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, by_meaning=first_two, by_words=none)
    assert found(candidates) == {(1, 0, False), (1, 2, False)}  # (0, 1) is content-linked
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]


def test_a_source_s_nearest_pages_by_words_are_candidates_below_the_threshold(five: tuple[Corpus, Keywords],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The model reads a page's first 256 tokens, the keywords all of it: a target among the source's CLOSEST_BY_WORDS
    nearest pages by words (itself and missing entries aside) is a candidate whatever its embedding similarity, one
    further down the list is not, and a linked pair or a near-duplicate is not either."""
    monkeypatch.setattr("analysis.candidates.CLOSEST_BY_WORDS", 2)
    only_self = (np.zeros((5, 1), dtype=np.float32), np.arange(5).reshape(5, 1))
    by_words = (np.zeros((5, 5), dtype=np.float32), np.array([
        [0, 1, 2, 3, 4],  # (0,1) content-linked, (0,2) a near-duplicate (0.96), (0,3) past the first two
        [1, -1, -1, -1, -1],
        [2, -1, -1, -1, -1],
        [3, 0, 1, 2, 4],  # (3,0) and (3,1): similarity 0; (3,2) past the first two; (3,4) 0.6, template-linked
        [2, 4, 3, 0, 1],  # itself in second place: (4,2) and (4,3)
    ]))
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, by_meaning=only_self, by_words=by_words)
    assert found(candidates) == {(3, 0, False), (3, 1, False), (3, 4, True), (4, 2, False), (4, 3, False)}
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]


def test_a_mention_is_a_candidate_below_the_threshold_but_never_a_linked_pair(five: tuple[Corpus, Keywords]) -> None:
    if "mentions" not in inspect.signature(find_candidates).parameters:
        pytest.skip("find_candidates takes no mentions")
    scores = np.zeros((5, 2), dtype=np.float32)
    only_self = (scores, np.array([[i, -1] for i in range(5)]))
    # (3,0): similarity 0, mentioned; (0,1): content-linked; (0,2): near-duplicate; (2,1): rejected
    candidates, cannibalised = candidates_of(five, 0.5, 0.9, mentions={(3, 0), (0, 1), (0, 2), (2, 1)},
                                             excluded={(2, 1)}, by_meaning=only_self, by_words=only_self)
    assert [(c.source, c.target, c.mentioned) for c in candidates] == [(3, 0, True)]
    assert [(a, b) for a, b, _ in cannibalised] == [(0, 2)]
    assert all(not c.mentioned for c in candidates_of(five, 0.5, 0.9)[0])


def test_below_the_threshold_a_one_word_title_is_named_only_as_it_is_written(site: Site) -> None:
    """"Longer contact extracts more" names no "Contact Us", "the file size" no GIMP's File menu, "the framework folder"
    no CMake's FOLDER property: below the threshold, a target whose title is one word is a candidate of a source that
    mentions it only where the source writes that word as the title does, and not only first in a sentence. Titles of
    more words, and pairs over the threshold, are as before."""
    for path, title in [("/contact/", "Contact Us"), ("/file/", "File"), ("/folder/", "FOLDER"), ("/burr/", "Burr Grinders")]:
        site.page(path, title, f"What the {title} page is about, said in a few words.", words=100)
    site.page("/brewing/", "Brewing", "Longer contact extracts more. Keep the file size small in the framework folder. "
              "Burr grinders grind evenly.", words=100)
    site.page("/guide/", "Guide", "Contact us for help. Or write\nContact the team. Open the File menu and set the FOLDER property. "
              "burr grinders grind evenly.", words=100)
    corpus = site.corpus()
    page = {path.strip("/"): corpus.index[url(path)] for path in ("/contact/", "/file/", "/folder/", "/burr/", "/brewing/", "/guide/")}
    asked = {(page[source], page[target]) for source in ("brewing", "guide") for target in ("contact", "file", "folder", "burr")}
    vectors = np.eye(len(corpus), dtype=np.float32)  # every pair at similarity 0
    none = (np.zeros((len(corpus), 0), dtype=np.float32), np.zeros((len(corpus), 0), dtype=np.int64))
    found = {}
    for threshold in (0.5, -1.0):
        candidates, _ = find_candidates(corpus, vectors, nearest(vectors, 10), Keywords(corpus.texts), none,
                                        pair_codes(asked, len(corpus)), threshold, 0.9)
        found[threshold] = {(c.source, c.target) for c in candidates} & asked
    assert found[0.5] == {(page["brewing"], page["burr"]), (page["guide"], page["file"]), (page["guide"], page["folder"]),
                          (page["guide"], page["burr"])}
    assert found[-1.0] == asked


def test_a_page_the_source_s_peers_link_is_a_candidate_with_their_count(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page that PEERS_LINKING of a source's peers (its nearest pages by meaning) link from their main content is a
    candidate of the source's though it is not among its neighbours, if it is above the threshold; every candidate
    carries how many of its source's peers link its target."""
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming", "roast-levels"]):
        site.post(f"/p{i}/", slug)
    french_press = prose("french-press-guide")
    site.link("/p0/", "/p1/", french_press.links[1][1])
    site.link("/p0/", "/p2/", french_press.links[0][1])
    corpus = site.corpus()
    by_meaning = (np.zeros((5, 3), dtype=np.float32), np.array([
        [0, 1, 2],
        [1, 0, -1],  # its peer 0 links 2: (1,2), 0.768, though 2 is no neighbour of 1's
        [2, 0, 1],  # its peer 0 links 1: (2,1) carries 1
        [3, 0, -1],  # its peer 0 links 1 and 2, at similarity 0: under the threshold
        [4, -1, -1],
    ]))
    none = (np.zeros((5, 0), dtype=np.float32), np.zeros((5, 0), dtype=np.int64))
    peers_found = {}
    for least in (1, 2):
        monkeypatch.setattr("analysis.candidates.PEERS_LINKING", least)
        candidates, _ = candidates_of((corpus, Keywords(corpus.texts)), 0.5, 0.9, by_meaning=by_meaning, by_words=none)
        peers_found[least] = [(c.source, c.target, c.peer_links) for c in candidates]
    assert peers_found == {1: [(1, 0, 0), (1, 2, 1), (2, 1, 1)], 2: [(1, 0, 0), (2, 1, 1)]}


def test_only_a_source_s_first_peers_count_and_the_pairs_they_add_come_in_order() -> None:
    """Of a source's neighbours by meaning, the first PEERS that are not itself nor missing are its peers: the links of
    those further down do not count. The pairs that enough peers link join the given ones in code order."""
    pages, target = PEERS + 6, PEERS + 5
    links = np.array([page * pages + target for page in range(1, PEERS + 5)], dtype=np.int64)  # all but 0 link target
    row = [0, -1, *range(1, PEERS + 5)]
    neighbours = np.array([row] + [[page] + [-1] * (len(row) - 1) for page in range(1, pages)])
    given = np.array([1, target, 3 * pages + 2], dtype=np.int64)  # (0, 1), (0, target), (3, 2): none added, all kept
    added = given[[0, 2]]  # (0, target) comes in if PEERS_LINKING peers link it

    def merged(pairs: np.ndarray, least: int, rows: np.ndarray = neighbours) -> list[list[int]]:
        return [column.tolist() for column in with_peer_links(pairs, links, rows, pages, least)]

    assert merged(given, PEERS + 1) == merged(added, PEERS) == [given.tolist(), [0, PEERS, 0]]
    assert merged(added, PEERS + 1) == [added.tolist(), [0, 0]]
    assert merged(given[:0], 1, neighbours[:1]) == [[target], [PEERS]]  # rows for some pages only


def test_mentions_are_the_pairs_whose_source_holds_most_of_a_names_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keywords.mentions looks only at the pages holding one of a name's rarer words (a prefix filter), a block of
    sources at a time: the same pairs as the definition worked out for every (name, page); with per_source, each
    source's largest shares (then its heaviest names)."""
    rng = np.random.default_rng(11)
    words = [f"w{i}x" for i in range(80)]
    frequency = 1 / np.arange(1, len(words) + 1)  # a few common words, many rare ones, as in prose
    texts = [" ".join(rng.choice(words, size=int(rng.integers(5, 40)), p=frequency / frequency.sum())) for _ in range(300)]
    names = [" ".join(rng.choice(words, size=int(rng.integers(1, 6)), replace=False)) for _ in range(400)]
    owners = rng.integers(0, len(texts), len(names))
    keywords = Keywords(texts)
    idf, common = keywords.idf.astype(np.float64), keywords.idf_of_share(0.3)
    named = np.zeros((len(names), len(idf)))  # each name's weight by word, dense: the definition, worked out for every pair
    for row, name in enumerate(names):
        for term in {keywords.vocabulary.ids.get(term) for term in terms(name)} - {None}:  # each word's term, once
            named[row, term] = idf[term] if idf[term] >= common else 0.0
    weight = named.sum(axis=1)
    shares = (named / np.maximum(weight, 1e-9)[:, None]) @ (keywords.matrix.toarray() > 0).T  # name x source
    best: dict[int, tuple[float, float]] = {}  # pair code -> (share, name weight), the best of the target's names
    for row, source in zip(*np.nonzero((shares >= 0.6 - 1e-6) & (owners[:, None] != np.arange(len(texts))))):
        code = int(source) * len(texts) + int(owners[row])
        best[code] = max(best.get(code, (0, 0)), (round(float(shares[row, source]), 4), float(weight[row])))
    monkeypatch.setattr(Keywords, "MENTION_PAGES", 64)  # five blocks of sources
    assert 100 < len(best) and keywords.mentions(names, 0.6, 0.3, owners).tolist() == sorted(best)
    kept = [code for code in sorted(best, key=lambda code: (code // len(texts), -best[code][0], -best[code][1], code))]
    capped = [code for place, code in enumerate(kept) if sum(other // len(texts) == code // len(texts) for other in kept[:place]) < 2]
    assert keywords.mentions(names, 0.6, 0.3, owners, per_source=2).tolist() == sorted(capped) != sorted(best)
    pages_a_word = np.bincount(keywords.matrix.indices)  # a word searched by only on so many pages: fewer pairs, never others
    assert keywords.mentions(names, 0.6, 0.3, owners, word_pages=int(pages_a_word.max())).tolist() == sorted(best)
    assert len(keywords.mentions(names, 0.6, 0.3, owners, word_pages=0)) == 0
    middle = keywords.mentions(names, 0.6, 0.3, owners, word_pages=int(np.median(pages_a_word[pages_a_word > 0])))
    assert 0 < len(middle) < len(best) and set(middle.tolist()) <= set(best)


def test_a_listing_page_is_a_target_but_never_a_source(site: Site) -> None:
    """A category page lists posts by title, linked from headings the extractor keeps as text only ("other" links)."""
    slugs = ["french-press-guide", "aeropress-recipes", "chemex-guide"]
    for i, slug in enumerate(slugs):
        site.post(f"/p{i}/", slug)
    entries = [f"{prose(slug).title} - Jane Doe, 12 March 2024. A short excerpt about brewing coffee at home." for slug in slugs]
    site.page("/category/brewing/", "Category: brewing", " ".join(entries * 2))
    for slug, i in zip(slugs, range(3)):
        site.link("/category/brewing/", f"/p{i}/", prose(slug).title, region="other")
    text = prose("milk-steaming").text
    site.post("/p3/", "milk-steaming")
    site.link("/p3/", "/p0/", text[:LISTED_ANCHOR_CHARS], region="other")  # in its text, but a small share of it
    corpus = site.corpus()
    listing = corpus.urls.index(url("/category/brewing/"))
    assert corpus.listings.tolist() == [page == listing for page in range(len(corpus))]
    vectors = np.random.default_rng(7).standard_normal((len(corpus), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keywords = Keywords(corpus.texts)
    everyone = nearest(vectors, len(corpus))
    candidates, _ = find_candidates(corpus, vectors, everyone, keywords, everyone, np.zeros(0, dtype=np.int64), -1.0, 1.0)
    assert listing not in set(candidates.source.tolist())
    assert set(candidates.target.tolist()) == set(range(len(corpus)))  # the listing among them
    assert len(candidates) == (len(corpus) - 1) ** 2


def test_a_link_anchored_on_here_is_vague_and_gets_the_phrase_of_its_sentence_that_names_its_target(site: Site) -> None:
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming", *RANK_SLUGS[5:]]):
        site.post(f"/p{i}/", slug)
    text = ("Steamed milk wants a cold jug and a steady hand on the wand. " * 8
            + "For silky foam, read here about pouring latte art basics. Then read more.\n"
            + "Our Chemex notes sit on another page. See this link for pouring.\n"
            + "Three AeroPress recipes worth learning wait in the kitchen.\n"  # names /p1/, outside its link's sentence
            + "Cold jugs help too: see this post on latte art basics.")
    site.page("/notes/", "Milk notes", text)
    site.link("/notes/", "/p3/", "here", offset=text.index("here about"))  # vague, its sentence names the target
    site.link("/notes/", "/p1/", "read more")  # vague, its sentence names nothing (another does)
    site.link("/notes/", "/p2/", "Chemex notes")  # descriptive
    site.link("/notes/", "/p2/", "this link")  # vague; the phrase that names it is linked already
    site.link("/notes/", "/p3/", "this post")  # vague; the word that would complete its better anchor is a link
    site.link("/notes/", "/p0/", "basics", offset=text.rindex("basics"))
    corpus = site.corpus()
    links = vague_links(site.db, corpus, AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles)))
    notes = corpus.index[url("/notes/")]
    assert [(corpus.urls[link.target], link.anchor) for link in links] == [
        (url("/p3/"), "here"), (url("/p1/"), "read more"), (url("/p2/"), "this link"), (url("/p3/"), "this post")]
    assert all(link.source == notes and text[link.offset:].startswith(link.anchor)
               and text[link.context_offset:].startswith(link.context) for link in links)
    assert [link.context for link in links] == ["For silky foam, read here about pouring latte art basics.",
                                                "Then read more.", "See this link for pouring.",
                                                "Cold jugs help too: see this post on latte art basics."]
    assert [link.better for link in links] == ["latte art basics", None, None, "latte art"]  # whole (anchors.completion)
    assert text[links[0].better_offset:].startswith("latte art basics.")
    assert [is_vague(anchor) for anchor in ("Here", " here. ", "Read more…", "(this post)", "here we go", "Chemex")] == [
        True, True, True, True, False, False]


# --- stage 5a: rank and cap --------------------------------------------------------------------------------------

RANK_SLUGS = ["aeropress-recipes", "burr-vs-blade-grinders", "chemex-guide", "espresso-basics", "french-press-guide",
              "grind-size-chart", "pour-over-basics", "v60-technique"]


@pytest.fixture
def ranked_site(tmp_path: Path) -> tuple[Corpus, Keywords]:
    corpus = blog_site(tmp_path / "rank.db", RANK_SLUGS).corpus()
    return corpus, Keywords(corpus.texts)


def every_pair(corpus: Corpus, keywords: Keywords, similarity: float = 0.6) -> list[Candidate]:
    pairs = [(s, t) for s in range(len(corpus)) for t in range(len(corpus)) if s != t and (s, t) not in corpus.linked_pairs()]
    lexical = keywords.similarity(np.array([s for s, _ in pairs]), np.array([t for _, t in pairs]))
    return [Candidate(source=s, target=t, similarity=similarity, lexical=float(words), template_linked=False)
            for (s, t), words in zip(pairs, lexical)]


def ranked(corpus: Corpus, candidates: list[Candidate], finder: AnchorFinder, max_per_page: int,
           max_per_target: int) -> tuple[list[Suggestion], dict[int, int]]:
    """rank with both caps given: (queue, hubs); a rank that also returns the cap it used must return the one given."""
    spent = Candidates.of(candidates)
    result = rank(corpus, spent, finder, max_per_page, max_per_target)
    assert len(spent) == 0 and spent.source.dtype == np.int64  # its columns released (Candidates.release), their types kept
    if len(result) == 3:
        assert result[2] == max_per_target
    return result[0], result[1]


def test_keyword_similarity_of_pairs_in_chunks_on_threads_is_the_cosine(ranked_site: tuple[Corpus, Keywords],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, keywords = ranked_site
    sources, targets = np.divmod(np.arange(len(corpus) ** 2), len(corpus))
    cosine = (keywords.matrix @ keywords.matrix.T).toarray()[sources, targets]
    assert (cosine > 0.05).sum() > len(corpus)  # related pairs beside the page with itself
    monkeypatch.setattr(Keywords, "PAIRS_AT_ONCE", 7)  # many steps
    for threads in (1, 2, 4):
        monkeypatch.setattr(index, "THREADS", threads)
        assert np.allclose(keywords.similarity(sources, targets), cosine, atol=1e-6)


def test_pages_are_visited_breadth_first_over_their_pairs_and_every_pair_comes_once_a_page_at_a_time() -> None:
    """locality.py: two groups of pages whose ids alternate, pairing only within the group, are visited a group at a
    time (the order that keeps a stretch of sources on the same targets), whether the pairs name their targets or their
    codes; the rows come a page's together, pages in that order."""
    pages = 10
    pairs = [(s, t) for s in range(pages) for t in range(pages) if s != t and s % 2 == t % 2 and (s, t) != (6, 8)]
    sources, targets = np.array(pairs).T
    starts = source_starts(sources, pages)
    assert starts.tolist() == np.searchsorted(sources, np.arange(pages + 1)).tolist()
    assert source_starts(sources * pages + targets, pages, pages).tolist() == starts.tolist()
    with pytest.raises(ValueError):  # unsorted pairs would be left out of the steps
        source_starts(sources[::-1], pages)
    order = visit_order(starts, targets, pages)
    assert order.tolist() == [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]
    assert visit_order(starts, sources * pages + targets, pages).tolist() == order.tolist()
    alone = np.searchsorted(np.array([3, 3]), np.arange(pages + 1))  # a page with no pair is visited too, once
    assert sorted(visit_order(alone, np.array([1, 5]), pages).tolist()) == list(range(pages))
    for size in (1, 7, 100):
        chunks = [rows_of(starts, order, step) for step in steps(starts, order, size)]
        rows = np.concatenate(chunks)
        assert sorted(rows.tolist()) == list(range(len(pairs)))
        assert distinct(sources[rows]).tolist() == sorted(order.tolist()) and \
            [page for page, _ in itertools.groupby(sources[rows].tolist())] == order.tolist()
        assert all(len(set(sources[chunk].tolist()) & set(sources[other].tolist())) == 0
                   for chunk, other in itertools.combinations(chunks, 2))  # no page split between two steps
        assert max(map(len, chunks)) < size + 4 and (size > 1 or len(chunks) == pages)  # a page holds 3 or 4


# Pages sharing 3 to 700 words, so that numpy sums every way it does (in order below 8, eight partial sums up to 128
# values, halves above); prints whether Keywords.similarity is scipy's row product sum to the bit, and what it covered.
SCIPY_SUM_SCRIPT = """
import numpy as np
from analysis.index import Keywords
rng = np.random.default_rng(11)
vocabulary = [f"zq{chr(97 + a)}{chr(97 + b)}{chr(97 + c)}" for a in range(26) for b in range(26) for c in range(2)]
keywords = Keywords([" ".join(rng.choice(vocabulary, size=int(rng.integers(3, 1400)))) for _ in range(40)])
sources, targets = np.divmod(np.arange(40 * 40), 40)
shared = np.asarray((keywords.matrix[sources] > 0).multiply(keywords.matrix[targets] > 0).sum(axis=1)).ravel()
expected = np.asarray(keywords.matrix[sources].multiply(keywords.matrix[targets]).sum(axis=1)).ravel()
print(np.array_equal(keywords.similarity(sources, targets), expected), shared.max() > 256, ((shared > 8) & (shared <= 128)).any())
"""


def test_keyword_similarity_is_scipys_row_product_sum_to_the_bit_also_loaded_from_numbas_cache(tmp_path: Path) -> None:
    """The compiled row product (_row_dots) sums as scipy does, to the bit; and it works loaded back from numba's cache,
    as every analysis after a machine's first loads it (a recursive version compiled fine, then died with a segfault
    when loaded back). Two processes on one fresh cache: the first compiles, the second loads."""
    for run in ("compiled", "loaded from the cache"):
        done = subprocess.run([sys.executable, "-c", SCIPY_SUM_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
        assert (done.returncode, done.stdout.split()) == (0, ["True", "True", "True"]), (run, done.stderr[-2000:])
        assert list(tmp_path.rglob("index._row_dots*.nbi"))  # the cache the second run loads


def test_no_compiled_loop_calls_one_of_another_file() -> None:
    """numba re-checks a cached function against its own file only: a compiled loop that called one from another file
    would keep the old callee, inlined, after that file changed (a stale cache crashed every analysis once, Dec 5).
    So each compiled loop calls only those of its own module."""
    import ast
    trees = {path.stem: ast.parse(path.read_text()) for path in (ROOT / "analysis").glob("*.py")}
    compiled = {module: {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                         and any(getattr(decorator, "id", None) == "compiled" for decorator in node.decorator_list)}
                for module, tree in trees.items()}
    crossing = []
    for module, tree in trees.items():
        imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    for alias in node.names if (node.module or "").startswith("analysis.")
                    and alias.name in compiled.get(node.module.split(".")[1], set())}
        crossing += [(module, node.name, call.func.id) for node in tree.body if isinstance(node, ast.FunctionDef)
                     and node.name in compiled[module] for call in ast.walk(node)
                     if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in imported]
    assert sum(map(len, compiled.values())) > 20 and crossing == []


def test_keywords_are_scikit_learns_tfidf_to_the_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit weighs its counts as scikit-learn's TfidfTransformer(sublinear_tf=True) does, bit for bit (IDF and
    matrix), with pages counted block by block as the vocabulary grows and the values weighed a few at a time."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfTransformer

    counted = []
    weigh = index._weigh
    monkeypatch.setattr(index, "_weigh", lambda counts, idf: (counted.append(counts.copy()), weigh(counts, idf)))
    monkeypatch.setattr(Keywords, "BLOCK_CHARACTERS", 2_000)
    monkeypatch.setattr(index, "WEIGH_AT_ONCE", 333)
    rng = np.random.default_rng(12)
    vocabulary = [f"w{number}x" for number in range(3_000)]
    texts = [" ".join(rng.choice(vocabulary[:int(rng.integers(10, 3_000))], size=int(rng.integers(1, 600)))) for _ in range(60)]
    keywords = Keywords(texts, [f"title {page}" for page in range(60)])
    expected = TfidfTransformer(sublinear_tf=True).fit(counted[0])
    assert np.array_equal(keywords.idf, expected.idf_)
    assert keywords.document_frequency.tolist() == np.bincount(counted[0].indices, minlength=counted[0].shape[1]).tolist()
    matrix = sparse.csr_matrix(expected.transform(counted[0]))
    assert (keywords.matrix.indptr.tolist(), keywords.matrix.indices.tolist()) == (matrix.indptr.tolist(), matrix.indices.tolist())
    assert np.array_equal(keywords.matrix.data, matrix.data) and keywords.matrix.data.dtype == np.float32
    assert len(keywords.vocabulary) > 1_000  # grown over the blocks



def test_the_stop_words_are_scikit_learns() -> None:
    """The analysis holds scikit-learn's list rather than import scikit-learn for it (analysis/stop_words.py)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert stop_words.ENGLISH_STOP_WORDS == ENGLISH_STOP_WORDS

# Freed blocks that glibc keeps in the middle of its heap: 400 MB in blocks of 4 MB, under its threshold once a 30 MB
# mapping was freed, below a block still held; prints how many MB the call gave back.
FREED_MEMORY_SCRIPT = """
import numpy as np
from analysis.memory import return_freed_memory
def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
mapping = np.ones(30 << 20, np.uint8)
del mapping
blocks = [np.ones(4 << 20, np.uint8) for _ in range(100)]
held = np.ones(1 << 20, np.uint8)
del blocks
before = rss_mb()
return_freed_memory()
print(round(before - rss_mb()))
"""


@pytest.mark.skipif(memory._MALLOC_TRIM is None or not Path("/proc/self/statm").exists(), reason="glibc and /proc only")
def test_memory_freed_by_a_stage_goes_back_to_the_system() -> None:
    """return_freed_memory gives back the freed blocks that glibc would keep (and a later stage's larger arrays would be
    mapped beside): the resident size falls by about their 400 MB."""
    done = subprocess.run([sys.executable, "-c", FREED_MEMORY_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) >= 350


def test_each_sources_firsts_in_queue_order_are_a_lexsorts() -> None:
    """score._firsts (compiled) keeps each source's first pairs by score, then target, in the order a lexsort by
    (source, -score, target) lists them: with many equal scores, sources of one pair and of more than `count`."""
    rng = np.random.default_rng(8)
    for count in (0, 1, 4, 9):
        sources = np.sort(rng.integers(0, 60, 2_000))
        targets = np.concatenate([rng.permutation(200)[:size] for size in np.bincount(sources)])  # distinct per source
        scores = rng.integers(0, 5, len(sources)) / 4  # many ties
        order = np.lexsort((targets, -scores, sources))
        place_in_source = np.arange(len(order)) - np.searchsorted(sources[order], sources[order])
        assert _firsts(sources, targets, scores, count).tolist() == order[place_in_source < count].tolist(), count


def test_embedding_similarities_are_numpys_row_product_sums_to_the_bit() -> None:
    """cosines (compiled, no rows gathered) gives what numpy's (a * b).sum(axis=1) gave before it, bit for bit, at the
    dimensions of the models one may pass (384, 768, 1024) and at odd ones (a row under 8 values, one just past 128)."""
    rng = np.random.default_rng(5)
    for dimensions in (384, 768, 1024, 7, 129):
        vectors = rng.standard_normal((300, dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        sources, targets = np.sort(rng.integers(0, 300, 20_000)), rng.integers(0, 300, 20_000)
        assert np.array_equal(cosines(vectors, sources * 300 + targets), (vectors[sources] * vectors[targets]).sum(axis=1)), dimensions


def test_keyword_neighbours_in_blocks_on_threads_are_the_nearest_by_cosine(ranked_site: tuple[Corpus, Keywords],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, keywords = ranked_site
    cosine = (keywords.matrix @ keywords.matrix.T).toarray()
    for threads, cells in ((1, 10 ** 9), (2, 3 * len(corpus)), (4, len(corpus))):  # one block; 3 rows a block; 1 row
        monkeypatch.setattr(index, "THREADS", threads)
        monkeypatch.setattr(Keywords, "BLOCK_CELLS", cells)
        similarities, neighbours = keywords.nearest(5)
        assert neighbours.shape == (len(corpus), 6)
        assert np.allclose(similarities, np.take_along_axis(cosine, neighbours, axis=1), atol=1e-6)
        assert np.allclose(similarities, -np.sort(-cosine, axis=1)[:, :6], atol=1e-6)  # the six best, best first


def test_topic_terms_are_each_pages_heaviest_words_the_first_among_equals_first() -> None:
    """As a stable argsort of each row's negated weights would take them: words said once on a page weigh alike."""
    rng = np.random.default_rng(3)
    words = [f"w{number}" for number in range(40)]
    texts = [" ".join(rng.choice(words, int(rng.integers(0, 30)))) for _ in range(60)] + [""]
    keywords = Keywords(texts)
    matrix = keywords.matrix
    for count in (0, 1, 5, 40):
        starts, ids, weights = keywords.topic_terms(count)
        for page in range(len(texts)):
            row = slice(matrix.indptr[page], matrix.indptr[page + 1])
            best = np.argsort(-matrix.data[row], kind="stable")[:count]
            assert ids[starts[page]:starts[page + 1]].tolist() == matrix.indices[row][best].tolist()
            assert weights[starts[page]:starts[page + 1]].tolist() == matrix.data[row][best].tolist()


def test_the_stemmer_matches_plurals_and_tenses_but_not_words_that_only_end_alike() -> None:
    assert terms("grinders brewing brewed lifetimes strings string's") == ["grinder", "brew", "brew", "lifetime", "string", "string"]
    assert stem("news") != stem("new")  # the page "News" is not named by "new APIs"
    assert stem("string") != stem("str")  # nor is Rust's `str` page by "string"
    assert stem("spring") == "spring" and stem("building") == "build"  # "-ing" goes where a vowel is left


def assert_sorted(queue: list[Suggestion]) -> None:
    assert [item.score for item in queue] == sorted((item.score for item in queue), reverse=True)


def greedy_fill(corpus: Corpus, candidates: list[Candidate], finder: AnchorFinder, per_page: int,
                per_target: int) -> tuple[list[tuple[int, int, float, Anchor]], dict[int, int]]:
    """The queue as the issue words it, one pair at a time in score order: (source, target, score, anchor) of each, and
    the hubs (the targets the cap refused pairs of). A pair enters where its source and its target have room and an
    anchor is left: its first text anchor (finder.anchors, searched for the pair alone) that points at the target from
    fewer than two pages, overlaps none of its source's, is no other page's name and no phrase its source links (or the
    queue has it link) elsewhere, else the title fallback, on the same terms; a text anchor is shown with the word that
    completes its phrase (anchors.completion), on the same terms."""
    scores = score._scored(corpus, Candidates.of(candidates), finder, per_page, False).scores
    order = sorted(range(len(candidates)), key=lambda row: (-scores[row], candidates[row].source, candidates[row].target))
    queue, per_source, per_target_count, wanted, used, spans = [], Counter(), Counter(), Counter(), Counter(), {}
    named = {name.lower(): page for page, name in enumerate(finder.names) if Counter(map(str.lower, finder.names))[name.lower()] == 1}
    for row in order:
        source, target = candidates[row].source, candidates[row].target
        if per_source[source] >= per_page:
            continue
        wanted[target] += 1  # by a source with room left
        if per_target_count[target] >= per_target:
            continue
        taken, text = spans.setdefault(source, []), corpus.texts[source]
        elsewhere = {text[start:end].lower() for start, end in [*corpus.link_spans[source], *taken]}  # linked, or queued
        anchor = next((anchor for anchor in finder.anchors(source, target)
                       if used[anchor.text.lower(), target] < fill.SAME_ANCHOR_PAGES and anchor.text.lower() not in elsewhere
                       and (anchor.source == "title" or named.get(anchor.text.lower(), target) == target)
                       and not any(anchor.span[0] < end and start < anchor.span[1] for start, end in taken if anchor.span)), None)
        if anchor is None:
            continue
        used[anchor.text.lower(), target] += 1
        if anchor.span:  # shown with the word that completes its phrase, where that word is free and names no other page
            start, end = anchor.span
            longer = anchors.completion(text, start, end)
            phrase = text[start:longer].lower()
            if (longer > end and not any(end < last and first < longer for first, last in [*taken, *corpus.link_spans[source]])
                    and named.get(phrase, target) == target and phrase not in elsewhere):
                anchor = Anchor(text[start:longer], "text", anchor.strength, start, anchor.context)
            taken.append(anchor.span)
        queue.append((source, target, round(scores[row], 4), anchor))
        per_source[source] += 1
        per_target_count[target] += 1
    return queue, {target: count for target, count in wanted.items() if count > per_target == per_target_count[target]}


@pytest.mark.parametrize("per_page, per_target", [(1, 1), (2, 2), (2, 3), (3, 2), (4, 1), (1, 4)])
def test_rank_fills_the_queue_in_score_order_under_both_caps(ranked_site: tuple[Corpus, Keywords], per_page: int,
                                                            per_target: int) -> None:
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), per_page, per_target)
    assert_sorted(queue)
    expected, expected_hubs = greedy_fill(corpus, candidates, AnchorFinder(corpus, keywords), per_page, per_target)
    assert [(item.source, item.target, item.score, item.anchor) for item in queue] == expected
    assert max(Counter(item.source for item in queue).values()) <= per_page
    assert max(Counter(item.target for item in queue).values()) <= per_target
    assert hubs == expected_hubs
    for target in hubs:
        assert Counter(item.target for item in queue)[target] == per_target


def test_the_compiled_walk_fills_the_same_queue_a_few_rows_at_a_time(ranked_site: tuple[Corpus, Keywords],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """fill.py's loop stops when its rows taken fill their buffer (they go into the queue), when its table of the
    anchors used would pass half full (it grows), and is handed the rows a block at a time: with room for two, blocks
    of three and a table of four slots at first, its queue and hubs are still the reference's."""
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    monkeypatch.setattr(fill, "OUT_ROWS", 2)
    monkeypatch.setattr(score, "FILL_ROWS_AT_ONCE", 3)
    monkeypatch.setattr(fill, "USED_SLOTS", 4)
    grown = []
    monkeypatch.setattr(fill, "_placed", lambda *tables, real=fill._placed: grown.append(len(tables[2])) or real(*tables))
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 2, 2)
    expected, expected_hubs = greedy_fill(corpus, candidates, AnchorFinder(corpus, keywords), 2, 2)
    assert len(queue) > 6 and [(item.source, item.target, item.score, item.anchor) for item in queue] == expected
    assert hubs == expected_hubs and grown[:2] == [8, 16]


def test_a_target_gets_one_anchor_text_from_two_pages_at_most_the_title_fallback_too(
        ranked_site: tuple[Corpus, Keywords]) -> None:
    """Every source may link every target: a target's title fallback, which editors write on no page, would be
    suggested from page after page; it is shown on two pages at most, and the other sources take their next pair."""
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    queue, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), len(corpus), len(corpus))
    assert_sorted(queue)
    anchors = Counter((item.anchor.text.lower(), item.target) for item in queue)
    assert max(anchors.values()) == fill.SAME_ANCHOR_PAGES and 0 < len(queue) < len(candidates)
    assert sum(item.anchor.source == "title" for item in queue) >= 2
    expected, _ = greedy_fill(corpus, candidates, AnchorFinder(corpus, keywords), len(corpus), len(corpus))
    assert [(item.source, item.target, item.score, item.anchor) for item in queue] == expected


def test_a_row_the_queue_takes_past_its_sources_first_has_the_anchor_a_search_of_it_alone_finds(
        tmp_path: Path) -> None:
    """rank holds the anchors of each source's first max_per_page candidates only, and finds the others' again when a
    full target lets the queue take them. With one suggestion a source and one a target, every row shows its first
    anchor (no other row of the queue can have used it)."""
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    candidates = every_pair(corpus, keywords)
    finder = AnchorFinder(corpus, keywords)
    scores = score._scored(corpus, Candidates.of(candidates), finder, 1, False).scores
    place, seen = {}, Counter()  # each pair's place among its source's candidates, in queue order
    for row in sorted(range(len(candidates)), key=lambda row: (-scores[row], candidates[row].target)):
        place[candidates[row].source, candidates[row].target] = seen[candidates[row].source]
        seen[candidates[row].source] += 1
    queue, hubs = ranked(corpus, candidates, finder, 1, 1)
    later = [item for item in queue if place[item.source, item.target] >= 1]
    assert hubs and sum(item.anchor.source == "text" for item in later) >= 3
    for item in queue:
        first, text = finder.anchors(item.source, item.target)[0], corpus.texts[item.source]
        if first.offset is not None:  # shown with the word that completes its phrase, if one does (anchors.completion)
            shown = text[first.offset:anchors.completion(text, first.offset, first.offset + len(first.text))]
            assert item.anchor.text in (first.text, shown) and item.anchor.offset == first.offset
            first = Anchor(item.anchor.text, "text", first.strength, first.offset, first.context)
        assert item.anchor == first


def test_max_per_page_keeps_exactly_the_best(ranked_site: tuple[Corpus, Keywords]) -> None:
    corpus, keywords = ranked_site
    candidates = [c for c in every_pair(corpus, keywords) if c.source == 0]
    assert len(candidates) >= 5
    full, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 10, 10)
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 3, 10)
    assert [(item.target, item.score) for item in queue] == [(item.target, item.score) for item in full[:3]]
    assert hubs == {}


def test_a_target_every_peer_links_scores_peer_links_weight_more(ranked_site: tuple[Corpus, Keywords]) -> None:
    """The score's peer term: the share of the source's peers that link the target, times PEER_LINKS_WEIGHT."""
    corpus, keywords = ranked_site
    candidates = [c for c in every_pair(corpus, keywords) if c.source == 0]
    every = candidates[0].target  # every peer links it; half of them link the odd targets
    linked = [dataclasses.replace(c, peer_links=PEERS if c.target == every else PEERS // 2 if c.target % 2 else 0)
              for c in candidates]
    before, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 10, 10)
    after, _ = ranked(corpus, linked, AnchorFinder(corpus, keywords), 10, 10)
    gain = {item.target: -item.score for item in before}
    for item in after:
        gain[item.target] += item.score
    share = {c.target: c.peer_links / PEERS for c in linked}
    assert gain == pytest.approx({target: score.PEER_LINKS_WEIGHT * share[target] for target in gain}, abs=2e-4)
    assert share[every] == 1 and gain[every] > 0


def test_max_per_target_keeps_exactly_the_best_and_reports_the_hub(ranked_site: tuple[Corpus, Keywords]) -> None:
    corpus, keywords = ranked_site
    finder, pairs = AnchorFinder(corpus, keywords), every_pair(corpus, keywords)
    target = max(range(len(corpus)),  # the page most sources may link with a phrase of their own, not only its title
                 key=lambda page: sum(finder.anchors(c.source, page)[0].source == "text" for c in pairs if c.target == page))
    candidates = [c for c in pairs if c.target == target]
    wanted = len(candidates)
    assert wanted >= 5
    full, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, wanted)
    assert len(full) >= 3 and hubs == {}  # not every source: their anchors (see the test above)
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, 2)
    assert [(item.source, item.score) for item in queue] == [(item.source, item.score) for item in full[:2]]
    assert hubs == {target: wanted}


@pytest.mark.parametrize("per_page", [1, 2, 4])
def test_the_default_hub_cap_keeps_every_target_within_its_share(ranked_site: tuple[Corpus, Keywords], per_page: int) -> None:
    parameter = inspect.signature(rank).parameters["max_per_target"]
    if parameter.default is inspect.Parameter.empty:
        pytest.skip("rank has no default per-target cap")
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    queue, hubs, cap = rank(corpus, Candidates.of(candidates), AnchorFinder(corpus, keywords), per_page)
    assert cap >= score.MIN_CAP
    assert cap == score.MIN_CAP or cap <= score.MAX_TARGET_SHARE * len(queue)
    assert max(Counter(item.target for item in queue).values()) <= cap
    assert (queue, hubs) == ranked(corpus, candidates, AnchorFinder(corpus, keywords), per_page, cap)


@pytest.mark.parametrize("share, fills", [(0.16, 2), (0.3, 1)])
def test_the_default_hub_cap_is_the_largest_that_holds(ranked_site: tuple[Corpus, Keywords], monkeypatch: pytest.MonkeyPatch,
                                                       share: float, fills: int) -> None:
    """rank jumps from a cap to the one its queue allows, and fills again only where that holds a target back: the cap
    it ends on holds, one more does not, and the queue is the one that cap fills. (A share of 2% gives this small
    site MIN_CAP at once: at these shares its first cap is one its queue does not allow, and at 0.16 the next binds.)"""
    monkeypatch.setattr(score, "MAX_TARGET_SHARE", share)
    filled = []
    fill = score.Ranked.fill
    monkeypatch.setattr(score.Ranked, "fill", lambda self, *caps: filled.append(caps) or fill(self, *caps))
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    places = sum(min(count, 4) for count in Counter(candidate.source for candidate in candidates).values())
    queue, hubs, cap = rank(corpus, Candidates.of(candidates), AnchorFinder(corpus, keywords), 4)
    assert cap < int(share * places) and len(filled) == fills
    assert cap == score.MIN_CAP or cap <= share * len(queue)
    assert (queue, hubs) == ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, cap)
    wider, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, cap + 1)
    assert cap + 1 > share * len(wider)


def test_the_same_anchor_points_at_a_target_from_two_pages_at_most(tmp_path: Path) -> None:
    built = blog_site(tmp_path / "twins.db", SLUGS, links=False)
    original = prose("aeropress-recipes")
    twins = [built.page(f"/blog/zz-twin-{n}/", original.title, "\n".join(f"{line} Twin {n}." for line in original.text.split("\n")))
             for n in (1, 2)]  # the words of /blog/aeropress-recipes/, each line ended apart (a line on three pages is template)
    corpus = built.corpus()
    keywords = Keywords(corpus.texts)
    finder = AnchorFinder(corpus, keywords)
    sources = [corpus.urls.index(url("/blog/aeropress-recipes/")), *(corpus.urls.index(twin) for twin in twins)]
    target = next(t for t in range(len(corpus)) if t not in sources and finder.anchors(sources[0], t)[0].source == "text")
    options = [anchor.text for anchor in finder.anchors(sources[0], target)]
    assert all([anchor.text for anchor in finder.anchors(source, target)] == options for source in sources)  # alone, all would take one
    candidates = [Candidate(source=s, target=target, similarity=0.6, lexical=0.1, template_linked=False) for s in sources]
    queue, _ = ranked(corpus, candidates, finder, 4, 4)
    anchors = {item.source: item.anchor.text for item in queue}
    assert anchors[sources[0]] == anchors[sources[1]] == options[0] and fill.SAME_ANCHOR_PAGES == 2
    assert anchors[sources[2]] == next(text for text in options if text.lower() != options[0].lower())


def test_rounded_rounds_as_python_does_near_halves_too() -> None:
    """score.rounded (the queue's scores and strengths, at numpy's speed) gives round(value, 4) for every value: random
    ones, and the decimal halves (0.00005, 0.00025, ...), which binary holds only approximately and numpy's rint(value *
    10^4) rounds the other way in four cases of ten; and those that binary holds (0.03125, rounded half to even)."""
    rng = np.random.default_rng(7)
    halves = np.concatenate([(np.arange(30_000) + 0.5) / 1e4, [0.03125, -0.03125, 0.46875]])
    values = np.concatenate([rng.uniform(-3, 3, 100_000), rng.uniform(0, 1, 10_000).astype(np.float32), halves,
                             -halves, np.nextafter(halves, 10), np.nextafter(halves, -10)])
    python = [round(value, 4) for value in values.tolist()]
    assert (np.rint(values * 1e4) / 1e4).tolist() != python  # what the test is for
    assert score.rounded(values).tolist() == python


def test_the_queue_held_as_columns_reads_back_the_suggestions_it_was_given() -> None:
    """score.Queue keeps a text anchor as spans and slices it and its sentence again when read: every suggestion reads
    back equal to the one made as an object (its sentence by with_context), by index, slice, iteration and comparison,
    and so do the fields the export reads without making the objects."""
    texts = ["Intro line.\nRead about raw pointers here. Then more.", "Second page, no sentence end", "x"]
    names = ["First page", "A very long name of the second page here, with many more words than most", "Third"]
    made = [Suggestion(0, 1, 0.5625, 1.2345, anchors.with_context(Anchor("raw pointers", "text", 0.75, 23), texts[0]), True),
            Suggestion(1, 0, 0.25, 1.0, anchors.with_context(Anchor("no sentence", "text", 0.5, 13), texts[1]), False),
            Suggestion(2, 1, 0.125, 0.5, Anchor(title_anchor(names[1]), "title", 0.0), False)]
    def queue_of(items: list[Suggestion]) -> score.Queue:
        queue = score.Queue(texts, names)
        queue.extend(*zip(*[(item.source, item.target, item.similarity, item.score, *(item.anchor.span or (-1, -1)),
                             item.anchor.strength, item.template_linked) for item in items]))
        return queue
    queue = queue_of(made)
    assert made[0].anchor.context == "Read about raw pointers here." and made[1].anchor.context == texts[1]
    assert list(queue) == made and queue == made and queue[1] == made[1] and queue[-1] == made[2] and queue[:2] == made[:2]
    assert len(queue) == 3 and queue[2].anchor.text == "A very long name" and queue[2].anchor.context is None
    assert list(score.records(queue)) == list(score.records(made))  # the export's fields, read from the columns or the objects
    backwards = queue_of(made[::-1])  # made is by (source, target): the export's key order
    assert list(score.records(backwards, by_pair=True)) == list(score.records(made[::-1], by_pair=True)) == list(score.records(made))
    with pytest.raises(IndexError):
        queue[3]
    assert not score.Queue(texts, names)


def test_the_queue_s_compiled_sentences_are_sentence_at_s_at_every_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    """contexts.sentences_at (the queue's sentences, compiled, a block of texts at a time) answers as
    linkspider.sentences.sentence_at does, at every offset of random texts made of what makes and breaks a sentence:
    closing marks, list markers, line breaks, white space the regular expression's \\s takes (no-break, ideographic,
    line separator, NEL), a lone surrogate; a negative offset (a title anchor) has none."""
    rng = random.Random(7)
    alphabet = ["a", "b", " ", ".", "!", "?", "\n", '"', "'", ")", "]", "\u201d", "\u2019", "\t", "\u00a0", "x.", "-",
                "\n- ", ".\n  - ", "\n\n", "\r", "\x85", "\u2028", "\u3000", "\ud800", "\u00e9"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    pairs = [(page, offset) for page, text in enumerate(texts) for offset in range(len(text) + 1)]
    rng.shuffle(pairs)
    pairs.append((1, -1))
    sources, offsets = np.array(pairs).T
    monkeypatch.setattr(contexts, "PAGES_AT_ONCE", 100)  # many blocks, in both threads
    starts, ends = contexts.sentences_at(texts, sources, offsets)
    expected = [sentence_at(texts[page], offset) if offset >= 0 else (-1, -1) for page, offset in pairs]
    assert list(zip(starts.tolist(), ends.tolist())) == expected
    assert sum(start != offset for (_, offset), (start, _) in zip(pairs, expected)) > 10_000  # most inside a sentence


def test_the_fill_s_compiled_anchor_keys_are_the_reference_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """anchor_keys.anchor_keys (what Ranked.fill asks of each text anchor, compiled, a block of sources at a time)
    answers as the Python reference anchor_keys_of does, on random texts made of what glues words, completes a phrase,
    and changes in lower case: a dotted or double-colon word after an anchor, brackets and quotes, white space the
    regular expression's \\s takes, letters past ASCII, U+0130 (two code points in lower case), the capital sigma (its
    lower case depends on its neighbours), digits \\d takes and one it does not, an emoji, a lone surrogate; anchors
    that are a link's text. And the reference is what the fill compared: the key of the lower-case phrase, whole words
    (anchors.splits_a_word), a word that may complete it (anchors.COMPLETING_WORD), a link of the same text."""
    rng = random.Random(11)
    alphabet = ["a", "Zb", " ", " ", "Q1", "_", "-", "'", "\u2019", ".", ",", ";", ":", "::", "!", "?", "(", ")", "[", "]",
                '"', "\u201c", "\u201d", "\u2018", "\u2013", "\u2014", "\u2026", "\n", "\t", "\u00a0", "\u3000", "\u00c9t\u00e9",
                "\u0130", "\u03a3", "\u03c3", "\u00b2", "\u0661", "\U0001f600", "\ud800", ". ", ": ", " x", "/", " 1,", " \u0661."]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    links = [sorted(tuple(sorted(rng.sample(range(len(text) + 1), 2))) for _ in range(rng.randint(0, 3))) if len(text) > 1
             else [] for text in texts]
    texts[0], links[0] = "\u0130 ab, i\u0307 ab", [(0, 4)]  # the same in lower case ("i\u0307 ab"), not as long: no link's text
    rows = [(0, [6, -1, -1], [11, -1, -1])]  # (source, starts, ends): three anchors a pair, or none (-1); some a link's text
    for page, text in enumerate(texts):
        for _ in range(rng.randint(0, 3) if text else 0):
            spans = [rng.choice(links[page]) if links[page] and rng.random() < 0.3 else tuple(sorted(rng.sample(range(len(text) + 1), 2)))
                     for _ in range(3)]
            spans = [(start, end) if end > start and rng.random() < 0.8 else (-1, -1) for start, end in spans]
            rows.append((page, [start for start, _ in spans], [end for _, end in spans]))
    rng.shuffle(rows)
    spans = Spans.per_page(links)
    link_keys = np.zeros(len(spans.spans), np.uint64)
    monkeypatch.setattr(anchor_keys, "PAGES_AT_ONCE", 100)  # many blocks, in both threads
    keys, flags = anchor_keys.anchor_keys(texts, np.array([page for page, _, _ in rows]), np.array([s for _, s, _ in rows], np.int32),
                                          np.array([e for _, _, e in rows], np.int32), spans, link_keys)
    assert [(list(k), list(f)) for k, f in zip(keys.tolist(), flags.tolist())] == [
        anchor_keys.anchor_keys_of(texts[page], starts, ends, links[page]) for page, starts, ends in rows]
    covered = sorted({page for page, _, _ in rows})
    assert [link_keys[spans.starts[page]:spans.starts[page + 1]].tolist() for page in covered] == [
        anchor_keys.phrase_keys([texts[page][a:b].lower() for a, b in links[page]]).tolist() for page in covered]
    counts = Counter(flag for row in flags.tolist() for flag in row)
    assert all(counts[flag] > 20 for flag in (anchor_keys.SHOWN, anchor_keys.MAY_COMPLETE, anchor_keys.LINKED))
    page, starts, ends = next(row for row in rows if "\u03a3" in texts[row[0]] and row[1][0] >= 0)
    text, start, end = texts[page], starts[0], ends[0]
    assert anchor_keys.anchor_keys_of(text, [start], [end], links[page]) == ([anchor_keys.phrase_key(text[start:end].lower())], [
        (0 if anchors.splits_a_word(text, start, end) else anchor_keys.SHOWN)
        | (anchor_keys.MAY_COMPLETE if anchors.COMPLETING_WORD.match(text, end) else 0)
        | (anchor_keys.LINKED if any(b - a == end - start and text[a:b].lower() == text[start:end].lower() for a, b in links[page]) else 0)])


def test_queue_anchors_repeat_on_two_pages_at_most_and_stay_apart_per_source(tmp_path: Path) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    queue, _ = ranked(corpus, every_pair(corpus, keywords), AnchorFinder(corpus, keywords), 4, 6)
    text_anchors = Counter((item.anchor.text.lower(), item.target) for item in queue if item.anchor.source == "text")
    assert text_anchors and max(text_anchors.values()) <= fill.SAME_ANCHOR_PAGES
    for source in {item.source for item in queue}:
        spans = sorted(item.anchor.span for item in queue if item.source == source and item.anchor.span)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


# --- stage 5b: anchors -------------------------------------------------------------------------------------------


def assert_text_anchor(corpus: Corpus, source: int, anchor: Anchor) -> None:
    text = corpus.texts[source]
    words = WORD.findall(anchor.text)
    assert 2 <= len(words) <= 6, anchor
    assert text[anchor.offset:anchor.offset + len(anchor.text)] == anchor.text
    assert not is_stop_word(words[-1]), anchor
    if is_stop_word(words[0]):  # an article, before a word that is none, at the start of a phrase that ends there
        assert spelled(words[0], ARTICLES) and not is_stop_word(words[1]), anchor
        after = re.match(rf"([{re.escape(PHRASE_JOINERS)}])({WORD.pattern})", text[anchor.offset + len(anchor.text):])
        assert after is None or breaks_a_phrase(after[2]), (anchor, after)
    assert not any(spelled(word.replace("\u2019", "'"), CLAUSE_WORDS) for word in words), anchor  # a clause
    assert all(words[at + 1].lower().endswith("ed") for at, word in enumerate(words) if spelled(word, COPULAS)), anchor
    start, end = sentence_at(text, anchor.offset, sentence_spans(text))  # from all spans: not the line-local scan anchors use
    assert anchor.context == text[start:end] and anchor.text in anchor.context
    assert anchor.offset + len(anchor.text) <= end
    for link in corpus.link_spans[source]:
        assert not (anchor.span[0] < link[1] and link[0] < anchor.span[1]), (anchor, link)


def test_every_anchor_is_a_phrase_of_the_source_or_the_title(tmp_path: Path) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    assert sum(len(spans) for spans in corpus.link_spans) > 50
    finder = AnchorFinder(corpus, Keywords(corpus.texts))
    sources, targets = np.divmod(np.arange(len(corpus) ** 2), len(corpus))
    best = finder.search_all(sources, targets).best.reshape(len(corpus), len(corpus))  # each pair's strongest window
    spoken = re.compile(rf"{WORD.pattern}(?:\.{WORD.pattern})*")  # "Rust 1.32.0" is two words
    text_anchors = 0
    for source in range(len(corpus)):
        for target in range(len(corpus)):
            if source == target:
                continue
            anchors = finder.anchors(source, target)
            assert anchors[-1] == Anchor(title_anchor(corpus.titles[target]), "title", 0.0)
            assert all(anchor.source == "text" for anchor in anchors[:-1])
            preference = [a.strength - SHORTER_ANCHOR * best[source, target] * len(spoken.findall(a.text)) for a in anchors[:-1]]
            assert all(first >= second - 1e-4 for first, second in zip(preference, preference[1:]))  # shorter of near-equals first
            for anchor in anchors[:-1]:
                assert_text_anchor(corpus, source, anchor)
                text_anchors += 1
            spans = sorted(anchor.span for anchor in anchors[:-1])
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # alternatives never overlap
    assert text_anchors > 100


def test_the_keyword_fit_keeps_the_texts_tokens_for_the_anchor_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    monkeypatch.setattr(Keywords, "BLOCK_CHARACTERS", 2_000)  # several blocks
    keywords = Keywords(corpus.texts, corpus.titles)
    whole_pages = Keywords([f"{title}\n{text}" for title, text in zip(corpus.titles, corpus.texts)])
    assert keywords.vocabulary.terms == whole_pages.vocabulary.terms
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(keywords.matrix, name), getattr(whole_pages.matrix, name))
    pages = [5, 0, 3, len(corpus) - 1]
    split = keywords.vocabulary.tokenize([corpus.texts[page] for page in pages])
    monkeypatch.setattr(keywords.vocabulary, "tokenize", None)  # kept: not split again
    kept = keywords.text_tokens(corpus.texts, pages)
    for name in ("ids", "starts", "ends", "joined", "counts"):
        assert np.array_equal(getattr(kept, name), getattr(split, name)), name
    assert np.array_equal(keywords.text_tokens(corpus.texts, sorted(pages)).ids, split.select(np.argsort(pages)).ids)
    with pytest.raises(TypeError):  # other texts than the fit's are split again
        keywords.text_tokens(list(corpus.texts), pages)


def test_a_keyword_fit_that_cannot_keep_the_texts_tokens_leaves_them_to_be_split_again(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    monkeypatch.setattr(Keywords, "BLOCK_CHARACTERS", 2_000)
    kept = Keywords(corpus.texts, corpus.titles)
    pages = list(range(len(corpus)))
    def full_disk(self: TokenFile, tokens: Tokens, texts: np.ndarray) -> None:
        raise OSError(28, "No space left on device")
    def no_temporary_directory(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No usable temporary directory found")
    for owner, name, failure in ((TokenFile, "write", full_disk), (tempfile, "TemporaryFile", no_temporary_directory)):
        with monkeypatch.context() as patched:
            patched.setattr(owner, name, failure)
            unkept = Keywords(corpus.texts, corpus.titles)
        assert np.array_equal(unkept.matrix.data, kept.matrix.data)
        assert np.array_equal(unkept.text_tokens(corpus.texts, pages).starts, kept.text_tokens(corpus.texts, pages).starts)
        with monkeypatch.context() as patched:
            patched.setattr(unkept.vocabulary, "tokenize", None)
            with pytest.raises(TypeError):
                unkept.text_tokens(corpus.texts, pages)


def test_the_anchor_search_in_blocks_on_threads_finds_what_one_search_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    pairs = Candidates.of(every_pair(corpus, keywords))
    monkeypatch.setattr(anchors, "THREADS", 1)
    monkeypatch.setattr(anchors, "BLOCK_WORDS", 10 ** 9)
    whole = AnchorFinder(corpus, keywords).search_all(pairs.source, pairs.target)
    assert (whole.starts[:, 0] >= 0).sum() > 100
    for threads, texts in ((2, corpus.texts), (4, corpus.texts), (2, list(corpus.texts))):  # a copy: each block split again
        monkeypatch.setattr(anchors, "THREADS", threads)
        monkeypatch.setattr(anchors, "BLOCK_WORDS", 300)  # a page or two a block
        found = AnchorFinder(corpus, Keywords(texts)).search_all(pairs.source, pairs.target)
        for name in ("starts", "ends", "strengths", "best"):
            assert np.array_equal(getattr(found, name), getattr(whole, name)), name


def test_the_best_alone_is_the_best_of_every_window_whichever_windows_anchors_py_drops() -> None:
    """strong_windows' best_only on random pairs of random words: the strongest window that counts (choose: none that
    starts on an article) is the same as among every window, whether anchors.py keeps all windows or drops each title
    only window and each that holds a version number (other_versions may): only a window that surely counts may
    raise the bound that skips others."""
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(60):
        words, pairs = 80, 6
        stop = rng.random(words) < 0.3
        article = stop & (rng.random(words) < 0.5)
        term = np.where(stop, -1, rng.integers(0, 12, words))
        previous_same = np.full(words, -1)
        for word in range(words):
            earlier = np.flatnonzero(term[:word] == term[word]) if term[word] >= 0 else []
            previous_same[word] = earlier[-1] if len(earlier) else -1
        versioned = rng.random(words) < 0.1
        own = rng.random(words) < 0.1
        valid = rng.random((words, MAX_WORDS - MIN_WORDS + 1)) < 0.7
        valid &= np.arange(words)[:, None] + np.arange(MIN_WORDS, MAX_WORDS + 1) <= words  # within the page
        codes, weights, rare, titled = [], [], [], []
        for pair in range(pairs):
            term_weight = rng.random(12).astype(np.float32) * 0.5
            term_rare, term_titled = rng.random(12) < 0.3, rng.random(12) < 0.5
            for word in np.flatnonzero(~stop & (rng.random(words) < 0.5)):
                codes.append(pair * words + word)
                weights.append(term_weight[term[word]])
                rare.append(term_rare[term[word]])
                titled.append(term_titled[term[word]])
        count, versioned_before = len(codes), np.concatenate([[0], np.cumsum(versioned)])
        seeds = np.array(rare) | np.array(titled) & (rng.random(count) < 0.5)  # a title word of a whole_title target
        arguments = (np.array(codes), np.array(weights, dtype=np.float32), np.array(rare), seeds, np.array(titled),
                     np.zeros(count, dtype=bool), own[np.array(codes) % words], rng.random(count) < 0.5,
                     rng.integers(1, 3, pairs) * (rng.random(pairs) < 0.5), rng.random(pairs) < 0.3, words, valid, np.concatenate([[0], np.cumsum(~stop)]), article,
                     np.concatenate([[0], np.cumsum(rng.random(words) < 0.2)]),  # words that say when
                     np.concatenate([[0], np.cumsum(own)]),
                     previous_same, versioned_before)
        every, best_only = strong_windows(*arguments, False), strong_windows(*arguments, True)
        for drop in (False, True):
            strongest = []
            for first, last, pair, strength, title_only, ending in (every, best_only):
                counted = (ending != 1) & ~(drop & (title_only | (versioned_before[last + 1] > versioned_before[first])))
                best = np.zeros(pairs, dtype=np.float32)
                np.maximum.at(best, pair[counted], strength[counted])
                strongest.append(best)
            assert np.array_equal(*strongest)
            compared += int((strongest[0] > 0).sum())
        assert len(best_only[0]) <= len(every[0])
    assert compared > 200


def test_a_search_that_chooses_the_anchors_of_some_pairs_finds_every_pairs_best_and_their_anchors(tmp_path: Path) -> None:
    """search_blocks with select (score.py's, each source's first few): every pair's best strength, name_said and
    whether it is anchorable, and the anchors of the pairs selected, as a search of all finds them; the others' anchors
    are not chosen. A pair that is not anchorable has no text anchor (Ranked._row searches it no more)."""
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    pairs = Candidates.of(every_pair(corpus, keywords))
    finder = AnchorFinder(corpus, keywords)
    whole = finder.search_all(pairs.source, pairs.target)
    asked: list[np.ndarray] = []

    def every_third(rows: np.ndarray, found: Found) -> np.ndarray:
        assert np.array_equal(found.best, whole.best[rows]) and np.array_equal(found.name_said, whole.name_said[rows])
        assert np.array_equal(found.anchorable, whole.anchorable[rows])
        asked.append(rows)
        return np.arange(len(rows))[rows % 3 == 0][::-1]  # in any order

    for rows, found, chosen in finder.search_blocks(pairs.source, pairs.target, every_third):
        assert np.array_equal(np.sort(rows[chosen]), np.sort(rows[rows % 3 == 0]))
        for name in ("best", "name_said", "starts", "ends", "strengths"):
            assert np.array_equal(getattr(found, name)[chosen], getattr(whole, name)[rows[chosen]]), name
        others = np.setdiff1d(np.arange(len(rows)), chosen)
        assert (found.starts[others] == -1).all()
    assert sorted(np.concatenate(asked).tolist()) == list(range(len(pairs)))
    assert (whole.starts[::3, 0] >= 0).sum() > 30
    assert (whole.starts[~whole.anchorable] == -1).all() and (~whole.anchorable).sum() > 100
    assert (whole.starts[whole.anchorable & (whole.best == 0), 0] >= 0).any()  # windows on an article: best 0, an anchor


def test_the_anchor_search_finds_the_same_once_the_keyword_matrix_is_dropped(tmp_path: Path) -> None:
    """propose frees the TF-IDF matrix before rank, the stage of the peak: the finder takes each page's topic words
    when it is made, and nothing of its search reads the matrix after."""
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts, corpus.titles)
    pairs = Candidates.of(every_pair(corpus, keywords))
    expected = AnchorFinder(corpus, keywords).search_all(pairs.source, pairs.target)
    finder = AnchorFinder(corpus, keywords)
    keywords.drop_matrix()
    with pytest.raises(AttributeError):
        keywords.nearest(3)
    found = finder.search_all(pairs.source, pairs.target)
    assert (expected.starts[:, 0] >= 0).sum() > 100
    for name in ("starts", "ends", "strengths", "best", "name_said"):
        assert np.array_equal(getattr(found, name), getattr(expected, name)), name


def test_the_title_is_the_anchor_when_the_source_never_mentions_the_target(tmp_path: Path) -> None:
    built = blog_site(tmp_path / "lorem.db", SLUGS[:10], links=False)
    built.page("/lorem/", LOREM_TITLE, LOREM)
    corpus = built.corpus()
    target = corpus.urls.index(url("/lorem/"))
    lorem_terms = set(terms(f"{LOREM_TITLE} {LOREM}"))
    finder = AnchorFinder(corpus, Keywords(corpus.texts))
    fallback = Anchor(LOREM_TITLE, "title", 0.0)  # the title: seven words, as it is
    assert title_anchor(LOREM_TITLE) == fallback.text
    sources = [s for s in range(len(corpus)) if s != target]
    for source in sources:
        assert not lorem_terms & set(terms(corpus.texts[source]))
        assert finder.anchors(source, target) == [fallback]
    candidates = [Candidate(source=s, target=target, similarity=0.6, lexical=0.0, template_linked=False) for s in sources[:3]]
    queue, _ = ranked(corpus, candidates, finder, 4, 4)  # and the third source not: the title on two pages at most
    assert [(item.source, item.anchor.text, item.anchor.source, item.anchor.offset) for item in queue] == [
        (source, fallback.text, "title", None) for source in sources[:2]]


def filler_site(site: Site, topic: str, pages: list[tuple[str, str, str]],
                labels: Sequence[str] = tuple(map(str, range(12)))) -> tuple[Corpus, AnchorFinder]:
    """Eight pages of filler sentences about the topic (so its words are on every page), then these (path, title,
    sentence) pages, each with the filler before its sentence: the corpus and its anchor finder. The filler's twelve
    sentences and eight pages are told apart by the labels: numbers, unless numbers are what a test is about."""
    filler = " ".join(f"Filler sentence {label} about {topic} here." for label in labels[:12])
    for label in labels[:8]:
        site.page(f"/other-{label}/", f"Other Page {label}", f"{filler} Unusual{label} words belong to page {label} only.")
    for path, title, sentence in pages:
        site.page(path, title, f"{filler} {sentence}")
    corpus = site.corpus()
    return corpus, AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))


def test_a_source_that_writes_out_the_targets_name_takes_it_as_the_anchor(site: Site) -> None:
    """The name written out word for word is the editor's citation, whatever shorter phrase scores more a word; not
    where an existing link already holds it, and not a name of more than six words (an anchor is 2-6)."""
    filler_site(site, "deploys, queues and workers", [  # then a link, so the corpus is read again below
        ("/ambitions/", "Compiler Ambitions for 2022", "The compiler team plans incremental parsing and parallel codegen."),
        ("/cites/", "Roadmap", "Also see the Compiler Ambitions for 2022 on incremental parsing and parallel codegen."),
        ("/linked/", "Plans", "Also see the Compiler Ambitions for 2022 on incremental parsing and parallel codegen, again."),
        ("/long/", "Using OCR to Fix a Hilarious Bug", "Optical character recognition found the bug."),
        ("/cites-long/", "Office Hours", "Read Using OCR to fix a hilarious bug before the optical character recognition talk."),
    ])
    site.link("/linked/", "/elsewhere/", "Compiler Ambitions for 2022")
    corpus = site.corpus()
    finder = AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))
    target, cites, linked, long, cites_long = (corpus.urls.index(url(path)) for path in ("/ambitions/", "/cites/", "/linked/", "/long/", "/cites-long/"))
    found = finder.search_all(np.array([cites, linked, cites_long]), np.array([target, target, long]))
    assert found.name_said.tolist() == [True, True, True]
    [cited, *_], [in_link, *_], [long_name, *_] = (finder.anchors(source, to) for source, to in ((cites, target), (linked, target), (cites_long, long)))
    assert (cited.text, cited.source, cited.strength) == ("Compiler Ambitions for 2022", "text", found.best[0].round(4))
    assert corpus.texts[cites][cited.offset:cited.offset + len(cited.text)] == cited.text
    assert in_link.text != "Compiler Ambitions for 2022" and "Using OCR to fix a hilarious bug" not in long_name.text


def test_an_anchor_that_ends_on_a_possessive_ends_before_its_s(site: Site) -> None:
    """"the Zephyr edition's lints": the anchor names the edition, "Zephyr edition", not "Zephyr edition's"."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/edition/", "Zephyr Edition", "The edition changes the module system."),
        ("/source/", "Plans", "Plans for the Zephyr edition\u2019s lints came late."),
    ])
    [anchor, *_] = finder.anchors(corpus.urls.index(url("/source/")), corpus.urls.index(url("/edition/")))
    assert (anchor.text, anchor.source) == ("Zephyr edition", "text")


def test_a_name_written_out_closes_the_bracket_it_opens(site: Site) -> None:
    """A name that ends inside brackets ("... (WASI)") is matched up to its last word: the anchor takes the closing
    bracket too, or, where the text goes on inside the brackets, ends before them: no anchor leaves one open."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/wasi/", "WebAssembly System Interface (WASI)", "The interface gives WebAssembly modules a portable system."),
        ("/cites/", "Flags", "Enable the experimental WebAssembly System Interface (WASI) support with this flag."),
        ("/plain/", "Notes", "Support for the WebAssembly System Interface (WASI is not stable) came later."),
    ])
    target, cites, plain = (corpus.urls.index(url(path)) for path in ("/wasi/", "/cites/", "/plain/"))
    [cited, *_], [unclosed, *_] = finder.anchors(cites, target), finder.anchors(plain, target)
    assert cited.text == "WebAssembly System Interface (WASI)"
    assert corpus.texts[cites][cited.offset:cited.offset + len(cited.text)] == cited.text
    assert unclosed.text == "WebAssembly System Interface"


def test_the_window_scan_resumes_where_it_stopped_to_grow_its_arrays(site: Site) -> None:
    """strong_windows scans into arrays of WINDOWS_AT_FIRST windows and stops to grow them when the next seed's might
    not fit: a block of many copies of one pair finds more windows than that, and the same ones for every copy."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/target/", "Parallel Codegen Ambitions", "The compiler team plans parallel codegen."),
        ("/source/", "Notes", " ".join(f"Parallel codegen ambitions number {n} came early." for n in range(12))),
    ])
    source, target = corpus.urls.index(url("/source/")), corpus.urls.index(url("/target/"))
    copies = 200
    phrases = phrases_of(corpus, finder.keywords, [source])
    matches = finder._matches(phrases, np.zeros(copies, dtype=np.int64), np.full(copies, source), np.full(copies, target),
                              finder.target_terms(np.array([target])))
    first, last, pair, strength, *_ = strong_windows(
        matches.codes, matches.weights, matches.rare, matches.seeds, matches.titled, matches.partial, matches.own,
        matches.sets_apart, matches.whole_title, matches.sibling, matches.words, phrases.valid, phrases.content_before, phrases.article,
        phrases.when_before,
        phrases.own_title_before, phrases.previous_same, phrases.versioned_before, False)
    assert len(first) > 2 * WINDOWS_AT_FIRST  # grown twice at least
    per_copy = np.bincount(pair, minlength=copies)
    assert (per_copy == per_copy[0]).all() and per_copy[0] > 0
    windows = np.column_stack([first, last, strength.view(np.int32)]).reshape(copies, per_copy[0], 3)
    assert (windows == windows[0]).all()


def test_a_search_for_the_best_strength_alone_skips_windows_and_finds_the_same_best(site: Site) -> None:
    """strong_windows' best_only: a window whose bound is under the strongest window its pair surely counts is not
    made, so fewer windows are made, the same strongest among them; a title only window (anchors.py may drop it) sets
    no bound, nor one that starts on an article (choose does not count it)."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/target/", "Parallel Codegen Ambitions", "The compiler team plans parallel codegen."),
        ("/source/", "Notes", "The codegen came first. " + " ".join(f"Parallel codegen ambitions number {n} came early."
                                                                     for n in range(3))),
    ])
    source, target = corpus.urls.index(url("/source/")), corpus.urls.index(url("/target/"))
    phrases = phrases_of(corpus, finder.keywords, [source])
    matches = finder._matches(phrases, np.zeros(1, dtype=np.int64), np.full(1, source), np.full(1, target),
                              finder.target_terms(np.array([target])))

    def windows(best_only: bool) -> tuple[np.ndarray, ...]:
        return strong_windows(matches.codes, matches.weights, matches.rare, matches.seeds, matches.titled, matches.partial,
                              matches.own, matches.sets_apart, matches.whole_title, matches.sibling, matches.words, phrases.valid,
                              phrases.content_before,
                              phrases.article, phrases.when_before, phrases.own_title_before, phrases.previous_same,
                              phrases.versioned_before, best_only)

    every, best_only = windows(False), windows(True)
    counted = every[5] != 1
    assert 0 < len(best_only[0]) < counted.sum()
    assert best_only[3][best_only[5] != 1].max() == every[3][counted].max()
    assert set(zip(*best_only[:2])) <= set(zip(*every[:2]))  # the same windows, fewer


def test_a_title_of_common_words_names_its_page_only_where_it_is_written_out(site: Site) -> None:
    corpus, finder = filler_site(site, "pipelines, cargo and vendor options", [  # neither word names a page alone
        ("/vendor/", "cargo vendor", "The subcommand copies every dependency into a folder."),
        ("/says-it/", "Downloading", "Tools like cargo vendor or a mirror can be used to download code."),
        ("/apart/", "Shipping", "Every cargo ship has a vendor on board and a captain."),
        ("/reversed/", "Swapped", "The vendor cargo arrived late this week, sadly."),
        ("/plural/", "Harbour", "Two cargo vendors were busy in the harbour today."),
    ])
    assert finder.keywords.idf_of_share(1.0) == pytest.approx(finder.keywords.idf[finder.keywords.vocabulary.ids["vendor"]])
    target = corpus.urls.index(url("/vendor/"))
    says_it = corpus.urls.index(url("/says-it/"))
    anchor = finder.anchors(says_it, target)[0]
    assert (anchor.text, anchor.source) == ("cargo vendor", "text")
    assert_text_anchor(corpus, says_it, anchor)
    plural = corpus.urls.index(url("/plural/"))  # the title in the plural is the same name
    assert (finder.anchors(plural, target)[0].text, finder.anchors(plural, target)[0].source) == ("cargo vendors", "text")
    for path in ("/apart/", "/reversed/"):  # both words, but not the title
        assert finder.anchors(corpus.urls.index(url(path)), target) == [Anchor("cargo vendor", "title", 0.0)]


def test_a_name_is_written_in_a_text_exactly_where_its_pattern_says_so() -> None:
    """names_said first asks whether the hashes of the text's runs of word characters hold the name's, one after the
    other (windows.runs_held), then searches the pattern: the first test must never refuse a text the pattern accepts,
    and must refuse some. The runs hashed are those the regex \\w+ finds, in any text; a name's, those of its lower
    case (AnchorFinder hashes every name so), which are its words' (_Name.words, what the pattern matches)."""
    rng = np.random.default_rng(5)
    vocabulary = ["rust", "don't", "don’t", "1.26", "1.26.1", "bug-free", "bug", "free", "well", "known", "well-known", "été",
                  "Rust", "Don’t", "Été", "Well-Known"]
    gaps = [" ", ", ", "-", ".", " (", "’", "\n", "'"]
    said = refused = 0
    for _ in range(3000):
        text = "".join(str(rng.choice(vocabulary)) + str(rng.choice(gaps)) for _ in range(int(rng.integers(1, 30)))).lower()
        written = " ".join(str(word) for word in rng.choice(vocabulary, int(rng.integers(1, 4))))
        hashes, starts = run_hashes([text, written.lower()])
        name = anchors._Name(tuple(anchors._words(written)))
        assert run_hashes([" ".join(name.words)])[0].tolist() == hashes[starts[1]:].tolist()
        expected = next(anchors._said_spans(name.pattern, text), None)
        held = runs_held(hashes, starts, hashes, starts, np.array([0]), np.array([1]))[0]
        assert held or expected is None, (name, text)
        assert run_hashes([" ".join(re.findall(r"\w+", text))])[0].tolist() == hashes[:starts[1]].tolist()
        said += expected is not None
        refused += not held
    assert 100 < said < 2900 and refused > (3000 - said) / 2  # both answers are common; the first test gives most refusals


def names_asked(corpus: Corpus, finder: AnchorFinder, sources: list[int], target: int) -> list[list[str]]:
    """The names and headings of the target that names_said asks of each source: those whose every word it holds."""
    phrases = phrases_of(corpus, finder.keywords, sources)
    asked: list[list[str]] = [[] for _ in sources]
    for names in (finder.said_names, finder.headings):
        for place, name in zip(*names.held(phrases, np.arange(len(sources)), np.full(len(sources), target))):
            asked[place].append(names.texts[name])
    return asked


def test_a_source_that_writes_out_the_targets_name_cites_it_and_that_pair_ranks_first(site: Site) -> None:
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/ocr/", "Using OCR to Fix a Hilarious Bug", "Optical character recognition found the bug."),
        ("/cites/", "Writing Office Hours", "Read \u201cUsing OCR to fix a hilarious bug\u201d first."),
        ("/apart/", "Scanning", "To fix a hilarious bug using OCR took time."),
        ("/close/", "Workers", "Queues and workers: deploys, deploys and workers again."),
        ("/release/", "Announcing Widget 1.26", "Widget 1.26 ships today."),
        ("/point-release/", "Point release", "Announcing Widget 1.26.1, which fixes a crash in (Announcing Widget 1.2)."),
        ("/cites-release/", "Upgrading", "As (announcing widget 1.26) said, upgrade."),
    ])
    target, cites, apart, close = (corpus.urls.index(url(path)) for path in ("/ocr/", "/cites/", "/apart/", "/close/"))
    sources = [cites, apart, close]
    assert names_asked(corpus, finder, sources, target) == [["Using OCR to Fix a Hilarious Bug"]] * 2 + [[]]  # all its words held
    found = finder.search_all(np.array(sources), np.array([target, target, target]))
    assert found.name_said.tolist() == [True, False, False]  # but only /cites/ writes out the name
    release, point, cites_release = (corpus.urls.index(url(path)) for path in ("/release/", "/point-release/", "/cites-release/"))
    said, _, _ = finder.names_said(np.array([point, cites_release]), np.array([0, 1]),
                                np.full(2, finder.said_names.texts.index("Announcing Widget 1.26")))
    assert said.tolist() == [False, True]  # "1.26.1" and "1.2" are other versions: the name's last word goes on or stops short
    words = Candidate(source=cites, target=close, similarity=0.85, lexical=0.5, template_linked=False)  # above, but for the name
    name = Candidate(source=cites, target=target, similarity=0.3, lexical=0.1, template_linked=False)
    queue, _ = ranked(corpus, [words, name], finder, 1, 4)
    assert [(item.target, item.anchor.source) for item in queue] == [(target, "text")]


def test_a_source_that_writes_out_one_of_the_targets_headings_cites_it_and_mentions_it(site: Site) -> None:
    filler_site(site, "deploys, queues and workers", [
        ("/threads/", "Using Threads to Run Code", "Threads run code at once."),
        ("/cites/", "Channels", "As \u201cCreating a New Thread with spawn\u201d shows, channels help."),
        ("/apart/", "Spawning", "A new thread is spawned by creating it with spawn."),
        ("/short/", "Pools", "Thread pools reuse threads."),
        ("/template/", "Recap", "The next steps for the release are clear."),
        ("/also-next/", "Planning", "Planning is hard."),
    ])
    site.db["pages"].update(url("/threads/"), {"headings": "Using Threads to Run Code\nCreating a New Thread with spawn\n"
                                                            "Thread Pools\nNext Steps for the Release"})
    site.db["pages"].update(url("/also-next/"), {"headings": "Planning\nNext steps for the release"})  # shared: the template's
    corpus = site.corpus()  # again, with the headings
    finder = AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))
    target = corpus.urls.index(url("/threads/"))
    sources = [corpus.urls.index(url(path)) for path in ("/cites/", "/apart/", "/short/", "/template/")]
    spawn = ["Creating a New Thread with spawn"]  # of the target's headings, the one each source holds every word of is asked
    assert names_asked(corpus, finder, sources, target) == [spawn, spawn, [], []]  # not "Thread Pools" (two words), nor the template's
    found = finder.search_all(np.array(sources), np.full(len(sources), target))
    assert found.name_said.tolist() == [True, False, False, False]  # only /cites/ writes it out; two words or a template's cite nothing
    mentions = pipeline.mentioned_pairs(corpus, finder.keywords).tolist()  # candidates whatever their similarity: most of a heading's words
    assert [source * len(corpus) + target in mentions for source in sources] == [True, True, False, False]


def test_a_crawl_made_before_headings_and_code_blocks_were_kept_loads_without_them(site: Site) -> None:
    site.page("/a/", "Alpha", "Alpha text about widgets and more.", headings="Alpha\nWidgets in Depth Today", code_spans="[[6, 10]]")
    site.page("/b/", "Beta", "Beta text about gadgets and more.")
    corpus = site.corpus(min_words=1)
    assert (corpus.headings, list(corpus.code_spans)) == (["Alpha\nWidgets in Depth Today", ""], [[(6, 10)], []])
    site.db.execute("ALTER TABLE pages DROP COLUMN headings")  # as an older linkspider wrote it
    site.db.execute("ALTER TABLE pages DROP COLUMN code_spans")
    corpus = site.corpus(min_words=1)
    assert (corpus.headings, list(corpus.code_spans)) == (["", ""], [[], []])


def test_a_line_three_pages_hold_word_for_word_is_the_sites_template(site: Site) -> None:
    """A line on three pages is template (a popup the extractor kept, a release post's closing lines); a line on two
    pages, or twice on one, is not, nor is a blank line."""
    popup = "Press Esc to hide this help"
    site.page("/a/", "Alpha", f"Alpha text about widgets.\n{popup}\n\nMore on widgets.\n{popup}")
    site.page("/b/", "Beta", f"{popup}\nBeta text about gadgets.\nShared by two.\n\nBeta again.")
    site.page("/c/", "Gamma", f"Gamma text about gizmos.\nShared by two.\n\n{popup}")
    site.page("/d/", "Delta", "Delta text about doodads.\nOnly here.\nOnly here.\n\nDone.")
    texts = site.corpus(min_words=1).texts
    spans = [[(start, start + len(popup)) for start in range(len(text)) if text.startswith(popup, start)] for text in texts]
    assert list(site.corpus(min_words=1).template_spans) == spans
    assert [len(own) for own in spans] == [2, 1, 1, 0]


def test_an_anchor_is_never_taken_from_a_template_line() -> None:
    """The same line on three pages is the site's template, not a sentence an editor wrote: no anchor comes from it,
    however well it names the target."""
    footer = "Read our guide to brew water and minerals."
    titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(18))]
    def text_anchors(pages_with_footer: int) -> list[str]:
        texts = [f"Set the kettle up first and read its manual twice.\n{footer}",
                 "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
                 *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}."
                   + (f"\n{footer}" if i < pages_with_footer - 1 else "") for i in range(18))]
        corpus = plain_corpus(texts, titles, template_spans=template_lines(texts))
        finder = AnchorFinder(corpus, Keywords(texts, titles))
        return [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert text_anchors(2) == ["brew water"]  # on two pages: prose
    assert text_anchors(3) == []


def test_an_anchor_is_never_taken_from_a_heading_but_the_name_it_writes_out_still_counts() -> None:
    """A heading is the page's outline, not its prose: no anchor comes from a heading line, even one that writes out the
    target's name (which still counts as its name said), and the prose's phrase is taken instead."""
    titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(18))]
    texts = ["Set the kettle up first and read its manual twice.\nMaking your own brew water\n"
             "Your brew water decides much of the taste, so test it before anything else.",
             "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(18))]
    heading = texts[0].index("Making your own brew water"), texts[0].index("\nYour brew")
    def anchors(headings: list[str]) -> tuple[list[Anchor], bool]:
        corpus = plain_corpus(texts, titles, headings=headings)
        finder = AnchorFinder(corpus, Keywords(texts, titles))
        said = finder.search_all(np.array([0]), np.array([1])).name_said[0]
        return [anchor for anchor in finder.anchors(0, 1) if anchor.source == "text"], bool(said)
    unknown, said_unknown = anchors([])
    assert heading[0] <= unknown[0].offset < heading[1]  # with no headings known, the name on that line leads
    known, said = anchors(["Making your own brew water", *[""] * 19])
    assert known and all(not heading[0] <= anchor.offset < heading[1] for anchor in known)
    assert known[0].text == "brew water" and known[0].offset == texts[0].index("brew water decides")
    assert said and said_unknown


@pytest.mark.parametrize(("name", "anchor"), [
    ("A call for contributors from the WG-prioritization team", "A call for contributors"),
    ("Rust 1.1 stable, the Community Subteam, and RustCamp", "Rust 1.1 stable, the Community Subteam"),
    ("A call for Rust 2019 Roadmap blog posts", "A call for Rust 2019 Roadmap blog posts"),  # no place ends a phrase
    ("So you want to do a CSS3 3D transform?", "So you want to do a CSS3 3D transform?"),  # "to" may lead a verb
    ("Close to the Metal: Debugging Our Hardware Problem", "Close to the Metal"),  # at least half its words
    ("Update on the October 15, 2018 incident on crates.io", "Update on the October 15, 2018 incident on crates.io"),
    ("Keeping Rust projects secure with cargo-audit 0.9: dependency trees, core advisories, unmaintained crates",
     "Keeping Rust projects secure with cargo-audit"),  # over LONGEST_TITLE_ANCHOR words: six at most all the same
    ("Rustup 1.24.0 release incident report for 2021-04-27 and after", "Rustup 1.24.0 release incident report"),
    ("Getting the Best from a Moka Pot", "Getting the Best from a Moka Pot"),  # seven words or fewer: the name as it is
    ("Rust 1.0: status report and final timeline", "Rust 1.0: status report and final timeline"),
    ("Hello, Cargo!", "Hello, Cargo!"),
    ("The of and to in for the a", "The"),
])
def test_the_title_fallback_is_cut_where_it_does_not_read_as_cut_off(name: str, anchor: str) -> None:
    assert title_anchor(name) == anchor



@pytest.mark.parametrize(("text", "anchor", "shown"), [
    ("It makes excellent Japanese-style iced coffee, brewed onto ice.", "Japanese-style iced", "Japanese-style iced coffee"),
    ("We moved to the new networking APIs.", "new networking", "new networking APIs"),
    ("Thanks to the core team members\nNext", "core team", "core team members"),  # a line's end ends it too
    ("the core team members and others", "core team", "core team"),  # no break after the next word: a verb as often
    ("the core team in Berlin.", "core team", "core team"),  # a stop word is no completion
    ("Rust 1.4 beta today.", "1.4 beta", "1.4 beta"),  # nor an adverb
    ("The editor is discussing Danger internally.", "discussing Danger", "discussing Danger"),
    ("If a snapshot test failed, fix it.", "snapshot test", "snapshot test"),  # nor a past tense
    ("Once cargo doc finishes, open it.", "cargo doc", "cargo doc"),  # nor a clause's verb after its subject
    ("When the build system runs.", "build system", "build system"),
    ("See the API reference https://example.com/api.", "API reference", "API reference"),  # an address is no word
    ("Introduced in Rust 1.29.0 today.", "in Rust", "in Rust"),
    ("a fast and small and cheap burr grinder.", "small and cheap burr", "small and cheap burr grinder"),
    ("alpha beta gamma delta epsilon zeta.", "alpha beta gamma delta epsilon", "alpha beta gamma delta epsilon zeta"),
    ("alpha beta gamma delta epsilon zeta eta.", "alpha beta gamma delta epsilon zeta", "alpha beta gamma delta epsilon zeta"),
])  # six words at most
def test_an_anchor_is_shown_with_the_word_that_completes_its_phrase(text: str, anchor: str, shown: str) -> None:
    start = text.index(anchor)
    assert text[start:anchors.completion(text, start, start + len(anchor))] == shown

def test_a_series_label_that_starts_three_titles_is_left_out_of_the_name() -> None:
    titles = ["Code Review: Emergence", "Code Review: Energy Sync", "Cargo: predictable dependency management",
              "Code Review: ", "Code Review:Eidolon", "Rust 1.0: status report", "Rust 1.0: the trains", "Announcing Rust 1.26"]
    assert page_names(titles) == ["Emergence", "Energy Sync", "Cargo: predictable dependency management", "Code Review: ",
                                  "Code Review:Eidolon", "Rust 1.0: status report", "Rust 1.0: the trains", "Announcing Rust 1.26"]


def test_the_title_fallback_of_a_post_in_a_series_is_its_name(tmp_path: Path) -> None:
    built = blog_site(tmp_path / "series.db", SLUGS[:10], links=False)
    names = ["Lorem Ipsum", "Dolor Sit Amet", "Consectetur Adipiscing Elit"]
    for number, name in enumerate(names):
        built.page(f"/series-{number}/", f"Lorem Series: {name}", LOREM)
    corpus = built.corpus()
    finder = AnchorFinder(corpus, Keywords(corpus.texts))
    source = corpus.urls.index(url(f"/blog/{SLUGS[0]}/"))
    for number, name in enumerate(names):
        target = corpus.urls.index(url(f"/series-{number}/"))
        assert corpus.titles[target] == f"Lorem Series: {name}"
        assert finder.anchors(source, target)[-1] == Anchor(name, "title", 0.0)
        candidate = Candidate(source=source, target=target, similarity=0.6, lexical=0.0, template_linked=False)
        assert [item.anchor.text for item in ranked(corpus, [candidate], finder, 4, 4)[0]] == [name]


def best_text_pair(corpus: Corpus, finder: AnchorFinder) -> tuple[int, int, Anchor]:
    """A (source, target) pair whose best anchor is a phrase of the source, and that phrase."""
    return next(text_pairs(corpus, finder))


def text_pairs(corpus: Corpus, finder: AnchorFinder) -> Iterator[tuple[int, int, Anchor]]:
    """The (source, target) pairs whose best anchor is a phrase of the source, with that phrase, in page order."""
    for source in range(len(corpus)):
        for target in range(len(corpus)):
            if source != target and (anchor := finder.anchors(source, target)[0]).source == "text":
                yield source, target, anchor
    raise AssertionError("no text anchor on the whole corpus")


def linked_over_anchor(tmp_path: Path, link_to: str) -> tuple[Anchor, list[Anchor]]:
    """The best anchor of a pair, then the pair's anchors once the source links elsewhere on exactly that phrase."""
    slugs = SLUGS[:14]
    corpus = blog_site(tmp_path / "before.db", slugs, links=False).corpus()
    source, target, anchor = best_text_pair(corpus, AnchorFinder(corpus, Keywords(corpus.texts)))
    other = next(url(f"/blog/{slug}/") for slug in slugs if url(f"/blog/{slug}/") not in (corpus.urls[source], corpus.urls[target]))
    after = blog_site(tmp_path / "after.db", slugs, links=False)
    after.page("/missing/", "Not found", "This page does not exist.", status=404)
    after.post("/draft/", "espresso-basics", noindex=1)
    after.page("/tags/x/", "Tag", "\n".join(prose(slug).title for slug in slugs))
    for slug in slugs:
        after.link("/tags/x/", f"/blog/{slug}/", prose(slug).title)
    targets = {"candidate": other, "external": "https://en.wikipedia.org/wiki/Coffee", "404": "/missing/",
               "noindex": "/draft/", "listing": "/tags/x/"}
    after.link(corpus.urls[source], targets[link_to], anchor.text, offset=anchor.offset)
    linked = after.corpus()
    assert linked.urls == corpus.urls
    return anchor, AnchorFinder(linked, Keywords(linked.texts)).anchors(source, target)


def test_a_phrase_its_source_links_to_one_page_is_the_anchor_of_no_other(tmp_path: Path) -> None:
    """A reader takes one phrase of a page for one page: a phrase that is another page's name, that the source links
    elsewhere already, or that the queue gives it for one target, is not the anchor for another, though the page writes
    it where it is free.
    Two pages write a post's text and then its best anchor's phrase once more: /linked/ links that second one to
    another post, /plain/ does not and is a candidate for the post and for a twin of it (its lines, its title and a word)."""
    slugs = SLUGS[:14]
    corpus = blog_site(tmp_path / "before.db", slugs, links=False).corpus()
    def site(name: str, phrase: str | None, page_named: str | None = None) -> tuple[Corpus, AnchorFinder, dict[str, int]]:
        def text(mark: str) -> str:  # each line ended apart: a line on three pages is template, no place for an anchor
            own = "\n".join(f"{line} {mark}." for line in corpus.texts[source].split("\n"))
            return own + (f"\nOne more word on {phrase} to close." if phrase else "")
        built = blog_site(tmp_path / f"{name}.db", slugs, links=False)
        built.page("/linked/", "Notes", text("Linked"))
        built.page("/plain/", "Notes too", text("Plain"))
        built.page("/twin/", prose(target_slug).title + " revisited", "\n".join(f"{line} Twin." for line in prose(target_slug).text.split("\n")))
        if phrase:
            built.link("/linked/", other, phrase, offset=text("Linked").rindex(phrase))
        if page_named:
            built.page("/named/", page_named, prose(SLUGS[14]).text)
        made = built.corpus()
        pages = {name: made.urls.index(url(f"/{name}/")) for name in ("linked", "plain", "twin")}
        return made, AnchorFinder(made, Keywords(made.texts)), {**pages, "target": made.urls.index(corpus.urls[target])}

    for source, target, _ in text_pairs(corpus, AnchorFinder(corpus, Keywords(corpus.texts))):
        target_slug = corpus.urls[target].strip("/").split("/")[-1]
        other = next(url(f"/blog/{slug}/") for slug in slugs if url(f"/blog/{slug}/") not in (corpus.urls[source], corpus.urls[target]))
        first, finder, pages = site(f"first-{source}-{target}", None)
        alone = {finder.anchors(pages["plain"], pages[to])[0] for to in ("target", "twin")}
        if {anchor.source for anchor in alone} == {"text"} and len({anchor.text for anchor in alone}) == 1:
            break  # the copies put the pair's words on more pages: its phrase may no longer be the best for both
    phrase = alone.pop().text
    named, finder, pages = site("named", None, page_named=phrase)  # a page whose name the phrase is: it names that page
    assert finder.anchors(pages["plain"], pages["target"])[0].text == phrase
    queue = ranked(named, [Candidate(source=pages["plain"], target=pages["target"], similarity=0.6, lexical=0.1,
                                     template_linked=False)], finder, 4, 4)[0]
    assert len(queue) == 1 and queue[0].anchor.text.lower() != phrase.lower()
    linked, finder, pages = site("after", phrase)

    def anchors(source: int, *targets: int) -> dict[int, str]:
        candidates = [Candidate(source=source, target=to, similarity=0.6, lexical=0.1, template_linked=False) for to in targets]
        return {item.target: item.anchor.text.lower() for item in ranked(linked, candidates, finder, 4, 4)[0]}

    alone = [finder.anchors(pages[source], pages[to])[0] for source, to in [("linked", "target"), ("plain", "target"), ("plain", "twin")]]
    assert [(anchor.text, anchor.source) for anchor in alone] == [(phrase, "text")] * 3  # alone, each pair would take it
    assert phrase.lower() not in anchors(pages["linked"], pages["target"]).values()
    both = anchors(pages["plain"], pages["target"], pages["twin"])
    assert len(both) == 2 and sorted(both.values()).count(phrase.lower()) == 1


def test_a_name_that_one_page_has_names_that_page() -> None:
    names = ["DROP TRIGGER", "DROP EVENT TRIGGER", "Examples", "examples", "Ninja Multi-Config"]
    keys, pages = fill._page_named(names)
    assert dict(zip(keys.tolist(), pages.tolist())) == {anchor_keys.phrase_key(name): page for name, page in (
        ("drop trigger", 0), ("drop event trigger", 1), ("ninja multi-config", 4))}


def overlapping(anchor: Anchor, anchors: list[Anchor]) -> list[Anchor]:
    return [a for a in anchors if a.span and a.span[0] < anchor.span[1] and anchor.span[0] < a.span[1]]


def test_an_anchor_never_overlaps_an_existing_link_to_a_page(tmp_path: Path) -> None:
    anchor, anchors = linked_over_anchor(tmp_path, "candidate")
    assert anchor not in anchors and overlapping(anchor, anchors) == []


@pytest.mark.parametrize("link_to", ["external", "404", "noindex", "listing"])
def test_an_anchor_never_overlaps_an_existing_link_to_anywhere(tmp_path: Path, link_to: str) -> None:
    anchor, anchors = linked_over_anchor(tmp_path, link_to)
    assert overlapping(anchor, anchors) == []


# --- stage 5c: export --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["=SUM(1)", "+1", "-1", "@x", "\tx", "\rx", "=", "-"])
def test_formula_like_cells_get_a_leading_quote(value: str) -> None:
    assert neutralise(value) == "'" + value


@pytest.mark.parametrize("value", ["", "plain text", "a=b", "1+1", "x-1", " =1", "'=quoted", 1, -1, 0.5, -0.25, None])
def test_other_cells_are_unchanged(value: object) -> None:
    assert neutralise(value) == value and type(neutralise(value)) is type(value)


def suggestion(source: int, target: int, score: float, anchor: str = "brew guide", offset: int | None = 0) -> Suggestion:
    return Suggestion(source=source, target=target, similarity=0.5, score=score,
                      anchor=Anchor(anchor, "text" if offset is not None else "title", 0.5, offset, f"A {anchor} sentence."),
                      template_linked=False)


@pytest.fixture
def export_site(tmp_path: Path) -> Site:
    return blog_site(tmp_path / "export.db", SLUGS[:6], links=False)


def statuses(site: Site) -> dict[tuple[int, int], tuple[str, str, str]]:
    index = site.corpus().index
    return {(index[row["source"]], index[row["target"]]): (row["status"], row["first_seen"], row["last_seen"])
            for row in site.db["suggestions"].rows}


def test_save_suggestions_keeps_decisions_across_runs(export_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = export_site.corpus()
    monkeypatch.setattr("analysis.export.utc_now", lambda: "T1")
    first = [suggestion(0, 1, 0.9), suggestion(0, 2, 0.8), suggestion(0, 3, 0.7), suggestion(1, 2, 0.6),
             suggestion(1, 3, 0.5), suggestion(2, 3, 0.4), suggestion(2, 4, 0.3), suggestion(3, 4, 0.2)]
    assert save_suggestions(export_site.db, corpus, first) == {"new": 8, "done": 0}
    assert {pair: status for pair, (status, _, _) in statuses(export_site).items()} == {
        (item.source, item.target): "pending" for item in first}
    decisions = {(0, 1): "approved", (0, 2): "rejected", (1, 3): "approved", (2, 3): "approved", (2, 4): "rejected"}
    for (s, t), status in decisions.items():
        export_site.db["suggestions"].update((corpus.urls[s], corpus.urls[t]), {"status": status})
    assert rejected_pairs(export_site.db, corpus) == {(0, 2), (2, 4)}
    for s, t in ((1, 2), (1, 3), (2, 4)):  # an editor added these links; the site was crawled again
        export_site.link(corpus.urls[s], corpus.urls[t], corpus.texts[s].split("\n")[0][:20])
    corpus = export_site.corpus()
    monkeypatch.setattr("analysis.export.utc_now", lambda: "T2")
    second = [suggestion(0, 1, 0.95, "new anchor"), suggestion(3, 4, 0.2), suggestion(4, 5, 0.1)]
    assert save_suggestions(export_site.db, corpus, second) == {"new": 1, "done": 2}
    assert statuses(export_site) == {
        (0, 1): ("approved", "T1", "T2"),  # proposed again: the decision stays
        (0, 2): ("rejected", "T1", "T1"),  # not proposed: kept
        (1, 2): ("done", "T1", "T2"),  # pending, now linked
        (1, 3): ("done", "T1", "T2"),  # approved, now linked
        (2, 3): ("approved", "T1", "T1"),  # not proposed, not linked: kept
        (2, 4): ("rejected", "T1", "T1"),  # rejected stays rejected, linked or not
        (3, 4): ("pending", "T1", "T2"),
        (4, 5): ("pending", "T2", "T2"),
    }  # (0, 3) was pending, not proposed and not linked: dropped
    assert export_site.db["suggestions"].get((corpus.urls[0], corpus.urls[1]))["anchor"] == "new anchor"


def test_a_rerun_in_the_same_second_reports_nothing_new(export_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = export_site.corpus()
    monkeypatch.setattr("analysis.export.utc_now", lambda: "2025-01-01T00:00:00+00:00")
    queue = [suggestion(0, 1, 0.9), suggestion(1, 2, 0.8)]
    assert save_suggestions(export_site.db, corpus, queue)["new"] == 2
    assert save_suggestions(export_site.db, corpus, queue)["new"] == 0


def test_export_csv_is_sorted_and_neutralised(export_site: Site, tmp_path: Path) -> None:
    corpus = export_site.corpus()
    queue = [suggestion(0, 1, 0.5, "=HYPERLINK(x)"), suggestion(1, 2, 0.9, "-5 grams"), suggestion(2, 3, 0.7, "plain words"),
             suggestion(3, 4, 0.1, title_anchor(corpus.titles[4]), offset=None)]
    save_suggestions(export_site.db, corpus, queue)
    path = tmp_path / "queue.csv"
    assert export_csv(export_site.db, path) == 4
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == CSV_HEADER == ["from", "to", "to_title", "anchor", "anchor_source", "context", "similarity", "score", "status",
                                     "gain"]
    assert [row[3] for row in rows[1:]] == ["'-5 grams", "plain words", "'=HYPERLINK(x)", title_anchor(corpus.titles[4])]
    assert [float(row[7]) for row in rows[1:]] == [0.9, 0.7, 0.5, 0.1]
    assert rows[1][:3] == [corpus.urls[1], corpus.urls[2], corpus.titles[2]]
    assert [row[4] for row in rows[1:]] == ["text", "text", "text", "title"] and {row[8] for row in rows[1:]} == {"pending"}
    assert {row[9] for row in rows[1:]} == {""}  # no gain until impact.py has measured the queue


def test_an_anchor_is_never_taken_from_the_source_repeating_its_own_title() -> None:
    texts = ["Making Cold Brew Concentrate at Home\nSteep coarse grounds overnight in cold water and strain them.",
             "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Making Cold Brew Concentrate at Home", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(8))]
    corpus = plain_corpus(texts, titles)
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    contexts = [anchor.context for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert contexts and titles[0] not in contexts  # "brew water" in the body is fine, "Making Cold Brew" is not


def test_a_window_that_names_its_own_page_is_no_anchor_for_another() -> None:
    """On the page of `cargo doc`, "cargo doc" names that page, though `cargo build`'s topic words hold "doc"; in the
    February 2023 plans, "February 2023" names them, not the triage group's of February 2022. Where the target's title
    holds the words too, they name both ("cargo doc" for "Documenting with cargo doc", "triage group" for the triage
    group's plans; of a page titled as the source but for when, see series.py)."""
    texts = ["Once cargo doc finishes, open what it wrote in a browser of your choice.",
             "Run cargo build to compile a package with its doc tests. Doc builds, doc links and doc examples compile too.",
             "Write doc comments, then cargo doc renders them as pages with examples and links.",
             "Every month the triage group meets. In February 2023 the triage group chose its goals.",
             "Every month the triage group meets. In February 2022 the triage group chose its goals, and again in March.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["cargo doc", "cargo build", "Documenting with cargo doc", "Triage plans for February 2023",
              "Triage group plans for February 2022", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    def text_anchors(source: int, target: int) -> list[str]:
        return [anchor.text for anchor in finder.anchors(source, target) if anchor.source == "text"]
    assert text_anchors(0, 1) == [] and text_anchors(0, 2)[0] == "cargo doc"
    assert text_anchors(3, 4)[0] == "triage group" and "February 2023" not in text_anchors(3, 4)


def test_an_anchor_never_starts_or_ends_inside_what_a_reader_sees_as_one_word() -> None:
    text = ("Use Box<T> for recursion, include Mongoid::Document in models, mix 1,000 grams, build with --release "
            "profiles, run cargo build, and read cargo-package(1), not /usr/share/doc nor Documentation/howto/ files.")
    phrases = ["Use Box", "include Mongoid", "mix 1", "release profiles", "cargo build", "read cargo-package", "usr/share/doc",
               "Documentation/howto"]  # a path's slash at either end is the path's
    starts = [text.index(phrase) for phrase in phrases]
    options = anchors.anchor_options(text, "Smart Pointers", starts, [start + len(phrase) for start, phrase in zip(starts, phrases)],
                                     [1.0] * len(phrases))
    assert [(anchor.text, anchor.source) for anchor in options] == [  # a space, a bracket or a comma ends a word
        ("cargo build", "text"), ("read cargo-package", "text"), ("Smart Pointers", "title")]


def test_an_anchor_is_never_taken_from_a_code_block() -> None:
    """No link goes inside a code block: its words are no anchor, however well they name the target."""
    texts = ["Set the kettle up first and read its manual twice.\n# pick the brew water\nwater = Tap().filter()\n"
             "Then pour slowly over the grounds.",
             "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(8))]
    code = (texts[0].index("# pick"), texts[0].index("\nThen"))
    keywords = Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)])
    def text_anchors(code_spans: list[list[tuple[int, int]]]) -> list[str]:
        finder = AnchorFinder(plain_corpus(texts, titles, code_spans=Spans.per_page(code_spans)), keywords)
        return [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert text_anchors([[] for _ in texts]) == ["brew water"]  # from the code, were it prose
    assert text_anchors([[code]] + [[] for _ in texts[1:]]) == []


def test_an_anchor_is_never_taken_from_a_web_address_written_out_in_the_text() -> None:
    """The words of a URL in the prose ("brew/water" in https://example.com/brew/water/) are the address, not a phrase
    to link, whether they name the target by its terms or write out its whole name."""
    def text_anchors(first_line: str) -> list[str]:
        texts = [f"Set the kettle up first and read its manual twice.\n{first_line}\nThen pour slowly over the grounds.",
                 "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
                 *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
        titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(8))]
        finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
        return [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert text_anchors("Notes on making your own brew water are kept for later.") == ["making your own brew water"]
    assert text_anchors("Notes on brew water are kept at https://example.com/brew/water/notes.html for later.") == ["brew water"]
    assert text_anchors("Notes are kept at https://example.com/brew/water/notes.html for later.") == []  # by its terms
    assert text_anchors("Notes are kept at www.example.com/brew/water/notes.html for later.") == []
    assert text_anchors("Notes are kept at http://example.com/making/your/own/brew/water for later.") == []  # its name
    text = "See https://example.com/a/b, or WWW.example.com/a and http://b.example/c."
    assert [text[start:end] for start, end in web_addresses(text)] == ["https://example.com/a/b,", "WWW.example.com/a",
                                                                       "http://b.example/c."]
    assert web_addresses("A plain sentence: no address, not even example.com or a ratio 1:2 here.") == []


def test_titles_numbered_as_sections_are_cited_by_their_numbers() -> None:
    """citations.py: a title's leading number names its page (a number on two titles names none), and a citation of a
    subsection names the page of the longest number that starts it."""
    citations = Citations(["8.16. Composite Types", "Chapter 8. Data Types", "Part I. Tutorial", "E.17. Release 15.4",
                           "Rust 1.0: status report", "2019 Survey Results", "A. First", "A. Second"])
    assert citations.page_of == {"8.16": 0, "8": 1, "I": 2, "E.17": 3}
    text = ("See Section 8.16.6. Then Chapter 8, section 8.16, Part I and Appendix E.17; not Section 9.1, part in, "
            "Section 8.16.6a, Section A or Chapter 2019, but \u00a7 8.16 again.")
    assert [(page, text[start:end]) for page, start, end in citations.in_text(text)] == [
        (0, "Section 8.16.6"), (1, "Chapter 8"), (0, "section 8.16"), (2, "Part I"), (3, "Appendix E.17"), (0, "\u00a7 8.16")]
    spans = {page: text[start:end] for page, (start, end) in citations.first_spans(0, text).items()}
    assert spans == {1: "Chapter 8", 2: "Part I", 3: "Appendix E.17"}  # itself left out, each page's first citation
    assert citations.pair_codes([text, "Chapter 8 and Section 8.16.1."], 8).tolist() == [1, 2, 3, 8 + 0]
    assert not Citations(["Getting started", "Rust 1.0: status report"]).pair_codes(["See Section 1.2."], 2).size
    others = "RFC 4918, Section 8.16; section 8.16 of RFC 2616; Section 8 of the Manual; ISO 8601 section 8; see Section 8.16."
    assert [others[start:end] for _, start, end in citations.in_text(others)] == ["Section 8.16"]  # the last: this site's
    assert Citations(["1. Tutorial", *["A reference page"] * 4]).page_of and not Citations(["1. Tutorial", *["A page"] * 5]).page_of


def test_a_page_cited_by_its_section_number_is_a_candidate_its_name_said_and_the_citation_its_anchor() -> None:
    """"as described in Section 2.1.3" shares no word with "2.1. Composite Types", yet cites it as surely as its name
    written out: the pair is a mention (a candidate whatever its similarity), its name is said, and the citation is the
    anchor."""
    titles = ["3.4. Row Constructors", "2.1. Composite Types", "2.2. Range Types", *(f"Tea page {i}" for i in range(8))]
    texts = ["A row constructor builds a value from its parts, as described in Section 2.1.3, with one field per column.",
             "A composite type represents the structure of a row or record, a list of field names and their data types.",
             "A range type represents a range of values of some element type, such as timestamps or integers.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles)
    keywords = Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)])
    finder = AnchorFinder(corpus, keywords)
    found = finder.search_all(np.array([0, 0]), np.array([1, 2]))
    assert found.name_said.tolist() == [True, False]
    assert finder.anchors(0, 1)[0].text == "Section 2.1.3" and finder.anchors(0, 1)[0].source == "text"
    assert 0 * len(corpus) + 1 in pipeline.mentioned_pairs(corpus, keywords).tolist()
    assert 0 * len(corpus) + 2 not in pipeline.mentioned_pairs(corpus, keywords).tolist()


def test_a_title_numbered_as_a_section_falls_back_to_its_name_without_its_number() -> None:
    """A manual's "7.45. Flip Layer Vertically" is linked as "Flip Layer Vertically": the title fallback leaves the
    number out, as an editor would. Its name is said where the source cites it with its number, as the manual's editors
    do ("Section 7.45, “Flip Layer Vertically”"). A site whose numbered titles are too few
    (citations.MIN_NUMBERED_SHARE) keeps a number that is no chapter's ("A. First")."""
    titles = ["7.45. Flip Layer Vertically", "7.44. Flip Layer Horizontally", "3.2. Layers Dialog", *(f"Tea page {i}" for i in range(8))]
    texts = ["Flip the layer top to bottom: the image is mirrored across a horizontal axis through its centre.",
             "Flip the layer left to right: the image is mirrored across a vertical axis through its centre.",
             "The dialog lists the layers. To mirror one top to bottom, see Section 7.45, “Flip Layer Vertically”.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles)
    assert corpus.names[:3] == ["Flip Layer Vertically", "Flip Layer Horizontally", "Layers Dialog"] and corpus.names[3] == "Tea page 0"
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder.search_all(np.array([2, 2]), np.array([0, 1])).name_said.tolist() == [True, False]
    assert finder.anchors(0, 2)[-1] == Anchor("Layers Dialog", "title", 0.0)
    assert plain_corpus(texts + ["More tea"] * 5, ["A. First", *titles[1:], *["Tea"] * 5]).names[0] == "A. First"  # 3 of 16


def test_a_site_that_numbers_few_chapters_names_them_without_their_numbers() -> None:
    """Python's docs number their tutorial's chapters ("12. Virtual Environments and Packages", 47 of 527 titles) and cite
    one by its name alone ("see Virtual Environments and Packages"): where numbers are not the site's convention, the
    name written out and the title fallback are the title without its number. Where they are (the test above), a name
    is said with its number: the manual's menu paths write the bare name everywhere."""
    titles = ["12. Virtual Environments and Packages", "The import system", *(f"Tea page {i}" for i in range(9))]
    texts = ["A virtual environment is a directory tree holding a Python installation and packages installed into it.",
             "Modules are found on the module search path; to keep a project's packages apart, see Virtual Environments "
             "and Packages, then install them there.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(9))]
    corpus = plain_corpus(texts, titles)
    assert corpus.names[0] == corpus.written_titles[0] == "Virtual Environments and Packages"
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder.search_all(np.array([1]), np.array([0])).name_said.tolist() == [True]
    assert finder.anchors(1, 0)[0].text == "Virtual Environments and Packages"
    assert finder.anchors(2, 0)[-1] == Anchor("Virtual Environments and Packages", "title", 0.0)


def test_a_two_word_name_is_said_as_its_title_writes_it_in_prose() -> None:
    """"Number Protocol" written out mid-sentence cites its page as surely as a longer name. Two words in another case
    ("the number protocol"), or heading a part of the source, are as often a phrase of the source's own: a two-word
    name is said only in its title's case, in prose; one all in lower case, or one that two pages share, never."""
    titles = ["Number Protocol", "Type Objects", "Sequence Protocol", "Mapping Protocol", "data model", "Buffer Objects",
              "Governance Update", "Governance Update", *(f"Tea page {i}" for i in range(8))]
    texts = ["Objects that act as numbers fill the number slots: addition, multiplication and the rest of the operators.",
             "Type objects describe types. Their numeric slots are described in Number Protocol; the data model says why. "
             "The Governance Update gives the team's plans.",
             "Objects that act as sequences fill other slots: the number protocol does not apply to them here.",
             "Number Protocol\nMappings fill the slots of both sequences and dictionaries, and a few of their own.",
             "The data model describes objects, values and types in general terms for every implementation.",
             "Buffer objects expose raw memory to other objects without a copy.",
             "The team met in May and set out its plans for the year.", "The team met in June and revised its plans.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles, headings=["", "", "", "Number Protocol", *[""] * 12])
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    found = finder.search_all(np.array([1, 2, 3, 1, 1]), np.array([0, 0, 0, 4, 6]))
    assert found.name_said.tolist() == [True, False, False, False, False]
    assert finder.anchors(1, 0)[0].text == "Number Protocol"


def test_a_title_that_is_a_name_then_what_the_page_is_names_its_page_by_its_head() -> None:
    """"timeit - Measure execution time of small code snippets" is the page of timeit: a source that writes "timeit"
    mentions it and says its name, though the name is one word; an appendix's letter, a head two titles share and a
    head of common words name nothing. A head of one word is no anchor (an anchor is 2-6 words)."""
    titles = ["timeit - Measure execution time of small code snippets", "argparse \u2014 Parser for command-line options",
              "C - Derivable Traits", "Introduction - Getting started", "Introduction - Reading on", "The profilers",
              *(f"Tea page {i}" for i in range(8))]
    texts = ["Time small bits of Python code with timeit, from the command line or in a script.",
             "The argparse module makes it easy to write user-friendly command-line interfaces.",
             "Traits you can derive: Debug, Clone, Copy, PartialEq, and the like; see the C notes.",
             "Start here: what the documentation holds and how to read it.", "Read on for the details of each part.",
             "The profilers show where a program spends its hours; for tiny bits of it, timeit is better.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles)
    keywords = Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)])
    assert anchors.title_heads(titles, keywords) == [(0, "timeit"), (1, "argparse")]
    finder = AnchorFinder(corpus, keywords)
    assert finder.search_all(np.array([5, 5]), np.array([0, 1])).name_said.tolist() == [True, False]
    assert 5 * len(corpus) + 0 in pipeline.mentioned_pairs(corpus, keywords).tolist()
    assert all(len(anchor.text.split()) >= MIN_WORDS for anchor in finder.anchors(5, 0) if anchor.source == "text")


def test_a_window_never_splits_what_a_reader_sees_as_one_word() -> None:
    """"1.32.0" is three words to the tokenizer and one to a reader: "32.0" or "Rust 1.32" is no anchor for it, nor is
    "1.32.0" alone (one word, and an anchor is 2-6), and the shorter-anchor preference counts "Rust 1.32.0" as two
    words, not four. Nor does a window split a name: words joined by a slash ("Swift/Kotlin", "HTTP/2": never "2
    session") or in capitals ("GROUP BY": never "ordering by GROUP"), whose words a reader counts apart (but for a stop
    word joined by a slash: "I/O" is one), and whose stop words may begin or end it ("NOT NULL")."""
    texts = ["Get Rust 1.32.0 from crates.io or the Swift/Kotlin mirror today.", "Unrelated words about tea gardens and teapots.",
             "Ordering by GROUP BY terms saves HTTP/2 session state on NOT NULL columns.",
             "Retry I/O errors and/or timeouts."]
    corpus, keywords = plain_corpus(texts, ["Upgrading", "Tea", "Queries", "Errors"]), Keywords(texts)
    def windows(page: int) -> dict[str, int]:
        words = phrases_of(corpus, keywords, [page])
        first, size = np.nonzero(words.valid)
        last = first + size + MIN_WORDS - 1
        return {texts[page][start:end]: spoken for start, end, spoken in
                zip(words.starts[first].tolist(), words.ends[last].tolist(),
                    [spoken_words(*window, words.dotted_before) for window in zip(first.tolist(), last.tolist())])}
    assert windows(0) == {"Rust 1.32.0": 2, "1.32.0 from crates.io": 3, "crates.io or the Swift/Kotlin": 5, "Swift/Kotlin": 2,
                          "Swift/Kotlin mirror": 3, "Swift/Kotlin mirror today": 4, "mirror today": 2,  # "Get" is a stop word
                          "the Swift/Kotlin mirror today": 5}  # an article starts a phrase that ends there
    assert windows(2) == {  # a stop word inside a name in capitals may be its first or last word ("NOT NULL", "GROUP BY")
        "Ordering by GROUP BY": 4, "Ordering by GROUP BY terms": 5, "Ordering by GROUP BY terms saves": 6, "GROUP BY": 2,
        "GROUP BY terms": 3, "GROUP BY terms saves": 4, "GROUP BY terms saves HTTP/2": 6, "terms saves": 2, "HTTP/2": 2,
        "terms saves HTTP/2": 4, "terms saves HTTP/2 session": 5, "terms saves HTTP/2 session state": 6, "saves HTTP/2": 3,
        "saves HTTP/2 session": 4, "saves HTTP/2 session state": 5, "HTTP/2 session": 3, "HTTP/2 session state": 4,
        "session state": 2, "session state on NOT NULL": 5, "session state on NOT NULL columns": 6, "state on NOT NULL": 4,
        "state on NOT NULL columns": 5, "NOT NULL": 2, "NOT NULL columns": 3}
    assert windows(3) == {"Retry I/O": 2, "Retry I/O errors": 3, "I/O errors": 2, "I/O errors and/or timeouts": 4,
                          "errors and/or timeouts": 3}  # "I", "and" and "or" are stop words: "I/O" is one word
    text = "Brew a 1:16 ratio."
    ratio = phrases_of(plain_corpus([text], ["Brewing"]), Keywords([text]), [0])
    first, size = np.nonzero(ratio.valid)  # "1:16" is one word too, as a time "10:30" is: never "16 ratio"
    assert {text[ratio.starts[start]:ratio.ends[start + size + MIN_WORDS - 1]] for start, size in zip(first, size)} == {
        "Brew a 1:16", "Brew a 1:16 ratio", "1:16 ratio", "a 1:16 ratio"}  # not "a 1:16": the phrase runs on


def test_the_phrases_word_order_is_a_stable_argsort_of_their_keys() -> None:
    """phrases._stable_order sorts each key with its place in the low bits: the stable argsort's order, repeated keys
    in place order, and the argsort itself where a key is too large to share its 64 bits with a place."""
    from analysis.phrases import _stable_order
    keys = np.random.default_rng(5).integers(0, 300, 5_000)  # many repeats
    assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
    large = keys + (1 << 52)  # 13 bits of places do not fit beside it
    assert np.array_equal(_stable_order(large), np.argsort(large, kind="stable"))
    assert len(_stable_order(np.zeros(0, dtype=np.int64))) == 0


def test_a_dotted_word_names_a_target_only_if_the_target_holds_all_of_it() -> None:
    """"Rust 1.29.2" shares "rust", "1" and "29" with "Announcing Rust 1.29.1", and "Cargo.toml" shares "cargo" with
    "Hello, Cargo!", but each is another name to a reader: no anchor holds one, while "Rust 1.29.1" names its page. Nor
    does "Rust 1.29.1" name "Announcing Rust 1.29.2", though its parts 1, 29 and 1 are all among that title's words: it
    is no evidence either, so the pair's strength is its best other window's ("ARM boards")."""
    texts = ["Rust 1.29.2 fixes a miscompilation on ARM boards, so upgrade when you can.",
             "Rust 1.29.1 fixes a miscompilation on ARM boards, so upgrade when you can.",
             "The 1.29.1 point release fixes a rustdoc crash and a miscompilation on ARM boards.",
             "Edit the Cargo.toml manifest to add a dependency on the rand crate.",
             "Create a project with cargo new and build it with cargo build.",
             "It fixes a miscompilation on ARM boards, so upgrade when you can.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Announcing Rust 1.29.2", "Rust in embedded", "Announcing Rust 1.29.1", "Adding dependencies", "Hello, Cargo!",
              "Patch notes", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    def text_anchors(source: int, target: int) -> list[str]:
        return [anchor.text for anchor in finder.anchors(source, target) if anchor.source == "text"]
    assert text_anchors(1, 2)[0] == "Rust 1.29.1"
    assert text_anchors(0, 2) and not any("1.29.2" in anchor for anchor in text_anchors(0, 2))  # "ARM boards" stays
    assert text_anchors(1, 0) and not any("1.29.1" in anchor for anchor in text_anchors(1, 0))  # its parts are 1.29.2's
    best = finder.search_all(np.array([1, 5]), np.array([0, 0])).best  # the same text but for "Rust 1.29.1"
    assert best[0] == best[1] > 0
    alone = np.zeros(2, dtype=np.float32)  # the best alone (strong_windows' best_only): "Rust 1.29.1", the stronger
    for rows, found, _ in finder.search_blocks(np.array([1, 5]), np.array([0, 0]), lambda rows, found: rows[:0]):
        alone[rows] = found.best  # window, holds a version number: it bounds no other window, being dropped after
    assert np.array_equal(alone, best)
    words = phrases_of(plain_corpus(["See Rust 1.31.0, crates.io, 3.18a and 1:16."], ["Notes"]), finder.keywords, [0])
    assert (words.versions, words.version_last - words.version_first) == (["1.31"], [2])  # one number, words 1, 31 and 0
    assert np.diff(words.versioned_before).tolist() == [0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]  # its words, counted
    assert version_numbers("Rust 1.31.0, 2018 and 1.45.2") == {"1.31", "1.45.2"} and not version_numbers("v2.1.x 3.18a")
    assert not any("Cargo.toml" in anchor for anchor in text_anchors(3, 4))


def test_a_version_number_names_no_page_whose_name_writes_none() -> None:
    """CMake's pages open with "New in version 3.18.", so 3 and 18 are among a page's topic words; "version 3.18" in
    another page names no command, though: the window adds nothing to the pair, which is as strong as the same text
    without the number, and is no anchor."""
    texts = ["The policy is new in version 3.18 and chooses how the compiler flags of a build type are set.",
             "New in version 3.18. The build type chooses the compiler flags; the default build type is Debug.",
             "The policy chooses how the compiler flags of a build type are set.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["CMP0141", "Build types", "CMP0142", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    starts, topics, _ = finder.topics
    number, _ = finder.keywords.vocabulary.distinct_terms(["3 18"])
    assert len(number) == 2 and set(number.tolist()) <= set(topics[starts[1]:starts[2]].tolist())
    anchors = [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert anchors and not any("3.18" in anchor for anchor in anchors)
    best = finder.search_all(np.array([0, 2]), np.array([1, 1])).best
    assert best[0] == best[1] > 0


def test_a_version_number_after_a_name_is_that_names_release() -> None:
    """"Rust 1.24.0" names "Announcing Rust 1.24", not "Announcing Rustup 1.24.0", though both titles write the number
    (the Rust 1.24 post's "getting Rust 1.24.0 is as easy as" was rustblog's anchor for four Rustup releases)."""
    texts = ["Rust 1.24.0 ships incremental compilation and rustfmt on stable.",
             "Rustup 1.24.0 installs toolchains and ships a new proxy for rustfmt.",
             "If you have rustup, getting Rust 1.24.0 with rustfmt is easy.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Announcing Rust 1.24", "Announcing Rustup 1.24.0", "Notes", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder.anchors(2, 0)[0].text == "Rust 1.24.0"
    assert finder.anchors(2, 1) == [Anchor("Announcing Rustup 1.24.0", "title", 0.0)]


def test_a_number_that_extends_a_section_number_is_that_sections() -> None:
    """On a site that numbers its titles, "Section 8.16.6" cites a part of "8.16. Composite Types": its number is that
    page's, and the window that writes it stays evidence for it (the citation is the anchor), where a page of 8.17 has
    none of it. A number that extends no section, or any number on a site whose titles are not numbered, is no page's."""
    titles = ["8.16. Composite Types", "8.17. Range Types", "9.1. Logical Operators", "9.2. Comparison Functions",
              "Notes on rows"]
    texts = ["A composite type represents the structure of a row or record.",
             "Range types are data types representing a range of values of some element type.",
             "The usual logical operators are available: AND, OR and NOT.",
             "The usual comparison operators are available for all the built-in data types.",
             "The row values are compared field by field, as Section 8.16.6 explains for composite types."]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder._version_id("8.16.6") == finder._version_id("8.16") >= 0
    assert finder._version_id("8.17") != finder._version_id("8.16") and finder._version_id("1.45.2") == -1
    assert [anchor.text for anchor in finder.anchors(4, 0) if anchor.source == "text"][0] == "Section 8.16.6"
    plain = AnchorFinder(plain_corpus(texts, [title.split(". ", 1)[-1] for title in titles]), finder.keywords)
    assert plain._version_id("8.16.6") == -1


def spelled(word: str, among: tuple[str, ...] | list[str]) -> bool:
    return any(word in (known, known.capitalize(), known.upper()) for known in among)


def breaks_a_phrase(word: str) -> bool:
    return spelled(word.replace("\u2019", "'"), [*PHRASE_BREAKS, *CLAUSE_WORDS, *COPULAS])


def test_tokenize_finds_the_words_of_the_regex_with_their_spans_in_each_text() -> None:
    """tokenize classifies code points in a compiled loop instead of running the regex for the spans: the same words
    anywhere."""
    rng = np.random.default_rng(7)
    alphabet = list("absS Z09_'\u2019--../ ,!?:\n\t") + ["\u00e9", "\u00df", "\u4e2d", "\u0663", "\U0001f600", "\u00a0", "\u2013"]
    texts = ["", "don't well-known a--b x'-y 'quoted' -dash- Rust 1.51 CI/CD", "\u00e9t\u00e9-\u00e0 na\u00efve\u2019s",
             "Rust's team\u2019S it's s'-s x's-y", "by GROUP BY ORDER_1 Z-9 EC2 Ab A SS caf\u00c9 \u00c9T\u00c9 S3",
             "The AeroPress, a kettle With an AN the-end THE tHe thee In the blade mill of",
             "It isn\u2019t WAS Had a meeting; it didn't, Has it; we are here, coffee is processed, IS STABILIZED",
             "is. ed"]
    texts += ["".join(rng.choice(alphabet, int(rng.integers(0, 60)))) for _ in range(300)]
    vocabulary = Vocabulary()
    tokens = vocabulary.tokenize(texts)
    assert tokens.counts.tolist() == [len(WORD.findall(text)) for text in texts] == word_counts(texts).tolist()
    assert word_counts([]).tolist() == []
    at = 0
    for text, count in zip(texts, tokens.counts.tolist()):
        spans = [match.span() for match in WORD.finditer(text)]
        assert list(zip(tokens.starts[at:at + count].tolist(), tokens.ends[at:at + count].tolist())) == spans
        assert [vocabulary.terms[i] if i >= 0 else None for i in tokens.ids[at:at + count].tolist()] == \
            [None if is_stop_word(text[start:end]) else terms(text[start:end])[0] for start, end in spans]
        gaps = [text[end:start] for (_, end), (start, _) in zip(spans, spans[1:])]
        ratios = [gap == ":" and text[end - 1] in "0123456789" and text[start] in "0123456789"  # "1:16", "10:30"
                  for (_, end), (start, _), gap in zip(spans, spans[1:], gaps)]
        assert tokens.joined[at:at + count].tolist() == [
            (gap in PHRASE_JOINERS and len(gap) == 1) or ratio for gap, ratio in zip(gaps, ratios)] + [False] * bool(count)
        assert tokens.dotted[at:at + count].tolist() == [gap == "." or ratio for gap, ratio in zip(gaps, ratios)] + [False] * bool(count)
        assert tokens.slashed[at:at + count].tolist() == [gap == "/" for gap in gaps] + [False] * bool(count)
        capitals = [re.fullmatch("[A-Z][A-Z0-9_-]+", text[start:end]) is not None for start, end in spans]
        assert tokens.capitals[at:at + count].tolist() == [
            gap == " " and first and second for gap, first, second in zip(gaps, capitals, capitals[1:])] + [False] * bool(count)
        assert tokens.possessive[at:at + count].tolist() == [
            end - start > 2 and text[end - 2] in "'\u2019" and text[end - 1] in "sS" for start, end in spans]
        words = [text[start:end] for start, end in spans]
        assert tokens.article[at:at + count].tolist() == [spelled(word, ARTICLES) for word in words]
        assert tokens.phrase_end[at:at + count].tolist() == [
            not ((gap in PHRASE_JOINERS and len(gap) == 1) or ratio) or breaks_a_phrase(word)
            for gap, ratio, word in zip(gaps, ratios, words[1:])] + [True] * bool(count)
        assert tokens.clause_word[at:at + count].tolist() == [
            spelled(word.replace("\u2019", "'"), CLAUSE_WORDS)
            or spelled(word, COPULAS) and not (joined and after.lower().endswith("ed"))
            for word, joined, after in zip(words, tokens.joined[at:at + count].tolist(), [*words[1:], ""])]
        at += count
    stored = TokenFile()  # every field, flags included, comes back as written, in any order of texts
    stored.write(tokens, np.arange(len(texts)))
    stored.close_writing()
    asked = [4, 5, 0, 3, 300]
    for field in Tokens.__dataclass_fields__:
        assert np.array_equal(getattr(stored.read(asked), field), getattr(tokens.select(asked), field)), field


def test_term_ids_are_given_in_the_order_words_are_first_seen_whether_looked_up_packed_or_by_spelling() -> None:
    """Short words are found by their packed spelling once seen, the others by the spelling dict: the ids must be those
    of one pass over the words in order, however the texts are split into calls, and again on a second pass."""
    rng = np.random.default_rng(11)
    alphabet = ["ab", "Ab", "abcdefghij", "abcdefghijk", "abcdefghijklmnopqr", "abcdefghijklmnopqrs", "z9_", "caf\u00e9", "don't",
                "don\u2019t", "x-y", "the", "Rust", "1.51", "\u4e2d"]
    texts = [" ".join(rng.choice(alphabet, int(rng.integers(0, 20)))) + " " + "".join(rng.choice(list("abc"), 9)) for _ in range(200)]
    expected = Vocabulary()
    expected_ids = [[expected._spelling[word] for word in WORD.findall(text)] for text in texts]
    vocabulary = Vocabulary()
    ids = []
    for start in range(0, len(texts), 7):
        tokens = vocabulary.tokenize(texts[start:start + 7])
        ids += [part.tolist() for part in np.split(tokens.ids, np.cumsum(tokens.counts)[:-1])]
    assert ids == expected_ids and vocabulary.terms == expected.terms
    again = vocabulary.tokenize(texts)
    assert again.ids.tolist() == [i for page in expected_ids for i in page] and vocabulary.terms == expected.terms
    threaded = Vocabulary()  # later blocks split, and looked up among the spellings known then, before earlier ones get ids
    blocks = (texts[start:start + 7] for start in range(0, len(texts), 7))
    ids = [part.tolist() for tokens in threaded.tokenize_all(blocks, threads=2) for part in np.split(tokens.ids, np.cumsum(tokens.counts)[:-1])]
    assert ids == expected_ids and threaded.terms == expected.terms


def test_hash_table_answers_as_a_dict_would_through_collisions_growth_and_unknown_keys() -> None:
    """The numpy hash table (packed spellings, the anchor search's look-ups): every key added, in rounds that pass half
    full and rebuild it (up to half the keys off their home slot), is found with its value; keys never added (some
    differing from one in the high column only) and (0, 0) are not; a table already shared is never changed by a
    later addition."""
    rng = np.random.default_rng(5)
    low = rng.integers(1, 2**64 - 1, 5_000, dtype=np.uint64)
    high = np.where(rng.random(5_000) < 0.5, 0, rng.integers(0, 2**64 - 1, 5_000, dtype=np.uint64))
    low[:1000] = low[1000:2000]  # keys that differ in their high column only
    keys = np.unique(np.stack([low, high], axis=1), axis=0)
    keys = keys[np.argsort(rng.random(len(keys)))]
    ids = rng.integers(0, 1 << 30, len(keys)).astype(np.int32)
    expected: dict[tuple[int, int], int] = {}
    table = HashTable(np.int32)
    for start in range(0, len(keys), 700):
        before = table
        snapshot = before.keys.copy()
        table = table.with_added(keys[start:start + 700], ids[start:start + 700])
        expected.update(zip(map(tuple, keys[start:start + 700].tolist()), ids[start:start + 700].tolist()))
        assert (before.keys == snapshot).all() and 2 * table.held <= len(table.keys)
        unknown = np.stack([keys[:500, 0], keys[:500, 1] ^ np.uint64(1)], axis=1)  # a known low column, another high one
        asked = np.concatenate([keys, unknown, rng.integers(1, 2**60, (500, 2), dtype=np.uint64), np.zeros((3, 2), dtype=np.uint64)])
        found, known = table.get(asked)
        assert known.tolist() == [key in expected for key in map(tuple, asked.tolist())]
        assert found[known].tolist() == [expected[key] for key in map(tuple, asked[known].tolist())]


def test_blocked_words_are_those_overlapping_a_link_or_inside_a_sentence_repeating_the_title() -> None:
    from analysis.phrases import _blocked

    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(["alpha", "beta", "gamma.", "\nDelta Echo\n", "x"], int(rng.integers(0, 30)))) for _ in range(40)]
    titles = ["Delta Echo" if i % 3 == 0 else f"title {i}" for i in range(40)]
    spans = [[(int(a), int(a + rng.integers(-3, 20))) for a in rng.integers(-5, len(text) + 5, int(rng.integers(0, 4)))] for text in texts]
    corpus = plain_corpus(texts, titles, link_spans=Spans.per_page(spans))
    pages = [int(page) for page in rng.permutation(40)]
    tokens = Vocabulary().tokenize([texts[page] for page in pages])
    expected = []
    for page in pages:
        words = [match.span() for match in WORD.finditer(texts[page])]
        sentences = [(a, b) for a, b in sentence_spans(texts[page]) if texts[page][a:b].strip().lower() == titles[page].lower()]
        expected += [any(start < end_ and start_ < end for start_, end_ in spans[page])
                     or any(start >= start_ and end <= end_ for start_, end_ in sentences) for start, end in words]
    assert _blocked(corpus, pages, tokens, [texts[page] for page in pages], np.ones(len(pages), dtype=bool)).tolist() == expected


def test_past_the_keyword_limit_candidates_come_from_meaning_and_capped_mentions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analysis import pipeline
    from analysis.embed import Embeddings

    topics = ["espresso", "espresso shots", "tea", "oolong", "water", "water hardness", *(f"filler{i}" for i in range(8))]
    texts = [f"Page about {topic} with enough words to be a page about {topic} and nothing else." for topic in topics]
    texts[0] += " Read our oolong steeping guide next."  # a mention of page 3 by its title
    titles = [topic.title() for topic in topics]
    titles[3] = "Oolong Steeping Guide"
    pages = len(texts)
    corpus = plain_corpus(texts, titles, hashes=[f"h{i}" for i in range(pages)])
    partner = [1, 0, 3, 2, 5, 4, *range(6, pages)]  # pages 0-5 come in pairs of close vectors, the rest alone
    vectors = np.eye(pages, dtype=np.float32) * 0.9 + np.eye(pages, dtype=np.float32)[partner] * 0.44  # cosine 0.79
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    monkeypatch.setattr(pipeline, "embed_pages", lambda *args, **kwargs: Embeddings(vectors, 0))
    db = open_database(tmp_path / "site.db")

    def pairs() -> set[tuple[int, int]]:
        proposal = pipeline.propose(db, corpus, pipeline.Options(threshold=0.5, progress=False), {})
        assert proposal.past_keyword_limit == (pages > pipeline.KEYWORD_NEIGHBOURS_LIMIT)  # what the summary's note reads
        return {(item.source, item.target) for item in proposal.queue}

    assert (0, 3) in pairs()  # the mention, whatever its similarity
    monkeypatch.setattr(pipeline, "KEYWORD_NEIGHBOURS_LIMIT", pages - 1)
    by_meaning = {(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4)}
    assert pairs() == by_meaning | {(0, 3)}  # no keyword neighbours, but the mention still
    monkeypatch.setattr(pipeline, "MENTIONS_PER_SOURCE", 0)
    assert pairs() == by_meaning


def test_distinct_and_among_are_np_unique_and_np_isin_without_the_hashing() -> None:
    rng = np.random.default_rng(5)
    for size in (0, 1, 2, 50, 5000):
        values = rng.integers(-5, 300, size)
        assert distinct(values).tolist() == np.unique(values).tolist()
        for members in (np.zeros(0, dtype=np.int64), np.sort(rng.integers(0, 300, int(rng.integers(1, 100))))):  # repeats too
            assert among(values, members).tolist() == np.isin(values, members).tolist()


def test_dates_come_from_blog_style_urls_when_the_page_declares_none() -> None:
    from analysis.load import url_date
    assert url_date("http://h/2023/07/13/Rust-1.71.0.html") == "2023-07-13"
    assert url_date("http://h/blog/2019/02/some-post/") == "2019-02"
    assert url_date("http://h/posts/2019-rust/") is None
    assert url_date("http://h/2023/13/01/x.html") is None  # no month 13


def test_direction_follows_the_sites_own_links_in_time() -> None:
    def corpus(dates: list[str], links: set[tuple[int, int]]) -> Corpus:
        return plain_corpus([""] * len(dates), ["t"] * len(dates), published=dates, content_codes=pair_codes(links, len(dates)))
    dates = ["2020-01-01", "2021-01-01", "2022-01-01", "2023-01-01", None]
    sources, targets = np.array([0, 3, 0, 4]), np.array([3, 0, 4, 0])  # forward, backward, undated, undated
    backward = score.direction(corpus(dates, {(1, 0), (2, 0), (2, 1), (3, 2)}), sources, targets)
    assert backward[0] == pytest.approx(2 * 1 / 6 - 1) and list(backward[1:]) == [0, 0, 0]
    both = score.direction(corpus(dates, {(1, 0), (0, 1)}), sources, targets)
    assert both[0] == 0  # a site that links both ways leans neither way
    assert score.direction(corpus(dates, set()), sources, targets)[0] == 0  # no evidence, no lean


def test_what_other_pages_link_a_target_with_names_it_in_a_source(site: Site) -> None:
    pages = [("/widgets/", "Introducing Widgets", "The new release is out today."),
             ("/notes/", "Release notes", "Read about the quantum flux capacitor first."),
             ("/design/", "Thoughts", "Our quantum flux capacitor changed twice this year.")]
    corpus, finder = filler_site(site, "deploys, queues and workers", pages)
    target, source = corpus.urls.index(url("/widgets/")), corpus.urls.index(url("/design/"))
    assert finder.anchors(source, target) == [Anchor("Introducing Widgets", "title", 0.0)]  # nothing in the source names it
    site.link("/notes/", "/widgets/", "quantum flux capacitor")
    corpus = site.corpus()
    assert (target, "quantum flux capacitor") in list(corpus.inbound_anchors)
    anchor = AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles)).anchors(source, target)[0]
    assert (anchor.text, anchor.source) == ("quantum flux capacitor", "text")
    assert_text_anchor(corpus, source, anchor)
    assert list(site.corpus(hidden={(url("/notes/"), url("/widgets/"))}).inbound_anchors) == []  # a hidden link's anchor names nothing


def test_an_anchor_of_a_plain_number_names_nothing_of_the_page_it_links(site: Site) -> None:
    """A generated index links a page's entries as "[15]" and a footnote as "(3)": a source's "15" or "3" is not the
    page's name for that (CMake's and Python's indexes made "15 times" an anchor for "What's New In Python 3.5"). A
    dotted number is a name: "1.34" for "Announcing Rust 1.34.0"."""
    pages = [("/widgets/", "Introducing Widgets", "The new release is out today."),
             ("/genindex/", "Index", "Widgets [15] (3); widgets 1.34; widgets built 15 times."),
             ("/design/", "Thoughts", "Our build runs 15 times a day since release 1.34 and fails in 3 ways.")]
    filler_site(site, "deploys, queues and workers", pages)
    site.link("/genindex/", "/widgets/", "[15]")
    site.link("/genindex/", "/widgets/", "(3)")
    corpus = site.corpus()
    target, source = corpus.urls.index(url("/widgets/")), corpus.urls.index(url("/design/"))
    assert {(target, "[15]"), (target, "(3)")} <= set(corpus.inbound_anchors)
    def finder() -> AnchorFinder:
        corpus = site.corpus()
        return AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))
    assert finder().anchors(source, target) == [Anchor("Introducing Widgets", "title", 0.0)]
    site.link("/genindex/", "/widgets/", "1.34")  # a name, though only where the title writes it (other_versions)
    found = finder()
    codes, _ = found._link_words(np.array([target]))
    assert {found.keywords.vocabulary.terms[code % len(found.keywords.idf)] for code in codes.tolist()} == {"1", "34"}
    site.link("/genindex/", "/widgets/", "15 times")  # with a word, an anchor names its page (the test above)
    assert finder().anchors(source, target)[0].text == "15 times"


def test_a_label_the_site_links_many_pages_with_names_none_of_them(site: Site) -> None:
    """A listing that links each post "Read on →" teaches no post that "read" is its name: artsy's did, and "Thanks for
    reading" or "sure to read" became anchors. The same text linking up to LABEL_PAGES pages may still name each."""
    topics = ("espresso", "oolong", "kefir", "sourdough", "kombucha", "miso")
    labels = [*["Read on \u2192"] * anchors.LABEL_PAGES, "read on \u2192 "]  # the last the same, case and spacing aside
    listing = "".join(f"{topic}. {label}" for topic, label in zip(topics, labels))
    filler_site(site, "deploys, queues and workers", [*((f"/{topic}/", f"{topic.title()} Notes", f"All about {topic}.")
                                                        for topic in topics),
                                                      ("/archive/", "Archive", listing),
                                                      ("/design/", "Thoughts", "Be sure to read this before you start.")])

    def first_anchor() -> Anchor:
        corpus = site.corpus()
        target, source = corpus.urls.index(url("/espresso/")), corpus.urls.index(url("/design/"))
        return AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles)).anchors(source, target)[0]

    def link(topic: str, label: str) -> None:  # where the listing's text (after the filler) has that post's label
        at = site.texts[url("/archive/")].index(f"{topic}. {label}") + len(topic) + 2
        site.link("/archive/", f"/{topic}/", label, offset=at)

    for topic, label in zip(topics[:-1], labels):
        link(topic, label)
    assert first_anchor().source == "text"  # "read" still names each of five pages
    link(topics[-1], labels[-1])
    assert first_anchor() == Anchor("Espresso Notes", "title", 0.0)


def test_an_article_starts_an_anchor_that_ends_a_phrase(site: Site) -> None:
    """A name of one word needs a second: "the AeroPress" where no other word stands beside it in the phrase (before,
    the shortest anchor was "AeroPress in the morning"), but a word of its own phrase before an article ("portable
    Chemex", though "The Chemex," comes first and is as strong), and no article where the phrase runs on ("the Kalita
    lid" is "Kalita lid", not "the Kalita")."""
    corpus, finder = filler_site(site, "kettles, scales and grinders", [
        ("/aeropress/", "AeroPress Recipes", "An AeroPress brews a small cup."),
        ("/chemex/", "Chemex Recipes", "A Chemex brews a clean cup."),
        ("/kalita/", "Kalita Recipes", "A Kalita brews a sweet cup."),
        ("/alone/", "Mornings", "For a cleaner cup, brew with the AeroPress in the morning."),
        ("/modifier/", "Travel", "The Chemex, they say, is slow. For a cleaner cup, brew with the portable Chemex in the morning."),
        ("/runs-on/", "Lids", "For a cleaner cup, fit the Kalita lid tightly."),
    ])
    page = page_numbers(corpus)
    best = {source: finder.anchors(page[source], page[target])[0].text
            for source, target in (("/alone/", "/aeropress/"), ("/modifier/", "/chemex/"), ("/runs-on/", "/kalita/"))}
    assert best == {"/alone/": "the AeroPress", "/modifier/": "portable Chemex", "/runs-on/": "Kalita lid"}


def test_a_quantity_names_no_page_unless_its_title_writes_the_number(site: Site) -> None:
    """A recipe's "15 g" and "250" are among its heaviest words, but say what it measures, not what it is about: "16 to
    20 g" of another page is no anchor for it. A number its title writes names it still ("Rust 2018")."""
    corpus, finder = filler_site(site, "Rust deploys, queues and workers", [  # "Rust" on every page: no name alone
        ("/ratios/", "Understanding Ratios", "Weigh 15 g and 250 g, or 16 g and 250 g, or 20 g and 320 g, or 18 g."),
        ("/espresso/", "Espresso", "Most double baskets hold 16 to 20 g of fine grounds."),
        ("/edition/", "What is Rust 2018?", "The edition brings modules and lifetimes in 2018 to everyone."),
        ("/release/", "Release", "Rust 2018 shipped modules for everyone."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/espresso/"], page["/ratios/"]) == [Anchor("Understanding Ratios", "title", 0.0)]
    assert finder.anchors(page["/release/"], page["/edition/"])[0].text == "Rust 2018"


def test_a_phrase_that_only_says_when_names_no_page(site: Site) -> None:
    """A meeting's post is about its date and hour ("25 February", "3pm GMT" are among its heaviest words) and an
    edition's about its year, but another page's "25 February at 3pm GMT" or "merged in August 2018" places its own
    news in time: the anchor is a phrase of the source that says what ("steering cycle"), else the target's title. A
    year beside a word of the target's name still names it ("Rust 2018"), and a dotted number is a release's name."""
    corpus, finder = filler_site(site, "Rust deploys, queues and workers", [  # "Rust" on every page: no name alone
        ("/cycle/", "February Steering Cycle", "The steering cycle starts on 25 February at 3pm GMT. We meet on 25 "
                                               "February at 3pm GMT. Planning runs at 3pm GMT."),
        ("/notes/", "Notes", "We will talk on 25 February at 3pm GMT. The steering cycle follows."),
        ("/hours/", "Hours", "Office hours are on 25 February at 3pm GMT for everyone."),
        ("/edition/", "What is Rust 2018?", "The edition brings modules and lifetimes in 2018 to everyone."),
        ("/merged/", "Merged", "The modules work was merged in August 2018 for everyone."),
        ("/release/", "Release", "Rust 2018 shipped modules for everyone in August 2018."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/notes/"], page["/cycle/"])[0].text == "steering cycle"
    assert finder.anchors(page["/hours/"], page["/cycle/"]) == [Anchor("February Steering Cycle", "title", 0.0)]
    assert finder.anchors(page["/merged/"], page["/edition/"]) == [Anchor("What is Rust 2018?", "title", 0.0)]
    assert finder.anchors(page["/release/"], page["/edition/"])[0].text == "Rust 2018"


def test_titles_that_differ_only_in_when_make_a_series_and_a_release_number_says_what() -> None:
    titles = ["Lang team March update", "Lang team April update", "Rust 2017 Survey Results", "Rust Survey 2018 Results",
              "2019-10-10 Compiler Team Triage Meeting", "2019-11-07 Compiler Team Triage Meeting",
              "Announcing Rust 1.26", "Announcing Rust 1.27.2", "Notes", "Notes", "Lang team update"]
    vocabulary = Vocabulary()
    series = Series.of(titles, [None] * len(titles), [f"/{n}/" for n in range(len(titles))], vocabulary)
    sources, targets = np.repeat(np.arange(len(titles)), len(titles)), np.tile(np.arange(len(titles)), len(titles))
    assert not series.serial[titles.index("Announcing Rust 1.26")] and series.serial[titles.index("Notes")]
    sibling = series.siblings(sources, targets)
    assert {(titles[s], titles[t]) for s, t in zip(sources[sibling], targets[sibling])} == {
        *((a, b) for a, b in itertools.permutations(
            ["Lang team March update", "Lang team April update", "Lang team update"], 2)),
        ("Rust 2017 Survey Results", "Rust Survey 2018 Results"), ("Rust Survey 2018 Results", "Rust 2017 Survey Results"),
        ("2019-10-10 Compiler Team Triage Meeting", "2019-11-07 Compiler Team Triage Meeting"),
        ("2019-11-07 Compiler Team Triage Meeting", "2019-10-10 Compiler Team Triage Meeting"),
    }  # not the releases ("1.26" names one), nor two pages of one title


def test_a_page_of_the_sources_own_series_is_linked_by_a_word_that_sets_it_apart_its_name_or_as_the_one_before(
        site: Site) -> None:
    """Posts titled alike but for when ("Lang team March update", "Lang team April update") share their template's
    words, which name the series, not a post: from the June update, "lang team planning meeting" names no other month's
    post, but "April design" names April's. A month names a post dated near the source, not January's of the
    year before. May's, the one before June's, may be linked ("last time": by its title), and so may February's, whose
    name June's writes out; March's and the January's may not."""
    filler = " ".join(f"Filler sentence {n} about deploys, queues and workers here." for n in range(12))
    for n in range(16):  # the series' words on under COMMON_SHARE of the pages
        site.page(f"/other-{n}/", f"Other Page {n}", f"{filler} Unusual{n} words belong to page {n} only.")
    months = {"January": "2020-01-06", "February": "2021-02-01", "March": "2021-03-01", "April": "2021-04-01",
              "May": "2021-05-03", "June": "2021-06-01"}
    for month, published in months.items():
        said = (" The April design meeting moved. The January design meeting moved too. Read the Lang team February "
                "update too.") if month == "June" else ""
        site.page(f"/{month.lower()}/", f"Lang team {month} update",
                  f"{filler} The lang team planning meeting chose design meetings on const generics.{said}",
                  published=published)
    corpus = site.corpus()
    keywords = Keywords(corpus.texts, corpus.titles)
    page = {month: corpus.urls.index(url(f"/{month.lower()}/")) for month in months}
    finder = AnchorFinder(corpus, keywords)
    assert [anchor.text for anchor in finder.anchors(page["June"], page["February"])] == ["Lang team February update"] * 2
    assert finder.anchors(page["June"], page["April"])[0].text.startswith("April design")
    for month in ("January", "March", "May"):
        assert finder.anchors(page["June"], page[month]) == [Anchor(f"Lang team {month} update", "title", 0.0)]
    queue, _, _ = rank(corpus, Candidates.of(every_pair(corpus, keywords)), finder, 4)
    linked = {item.target: item.anchor for item in queue if item.source == page["June"]}
    assert linked[page["May"]] == Anchor("Lang team May update", "title", 0.0)
    assert linked[page["February"]].text == "Lang team February update"
    assert linked[page["April"]].text.startswith("April design")
    assert page["March"] not in linked and page["January"] not in linked


def test_a_part_of_a_dotted_number_names_nothing_outside_it(site: Site) -> None:
    """"1" and "18" of "Announcing Rust 1.18" name the release only together, as its title writes them: "1 byte" and
    "18 fields" are no anchors for it, "Rust 1.18" is. A word of a dotted name is still a word: "Podfile" names
    "Reading a Podfile.lock"."""
    corpus, finder = filler_site(site, "Rust deploys, queues and workers", [  # "Rust" on every page: no name alone
        ("/release/", "Announcing Rust 1.18", "Rust 1.18 packs byte layouts of enum fields tighter."),
        ("/layouts/", "Layouts", "The option is still 1 byte wide, and 18 fields fit in it."),
        ("/changes/", "Changes", "Since Rust 1.18 the option is still small."),
        ("/lockfile/", "Reading a Podfile.lock", "The lockfile pins every pod."),
        ("/pods/", "Pods", "Check the app's Podfile lockfile before you push."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/layouts/"], page["/release/"]) == [Anchor("Announcing Rust 1.18", "title", 0.0)]
    assert finder.anchors(page["/changes/"], page["/release/"])[0].text == "Rust 1.18"
    podfile = finder.anchors(page["/pods/"], page["/lockfile/"])[0]
    assert podfile.source == "text" and "Podfile" in podfile.text


def test_a_name_too_long_to_be_the_anchor_written_out_holds_the_anchor(site: Site) -> None:
    """A source that writes out a target's name of more than six words cites it there: the anchor is a phrase inside
    that citation, not the same words earlier in the text, which would be the first among equals."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/brood/", "How To Write Unit Tests Like a Brood Parasite", "Brood parasites lay eggs; unit tests borrow nests."),
        ("/reading/", "Reading", "We review unit tests in pairs. "
                                 "Our reading list: How To Write Unit Tests Like a Brood Parasite - on metaphors."),
    ])
    page = page_numbers(corpus)
    text = corpus.texts[page["/reading/"]]
    cited = text.index("How To Write")
    first = finder.anchors(page["/reading/"], page["/brood/"])[0]
    assert first.source == "text" and cited <= first.offset < cited + len("How To Write Unit Tests Like a Brood Parasite")


def test_a_release_written_with_a_trailing_zero_is_that_release(site: Site) -> None:
    """"Rust 1.18.0" is the release "Announcing Rust 1.18" (a trailing ".0" says nothing), as "Rust 1.18" is; "Rust
    1.18.1" is another, and so is a pre-release, "Rust 1.18.0-beta.2". The filler writes no plain "0" (it is told apart
    by words), so the "0" is no word of any target's."""
    trees = "alder birch cedar elm fir hazel larch maple oak pine rowan spruce".split()
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/release/", "Announcing Rust 1.18", "Rust 1.18 packs byte layouts tighter."),
        ("/zero/", "Zero", "In Rust 1.18.0 the option shrank."),
        ("/others/", "Others", "In Rust 1.18.1 the option shrank. In Rust 1.18.0-beta.2 it grew."),
    ], labels=trees)
    page = page_numbers(corpus)
    assert finder.anchors(page["/zero/"], page["/release/"])[0].text == "Rust 1.18.0"
    assert finder.anchors(page["/others/"], page["/release/"])[0].source == "title"


def test_a_window_that_holds_a_verb_such_as_had_or_can_is_a_clause_not_an_anchor(site: Site) -> None:
    """"the compiler team had a planning meeting" says what happened; "planning meeting" names the page. And "kettle
    you can pour" is no name of a kettle's page, nor "Brennan did" of Brennan's; but "is" may stand in a name: "how
    coffee is processed"."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/cycle/", "Compiler Planning Meeting", "The compiler team planning meeting sets the cycle."),
        ("/notes/", "Notes", "On Friday the compiler team had a planning meeting about the cycle."),
        ("/kettle/", "Gooseneck Kettle Pouring", "A gooseneck kettle pours slowly."),
        ("/pour/", "Pouring", "Any kettle you can pour from works."),
        ("/processing/", "How Coffee Is Processed", "Washed, natural and honey processing of coffee cherries."),
        ("/buying/", "Buying", "Learn how coffee is processed before you buy."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/notes/"], page["/cycle/"])[0].text == "planning meeting"
    assert not any("can" in anchor.text.split() for anchor in finder.anchors(page["/pour/"], page["/kettle/"]))
    assert finder.anchors(page["/buying/"], page["/processing/"])[0].text == "how coffee is processed"  # its name


def test_the_best_anchors_of_a_pair_are_the_greedy_choice_in_preference_order() -> None:
    """windows.choose scans each pair's windows (they come by pair, then start): it must pick what a plain sort and a
    greedy scan pick (a whole phrase before one that cuts a collocation, then by preference, then by ending), and each
    pair's strongest strength, whole or not, of the windows that do not start on an article; a clause counts in that
    strength, and is never chosen."""
    rng = np.random.default_rng(3)
    windows = []
    for pair in range(300):
        for _ in range(int(rng.integers(0, 9))):
            start = int(rng.integers(0, 60))
            windows.append((pair, start, start + int(rng.integers(1, 15)), int(rng.integers(0, 4)) / 4,  # many ties
                            bool(rng.random() < 0.8), int(rng.integers(0, 3)), bool(rng.random() < 0.15)))
    windows.sort(key=lambda window: window[:2])  # strong_windows' order (stable: equal starts keep their order)
    pair, starts, ends, strength, whole, ending, clause = (np.array(column) for column in zip(*windows))
    first = 3 * np.arange(len(pair)) + 1  # each window its own two words, the last joined to the next word if it cuts
    words = 3 * len(pair) + 1
    collocated, word_starts, word_ends = np.zeros(words, dtype=bool), np.zeros(words, dtype=np.int64), np.zeros(words, dtype=np.int64)
    collocated[first + 1], word_starts[first], word_ends[first + 1] = ~whole, starts, ends
    clause_word = np.zeros(words, dtype=bool)
    clause_word[first[clause]] = True  # its first word ("had" of "had a meeting"): any word of a window counts
    found = anchors.Found.empty(300)
    choose(pair, strength.astype(np.float32), first, first + 1, ending.astype(np.int8), word_starts, word_ends, np.zeros(words + 1, dtype=np.int64),
           collocated, np.concatenate([[0], np.cumsum(clause_word)]), 0.0, found.best, found.starts, found.ends,
           found.strengths)  # preference: strength
    chosen = {owner: [(int(start), int(end), float(value)) for start, end, value in zip(*row) if start >= 0]
              for owner, row in enumerate(zip(found.starts, found.ends, found.strengths))}
    expected: dict[int, list[tuple[int, int, float]]] = {owner: [] for owner in range(300)}
    for place in sorted(range(len(windows)), key=lambda place: (windows[place][0], not windows[place][4], -windows[place][3],
                                                      -windows[place][5], place)):
        owner, start, end, value, *_, is_clause = windows[place]
        taken = expected[owner]
        if not is_clause and len(taken) < anchors.ALTERNATIVES and all(end <= other_start or other_end <= start
                                                                       for other_start, other_end, _ in taken):
            taken.append((start, end, value))
    assert chosen == expected
    assert found.best.tolist() == [max((window[3] for window in windows if window[0] == owner and window[5] != 1), default=0.0)
                                   for owner in range(300)]  # but for an article's windows (ending 1)
    assert sum(map(len, chosen.values())) > 300  # pairs with two or three anchors, not only one
    assert any(not window[4] and (window[1], window[2], window[3]) in chosen[window[0]] for window in windows)  # cut, when no whole one is left
    assert any(window[6] and window[3] == found.best[window[0]] > 0 for window in windows)  # a clause the strongest


def test_an_anchor_is_a_whole_phrase_of_the_site_not_a_piece_of_one() -> None:
    """Where the site writes "working group" as one phrase, "survey working" and "group survey" cut it: the anchors for
    the survey are "survey working group" and "working group survey", though the shorter windows hold as much of the
    target's name. On a site that writes the two words apart, the shorter ones are the anchors."""
    def first_anchors(others: list[str]) -> tuple[str, str]:
        texts = ["This year we asked everyone about their tools in the survey, and the survey showed a lot.",
                 "Every answer was read by the survey working group last week.", "Our working group survey was in May.",
                 *others, *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
        titles = ["The 2024 survey", "Thanks", "Closed", *(f"Other {i}" for i in range(len(others))), *(f"Tea page {i}" for i in range(8))]
        finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
        return finder.anchors(1, 0)[0].text, finder.anchors(2, 0)[0].text
    assert first_anchors(["The working group met on Monday.", "A charter helps a working group."]) == (
        "survey working group", "working group survey")
    assert first_anchors(["The group met on Monday.", "We are working on it."]) == ("survey working", "group survey")


def test_a_collocation_is_a_pair_written_three_times_whose_words_seldom_go_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keywords.collocations: pairs of neighbouring content words written COLLOCATION_MIN times or more whose Dice
    coefficient, 2 x pair / (first + second), is COLLOCATION_DICE (0.12) or more, or whose second word follows the first
    in COLLOCATION_HEAD (half) of its uses or more; counted on every n-th page of a site larger than COLLOCATION_PAGES."""
    texts = ["The working group met.", "Each working group voted.", "A working group reads.",  # 2 x 3 / (3 + 3) = 1
             "Fresh beans.", "Fresh beans.", "Fresh beans.",  # 2 x 3 / (28 + 25) = 0.113: fresh goes with anything
             *(f"Fresh item{i} arrived." for i in range(25)), *(f"The beans item{i} lasted." for i in range(22)),
             "Roast dates.", "Roast dates.", "Roast dates.",  # 2 x 3 / (23 + 23) = 0.130
             *(f"Roast style{i} ended." for i in range(20)), *(f"Dates list{i} ended." for i in range(20)),
             "Burr grinders.", "Burr grinders.",  # written twice only
             "Color management.", "Color management.", "Color management.", "The management met.",  # 3 of 4 uses of management
             *(f"Color hue{i} changed." for i in range(60)),  # though 2 x 3 / (63 + 4) = 0.09
             "Sharp knives.", "Sharp knives.", "Sharp knives.", "Sharp edges.",  # 3 of 4 uses of sharp: not enough
             *(f"Knives tool{i} worked." for i in range(60))]
    def pairs(keywords: Keywords) -> set[tuple[str, str]]:
        terms = keywords.vocabulary.terms
        return {(terms[key >> 32], terms[key & 0xFFFFFFFF]) for key in keywords.collocations.tolist()}
    assert {pair for pair in pairs(Keywords(texts)) if not any(char.isdigit() for char in "".join(pair))} == {
        (stem("working"), stem("group")), (stem("roast"), stem("dates")), (stem("color"), stem("management"))}
    shuffled = [texts[i] for i in np.random.default_rng(5).permutation(len(texts))]
    monkeypatch.setattr(index, "COLLOCATION_PAGES", (len(shuffled) + 2) // 3)  # every third page
    assert pairs(Keywords(shuffled)) == pairs(Keywords(shuffled[::3]))


def test_a_link_between_two_copies_of_one_page_is_no_editorial_link(site: Site) -> None:
    """Two pages with the same main text (a type re-exported under two paths) are one page to the engine, never a
    suggestion; the backtest hides no link between them, nor scores any method on one."""
    sentence = "A set keeps its items sorted, and retain keeps only the items a predicate accepts."
    text = " ".join([sentence] * 6)
    for path, title in (("/set/", "BTreeSet"), ("/reexported/set/", "BTreeSet"), ("/map/", "BTreeMap")):
        site.page(path, title, text if title == "BTreeSet" else f"{text} A map sorts its keys.")
    site.link("/set/", "/reexported/set/", "retain", context=sentence)
    site.link("/set/", "/map/", "items sorted", context=sentence)
    assert [(link.source, link.resolved) for link in editorial_links(site.db, site.corpus())] == [(url("/set/"), url("/map/"))]


def test_a_button_without_a_word_is_no_editorial_link(site: Site) -> None:
    """A manual's row of buttons ("[ << ] [ < ] [ Up ] [ > ] [ >> ]", as texinfo writes one on every page) crawls as
    content, but no editor linked "<<" in a sentence: the backtest hides no such link."""
    text = " ".join(["A set keeps its items sorted, and retain keeps only the items a predicate accepts."] * 6)
    buttons, sentence = "[ << ] [ < ] [ Up ] [ > ] [ >> ] [Top] [Contents] [Index]", "Collect them into a vector when order matters."
    for path, title in (("/set/", "BTreeSet"), ("/map/", "BTreeMap"), ("/vec/", "Vec")):
        site.page(path, title, f"{buttons}\n{text} {sentence}" if path == "/set/" else f"{text} {title} here.")
    site.link("/set/", "/map/", "<<", context=buttons)
    site.link("/set/", "/vec/", "a vector", context=sentence)
    assert [(link.source, link.resolved) for link in editorial_links(site.db, site.corpus())] == [(url("/set/"), url("/vec/"))]


def test_a_backtest_round_hides_a_link_whatever_the_others_and_the_port() -> None:
    """Which links a round hides depends on each link alone: a re-crawl (another port) that gains one editorial link
    and loses another hides the same others, so that two crawls' figures compare."""
    def links(port: int, paths: range) -> list[HiddenLink]:
        return [HiddenLink(f"http://127.0.0.1:{port}/p{n}/", f"http://127.0.0.1:{port}/t{n}/",
                           f"http://127.0.0.1:{port}/t{n}/", "anchor") for n in paths]

    def hidden(port: int, paths: range, seed: int) -> set[str]:
        return {urlsplit(link.source).path for link in hidden_links(links(port, paths), 0.2, seed)}

    first = hidden(8000, range(100), 1)
    assert len(first) == 20 and first == hidden(9000, range(100), 1)
    assert len(first ^ hidden(9000, range(1, 101), 1)) <= 2  # one link out, one in: at most one hidden changes
    assert first != hidden(8000, range(100), 2)
