"""Stage 1, load: analysis/load.py (what a crawl database gives the analysis: its pages, links, spans and
template) and analysis/scope.py, on small crawl databases written by hand (handmade.py), with exact
expectations.

Weights and constants of analysis/score.py and analysis/anchors.py are still being tuned, so these tests check
mechanisms (what is excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from analysis import load
from analysis.export import save_cannibalization
from analysis.load import MAX_LINK_DENSITY, Corpus, EmptyCrawl, among, distinct
from analysis.scope import Scope, ScopeError
from handmade import SLUGS, Site, prose, url


def pairs_of(corpus: Corpus, pairs: set[tuple[int, int]]) -> set[tuple[str, str]]:
    return {(corpus.urls[a], corpus.urls[b]) for a, b in pairs}


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
    save_cannibalization(site.db, corpus, [])
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
