"""Small crawl databases written by hand for the analysis stage tests, and the helpers that more than one stage uses.

The stage tests: test_load.py, test_candidates.py, test_rank.py, test_anchors.py, test_export.py, test_backtest.py; the
fixtures several of them take (site, five, ranked_site) are in conftest.py. Every database here is a fresh one from
linkspider.db.open_database with rows inserted as the crawler stores them; page texts are real prose from
demo/content/posts with the tags stripped.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from analysis.anchors import AnchorFinder
from analysis.candidates import Candidate, Candidates
from analysis.index import Keywords
from analysis.load import Corpus, Spans, load_corpus
from analysis.score import Suggestion, rank
from conftest import ROOT
from linkspider.db import open_database


POSTS_DIR = ROOT / "demo" / "content" / "posts"


SLUGS = sorted(path.stem for path in POSTS_DIR.glob("*.html"))


BASE = "https://blog.example"


_BLOCK_END = re.compile(r"</(?:p|li|h[1-6]|ul|ol)>")


_LINK = re.compile(r'<a href="([^"]+)">(.*?)</a>', re.S)


_TAG = re.compile(r"<[^>]+>")


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


RANK_SLUGS = ["aeropress-recipes", "burr-vs-blade-grinders", "chemex-guide", "espresso-basics", "french-press-guide",
              "grind-size-chart", "pour-over-basics", "v60-technique"]


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
