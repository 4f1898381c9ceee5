"""Unit tests: URL normalisation and site membership, sentence boundaries, HTML extraction, click depth."""

from __future__ import annotations

import json
import logging
import random
import re
import sqlite3
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from linkspider.db import Unwritable, explained, open_database, writing
from linkspider.extract import parse_html
from linkspider.items import Link, Page
from linkspider.sentences import sentence_at, sentence_spans
from linkspider.urls import database_name, is_http_url, normalize_url, site_key
from pipelines.finalize import finalize_crawl

# --- linkspider.urls ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url, normalized", [
    ("http://example.com/a#section", "http://example.com/a"),
    ("HTTP://Example.COM/Path/", "http://example.com/Path/"),  # the path keeps its case
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("https://example.com:80/a", "https://example.com:80/a"),  # 80 is not https's default
    ("http://example.com:8080/a", "http://example.com:8080/a"),
    ("http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2"),
    ("http://example.com", "http://example.com/"),
    ("  http://example.com/a  ", "http://example.com/a"),
    ("http://example.com/a b", "http://example.com/a%20b"),
    ("http://example.com/%7Euser/", "http://example.com/~user/"),
    ("http://[::1]:8080/x", "http://[::1]:8080/x"),
])
def test_normalize_url(url: str, normalized: str) -> None:
    assert normalize_url(url) == normalized


def test_normalize_url_makes_query_orders_one_page() -> None:
    assert normalize_url("http://example.com/s?q=1&page=2") == normalize_url("http://example.com/s?page=2&q=1#top")


def test_normalize_url_is_idempotent() -> None:
    once = normalize_url("HTTPS://Example.com:443/a b/?z=1&a=2#x")
    assert normalize_url(once) == once


@pytest.mark.parametrize("url_or_host, key", [
    ("http://www.example.com/", "example.com"),
    ("https://example.com/blog/", "example.com"),
    ("http://WWW.Example.COM", "example.com"),
    ("example.com", "example.com"),
    ("www.example.com", "example.com"),
    ("https://example.com:443/", "example.com"),
    ("http://example.com:80/", "example.com"),
    ("127.0.0.1:8000", "127.0.0.1:8000"),
    ("http://127.0.0.1:9000/x", "127.0.0.1:9000"),
    ("www.example.com:8000", "example.com:8000"),
    ("http://blog.example.com/", "blog.example.com"),  # a subdomain is another site
])
def test_site_key(url_or_host: str, key: str) -> None:
    assert site_key(url_or_host) == key


def test_site_key_www_and_scheme_are_one_site() -> None:
    assert site_key("http://www.example.com/") == site_key("https://example.com/")


def test_site_key_ports_are_different_sites() -> None:
    assert site_key("http://127.0.0.1:8000/") != site_key("http://127.0.0.1:9000/")


@pytest.mark.parametrize("url, name", [
    ("https://www.example.com/blog/", "example.com.db"),
    ("http://127.0.0.1:8765/", "127.0.0.1_8765.db"),
    ("http://example.com:80/", "example.com.db"),
])
def test_database_name(url: str, name: str) -> None:
    assert database_name(url) == name


@pytest.mark.parametrize("url, ok", [
    ("https://example.com/", True), ("http://127.0.0.1:1/", True), ("  http://example.com  ", True),
    ("ftp://example.com/", False), ("example.com", False), ("http://", False), ("mailto:a@example.com", False),
])
def test_is_http_url(url: str, ok: bool) -> None:
    assert is_http_url(url) is ok


# --- linkspider.sentences -------------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


def test_sentences_end_at_terminal_punctuation() -> None:
    assert sentences("Grind finer. Taste again! Is it sweeter? Probably") == [
        "Grind finer.", "Taste again!", "Is it sweeter?", "Probably"]


def test_sentence_spans_are_offsets_into_the_text() -> None:
    assert sentence_spans("One. Two! Three? Four") == [(0, 4), (5, 9), (10, 16), (17, 21)]


def test_a_line_break_ends_a_sentence() -> None:
    text = "Why it matters\nFirst line. Second line.\n\nA list:\n- a list item\n  - a nested item"
    assert sentences(text) == ["Why it matters", "First line.", "Second line.", "A list:", "a list item", "a nested item"]


def test_a_list_item_s_sentence_leaves_out_its_marker() -> None:
    """The extractor writes a list item as "- item" on a line of its own (indented as deep as its list): the marker
    is no part of the item's sentence, which is the context a link or an anchor is shown in."""
    text = "- Grind finer.\n  - Taste the cup. Then - and only then - pour.\n- A last item"
    assert sentences(text) == ["Grind finer.", "Taste the cup.", "Then - and only then - pour.", "A last item"]
    assert sentence_at(text, text.index("cup")) == (text.index("Taste"), text.index("Then") - 1)
    assert sentence_at(text, text.index("A last")) == (text.index("A last"), len(text))
    assert sentence_at(text, 0) == (0, 0)  # the marker itself is between sentences


def test_closing_quotes_belong_to_the_sentence() -> None:
    assert sentences('He said "Stop." Then he left.') == ['He said "Stop."', "Then he left."]
    assert sentences("She asked \u201cWhy?\u201d Nobody knew.") == ["She asked \u201cWhy?\u201d", "Nobody knew."]
    assert sentences("It's 'done.' Next.") == ["It's 'done.'", "Next."]


def test_closing_brackets_belong_to_the_sentence() -> None:
    assert sentences("Use a scale (a cheap one works.) Weigh everything.") == [
        "Use a scale (a cheap one works.)", "Weigh everything."]


def test_a_point_inside_a_number_does_not_end_a_sentence() -> None:
    assert sentences("Aim for 1.5 percent TDS. Then taste.") == ["Aim for 1.5 percent TDS.", "Then taste."]


def test_white_space_at_either_end_is_not_part_of_a_sentence() -> None:
    assert sentence_spans("Done.   ") == [(0, 5)]
    assert sentence_spans("Done.\n\n") == [(0, 5)]
    text = "A heading  \n   An indented line holds the link.\n\tAnd a tab"
    assert sentences(text) == ["A heading", "An indented line holds the link.", "And a tab"]
    assert text[slice(*sentence_at(text, text.index("link")))] == "An indented line holds the link."
    assert sentence_at(text, text.index("An") - 1) == (text.index("An") - 1,) * 2  # the indent is between sentences


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_blank_text_has_no_sentences(text: str) -> None:
    assert sentence_spans(text) == []


def test_sentence_at_finds_the_sentence_holding_an_offset() -> None:
    text = "Grind finer. Taste the cup again."
    assert sentence_at(text, 0) == (0, 12)
    assert sentence_at(text, 11) == (0, 12)
    assert sentence_at(text, text.index("cup")) == (13, 33)


def test_sentence_at_between_sentences_is_empty() -> None:
    text = "Grind finer. Taste again."
    assert sentence_at(text, 12) == (12, 12)  # the space that separates them
    assert sentence_at(text, len(text)) == (len(text), len(text))


def test_sentence_at_crosses_no_line_break() -> None:
    text = "A heading\nThe paragraph holds the link."
    start, end = sentence_at(text, text.index("link"))
    assert text[start:end] == "The paragraph holds the link."


def test_sentence_at_from_the_line_alone_is_sentence_at_from_all_spans() -> None:
    rng = random.Random(7)  # short texts of the characters that make and break boundaries, every offset
    alphabet = ["a", "b", " ", ".", "!", "?", "\n", '"', "'", ")", "]", "\u201d", "\u2019", "\t", "\u00a0", "x.", "-", "\n- "]
    checked = 0
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        spans = sentence_spans(text)
        for offset in range(len(text) + 1):
            assert sentence_at(text, offset) == sentence_at(text, offset, spans), (text, offset)
            checked += sentence_at(text, offset, spans)[0] != offset
    assert checked > 10_000  # most offsets are inside a sentence that starts before them


# --- linkspider.extract.parse_html ----------------------------------------------------------------------------

PAGE_URL = "https://example.com/guides/brewing/"
ARTICLE = (
    "<main><article><h1>Brewing notes</h1>"
    "<p>Coffee is a brewed drink prepared from roasted coffee beans, the seeds of berries from certain Coffea "
    "species. It is one of the most popular drinks in the world, and it can be prepared in a variety of ways.</p>"
    "<p>Read our guide to <a href='/grind/'>grind size</a> before you start. The beans are roasted to different "
    "levels depending on the desired flavour, and then ground.</p>"
    "{extra}</article></main>"
)


def parse(markup: str, url: str = PAGE_URL, headers: dict[str, str] | None = None) -> Page:
    """Run parse_html as the spider does, on an inline document; example.com (any www) is the site."""
    response = HtmlResponse(url=url, body=markup.encode("utf-8"), encoding="utf-8", headers=headers or {})
    lowercase = {key.decode("latin-1").lower(): b", ".join(values).decode("latin-1")
                 for key, values in response.headers.items()}
    return parse_html(Page(url=url), response.selector.root, get_base_url(response), lowercase,
                      lambda target: site_key(target) == "example.com")


def document(body: str = "", head: str = "", extra: str = "") -> str:
    return f"<html lang='en'><head><title>Brewing</title>{head}</head><body>{body}{ARTICLE.format(extra=extra)}</body></html>"


def link_to(page: Page, target: str) -> Link:
    [link] = [link for link in page.links if link.target == target]
    return link


def test_metadata() -> None:
    page = parse(document(head="<meta name='Description' content='  How to brew.  '>"))
    assert (page.title, page.h1, page.description, page.lang) == ("Brewing", "Brewing notes", "How to brew.", "en")


def test_lang_falls_back_to_content_language_header() -> None:
    page = parse("<html><body><p>Bonjour.</p></body></html>", headers={"Content-Language": "fr"})
    assert page.lang == "fr"


def test_main_text_leaves_out_landmarks() -> None:
    page = parse(document(body="<nav><a href='/'>Home</a></nav><aside class='sidebar'>Subscribe now</aside>"))
    assert page.main_text.startswith("Brewing notes\nCoffee is a brewed drink")
    assert "Home" not in page.main_text and "Subscribe" not in page.main_text
    assert page.word_count == len(page.main_text.split())


def test_a_permalink_glyph_is_no_part_of_the_text() -> None:
    """The "#", "\u00b6" or "\u00a7" that links a heading to itself (Node.js, Sphinx, rustdoc) and a footnote's way
    back are chrome: they would end the heading ("Debugger#") and the sentence a link or an anchor is shown in."""
    page = parse(document(extra="<h2>Grind size<span><a class='mark' href='#grind'>#</a></span></h2>"
                                "<p>Finer grounds extract faster<a href='#note'>\u00b6</a> than coarse ones, "
                                "as <a href='#grind'>the section above</a> says.<a href='#ref-1'>\u21a9\ufe0e</a></p>"
                                "<h2><a class='header' href='#try'>?</a></h2><p>The operator <a href='#try'>?</a> returns early.</p>"))
    assert "\nGrind size\nFiner grounds extract faster than coarse ones, as the section above says.\n" in page.main_text
    assert page.headings.splitlines()[-2:] == ["Grind size", "?"]  # a heading that is a symbol (mdBook's) stays
    assert page.main_text.endswith("\n?\nThe operator ? returns early.")


def test_the_extractor_s_complaints_about_markup_are_not_the_crawl_s(caplog: pytest.LogCaptureFixture) -> None:
    """trafilatura logs a warning for a link with no text or no address ("empty link: {'target':
    'http://linkspider.invalid/1'}", "missing link attribute"): about the site's markup, naming the marker URL it was
    given for the page's own, it would read in the crawl's log as an error of the crawl."""
    with caplog.at_level(logging.WARNING):
        page = parse(document(extra="<p>See the <a href='/beans/'></a> list, or <a>this one</a>, of the origins we roast "
                                    "each week, with the notes of our tasting panel.</p>"))
    assert "origins we roast" in page.main_text
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING], caplog.text


def test_a_short_page_leaves_out_its_navigation_too() -> None:
    """Where the extractor finds too little (a short page), it falls back to the whole body's text: navigation is
    pruned first, so that a sidebar's words are not main text and its links not content links (Rust's std docs)."""
    page = parse("<html><head><title>fs</title></head><body>"
                 "<nav class='sidebar'><a href='/alpha/'>Alpha module</a> <a href='/beta/'>Beta module</a></nav>"
                 "<div role='navigation'><a href='/gamma/'>Gamma listing</a></div>"
                 "<main><h1>Module fs</h1><p>Linux-specific extensions to <a href='/fs/'>the fs module</a>.</p></main>"
                 "</body></html>")
    assert "Linux-specific extensions to the fs module." in page.main_text
    assert not any(word in page.main_text for word in ("Alpha", "Beta", "Gamma"))
    assert [link.region for link in page.links] == ["nav", "nav", "nav", "content"]


def test_content_link_has_anchor_offset_and_sentence() -> None:
    page = parse(document())
    link = link_to(page, "https://example.com/grind/")
    assert (link.region, link.anchor, link.external) == ("content", "grind size", False)
    assert page.main_text[link.text_offset:link.text_offset + len("grind size")] == "grind size"
    assert link.context == "Read our guide to grind size before you start."


def test_repeated_anchor_gets_the_offset_of_each_occurrence() -> None:
    page = parse(document(extra="<p>Both <a href='/a'>alpha</a> and <a href='/b'>beta</a> matter, "
                                "and <a href='/a'>alpha</a> matters most of all in this little test.</p>"))
    offsets = [link.text_offset for link in page.links if link.target == "https://example.com/a"]
    assert len(offsets) == 2 and offsets[0] < offsets[1]
    assert all(page.main_text[offset:offset + 5] == "alpha" for offset in offsets)


def test_nested_markup_inside_a_content_link() -> None:
    page = parse(document(extra="<p>Start with <a href='/g'><em>fine</em> grounds</a> and more words to make "
                                "the paragraph long enough to count.</p>"))
    link = link_to(page, "https://example.com/g")
    assert link.anchor == "fine grounds"
    assert page.main_text[link.text_offset:link.text_offset + len(link.anchor)] == "fine grounds"


def test_a_paragraph_wrapped_in_the_html_source_is_one_line_of_the_main_text() -> None:
    """A line break of the HTML source inside a paragraph is a space to a reader (Markdown rendered line for line):
    the sentence, its link's context and the words around the wrap stay together. A code block keeps its lines."""
    page = parse(document(extra=(
        "<p>The regex crate is maintained by the Rust project and is the recommended way to use\n"
        "    <a href='/regular/'>regular\nexpressions</a> in Rust,\r\n  with a guarantee of linear time searches.</p>"
        "<pre><code>fn main() {\n    let grind = size();\n}\n</code></pre>")))
    sentence = ("The regex crate is maintained by the Rust project and is the recommended way to use regular expressions "
                "in Rust, with a guarantee of linear time searches.")
    assert sentence + "\nfn main() {\n    let grind = size();\n}" in page.main_text
    link = link_to(page, "https://example.com/regular/")
    assert (link.anchor, link.context) == ("regular expressions", sentence)
    assert page.main_text[link.text_offset:].startswith("regular expressions in Rust")


def test_code_blocks_are_marked_in_the_main_text_and_leave_it_as_it_was() -> None:
    """A <pre> block's span, to its last visible character; inline code is prose ("Call grind() first"); a block with
    links (an embedded tweet the extractor takes for code) is none, and its links keep their offsets."""
    tweet = ("<center><blockquote class='twitter-tweet' lang='en'><p>We open sourced the <a href='https://twitter.com/b'>@Brewing</a> "
             "app.&#10;&#10;<a href='https://t.co/c1'>https://t.co/c1</a>&#10;&#10;Enjoy</p>&mdash; Someone (@someone) "
             "<a href='https://twitter.com/b/status/1'>January 22, 2015</a></blockquote></center>")
    page = parse(document(extra=(
        "<pre><code>fn main() {\n    let grind = size();\n}\n</code></pre>"
        "<p>Call <code>grind()</code> first, then weigh the beans; a sentence long enough to stay in the text.</p>"
        f"{tweet}<p>Another paragraph of prose, so that the extractor keeps the whole article body here.</p>")))
    [(start, end)] = json.loads(page.code_spans)
    assert page.main_text[start:end] == "fn main() {\n    let grind = size();\n}"
    assert "ground.\nfn main() {" in page.main_text and "}\nCall grind() first" in page.main_text
    assert "@Brewing app." in page.main_text and "\u27e6" not in page.main_text
    link = link_to(page, "https://twitter.com/b/status/1")
    assert page.main_text[link.text_offset:link.text_offset + len(link.anchor)] == "January 22, 2015"
    assert parse(document()).code_spans is None


def test_every_pre_is_a_code_block_whatever_its_text_looks_like() -> None:
    """A <pre> without <code> whose text has no brace and no four-space indent (SQLite's C declarations, indented two
    spaces, in a <blockquote>; a Sphinx block of highlighted spans; one line of shell) is code too: trafilatura takes
    it for a quote, which left its lines joined into one "sentence" and its comments a place for anchors. A quote of
    prose stays prose."""
    declaration = "int sqlite3_close(\n  sqlite3 *db       /* the database connection */\n);"
    page = parse(document(extra=(
        f"<blockquote><pre>{declaration}</pre></blockquote>"
        "<p>Close the connection when done, a sentence of prose long enough to stay in the main text.</p>"
        "<div class='highlight'><pre><span class='gp'>&gt;&gt;&gt; </span><span class='n'>grind</span><span class='p'>"
        "(</span><span class='mi'>18</span><span class='p'>)</span>\n<span class='go'>fine</span></pre></div>"
        "<blockquote><pre>sqlite3 -cmd .help</pre></blockquote>"
        "<blockquote><p>Good coffee takes time, as an old barista said to us one morning in the shop.</p></blockquote>")))
    blocks = [page.main_text[start:end] for start, end in json.loads(page.code_spans)]
    assert blocks == [declaration, ">>> grind(18)\nfine", "sqlite3 -cmd .help"]
    assert "Good coffee takes time" in page.main_text and not any("Good coffee" in block for block in blocks)


def test_divs_laid_out_as_a_table_keep_their_words_apart() -> None:
    """Javadoc writes its summaries as a grid of <div>s, whose texts the extractor joined with nothing between
    ("Modifier and TypeMethodDescriptionclone()booleanOverride"): words glued across cells, anchors across them ("byte
    order.toString"). Each div ends its line now, and a link in one keeps its offset."""
    grid = ("<ul><li><section><h2>Method Summary</h2><div class='summary-table'><div>Modifier and Type</div><div>Method"
            "</div><div>Description</div><div><code>boolean</code></div><div><code><a href='/equals/'>equals</a>(Object"
            " other)</code></div><div><div class='block'>Compare in big endian byte order.</div></div><div><code>String"
            "</code></div><div><code>toString()</code></div><div>Show the value.</div></div></section></li></ul>")
    page = parse(document(extra=grid))
    assert ("Modifier and Type\nMethod\nDescription\nboolean\nequals(Object other)\nCompare in big endian byte order."
            "\nString\ntoString()\nShow the value.") in page.main_text
    assert "\u27e0" not in page.main_text
    link = link_to(page, "https://example.com/equals/")
    assert page.main_text[link.text_offset:].startswith("equals(Object other)")
    card = parse(document(extra="<p>Read next, a paragraph long enough to stay in the text of the page, with a card:</p>"
                                "<a href='/next/'><div>Next post</div><div>Its summary</div></a>"))
    assert link_to(card, "https://example.com/next/").anchor == "Next post Its summary"  # the page's, marks taken out


def test_a_frameset_links_its_frames_pages() -> None:
    """An old manual's index.html is a frameset: its frames' pages are how the crawl goes on (the <noframes> text is
    raw text to the parser, its links none). They are no content links."""
    page = parse("<html><head><title>Manual</title></head><frameset cols='26%,74%'><frame src='toc.html' name='nav'>"
                 "<frame src='https://cdn.example/cover.html'></frameset><noframes><a href='toc.html'>Manual</a>"
                 "</noframes></html>", url="https://example.com/manual/index.html")
    assert [(link.target, link.region, link.external) for link in page.links] == [
        ("https://example.com/manual/toc.html", "other", False), ("https://cdn.example/cover.html", "other", True)]


def test_a_declaration_that_links_its_types_is_a_code_block() -> None:
    """An API's declaration, a <pre> whose code links its types (rustdoc, javadoc), is code: no anchor comes from it,
    and its links stay the page's content links, in no sentence. Inline code in a link, or with one, stays prose."""
    page = parse(document(extra=(
        "<pre class='rust item-decl'><code>pub type c_short = <a href='/i16/'>i16</a>;</code></pre>"
        "<p>Read <code><a href='/fs/'>fs::Metadata</a></code> first, and the rest of this sentence with it.</p>"
        "<p>A <a href='/vec/'><code>Vec</code></a> grows, as the rest of this sentence says at some length.</p>")))
    assert [page.main_text[start:end] for start, end in json.loads(page.code_spans)] == ["pub type c_short = i16;"]
    declared = link_to(page, "https://example.com/i16/")
    assert (declared.region, declared.text_offset, declared.context) == ("content", None, None)
    inline = link_to(page, "https://example.com/fs/")
    assert inline.region == "content" and page.main_text[inline.text_offset:].startswith("fs::Metadata first, and the rest")
    linked = link_to(page, "https://example.com/vec/")
    assert linked.region == "content" and page.main_text[linked.text_offset:].startswith("Vec grows, as the rest")


@pytest.mark.parametrize("wrapper, region", [
    ("<nav>{}</nav>", "nav"),
    ("<header>{}</header>", "header"),
    ("<footer>{}</footer>", "footer"),
    ("<aside>{}</aside>", "aside"),
    ("<div role='navigation'>{}</div>", "nav"),
    ("<div role='banner'>{}</div>", "header"),
    ("<div role='contentinfo'>{}</div>", "footer"),
    ("<div role='complementary'>{}</div>", "aside"),
    ("<div class='sidebar'>{}</div>", "aside"),
    ("<div class='widget-area'>{}</div>", "aside"),
    ("<div class='site-footer'>{}</div>", "footer"),
    ("<div id='main-menu'>{}</div>", "nav"),
    ("<ul class='breadcrumbs'><li>{}</li></ul>", "nav"),
    ("<div class='cookie-banner'>{}</div>", "other"),
    ("<div class='sidebars'>{}</div>", "other"),  # whole words only
])
def test_region_of_a_link_outside_the_content(wrapper: str, region: str) -> None:
    page = parse(document(body=wrapper.format("<a href='/x'>Elsewhere</a>")))
    assert link_to(page, "https://example.com/x").region == region


def test_nearest_landmark_wins() -> None:
    page = parse(document(body="<footer><div class='menu'><a href='/x'>Elsewhere</a></div></footer>"))
    assert link_to(page, "https://example.com/x").region == "nav"


@pytest.mark.parametrize("rel, nofollow", [
    ("nofollow", True), ("noopener NoFollow", True), ("external", False), ("", False),
])
def test_rel_nofollow(rel: str, nofollow: bool) -> None:
    page = parse(document(body=f"<footer><a href='/x' rel='{rel}'>Elsewhere</a></footer>"))
    assert link_to(page, "https://example.com/x").nofollow is nofollow


@pytest.mark.parametrize("head, headers, directives", [
    ("", {}, (False, False)),
    ("<meta name='robots' content='noindex, nofollow'>", {}, (True, True)),
    ("<meta name='ROBOTS' content='NOINDEX'>", {}, (True, False)),
    ("<meta name='googlebot' content='none'>", {}, (True, True)),
    ("<meta name='robots' content='index, follow'>", {}, (False, False)),
    ("", {"X-Robots-Tag": "noindex"}, (True, False)),
    ("", {"X-Robots-Tag": "nofollow"}, (False, True)),
    ("", {"X-Robots-Tag": "googlebot: noindex"}, (True, False)),
    ("", {"X-Robots-Tag": "unavailable_after: 25 Jun 2030 15:00:00 PST"}, (False, False)),
])
def test_robots_directives(head: str, headers: dict[str, str], directives: tuple[bool, bool]) -> None:
    page = parse(document(head=head), headers=headers)
    assert (page.noindex, page.nofollow) == directives


def test_json_ld_graph_dates() -> None:
    json_ld = ('<script type="application/ld+json">{"@context": "https://schema.org", "@graph": ['
               '{"@type": "WebSite", "name": "Example"}, '
               '{"@type": "BlogPosting", "datePublished": "2024-03-01T10:00:00Z", "dateModified": "2024-04-02"}]}</script>')
    page = parse(document(head=json_ld))
    assert (page.published, page.modified) == ("2024-03-01T10:00:00Z", "2024-04-02")


def test_unreadable_json_ld_is_skipped() -> None:
    head = ('<script type="application/ld+json">{not json</script>'
            '<script type="application/ld+json">[{"@type": "Thing"}, {"datePublished": "2023-01-01"}]</script>')
    page = parse(document(head=head))
    assert (page.published, page.modified) == ("2023-01-01", None)


def test_article_meta_dates_come_before_json_ld_and_time() -> None:
    head = ('<meta property="article:published_time" content="2020-01-01">'
            '<script type="application/ld+json">{"datePublished": "2021-01-01", "dateModified": "2021-02-02"}</script>')
    page = parse(document(head=head, body='<time datetime="2019-01-01">1 January 2019</time>'))
    assert (page.published, page.modified) == ("2020-01-01", "2021-02-02")


def test_time_element_is_the_last_resort_for_published() -> None:
    page = parse(document(body='<p>Posted <time datetime="2019-05-05">5 May</time></p>'))
    assert (page.published, page.modified) == ("2019-05-05", None)


def test_no_declared_dates() -> None:
    page = parse(document())
    assert (page.published, page.modified) == (None, None)


def test_base_href_resolves_links_and_canonical() -> None:
    page = parse(document(head="<base href='https://example.com/docs/v2/'><link rel='canonical' href='page.html#top'>",
                          body="<nav><a href='intro/'>Intro</a><a href='../v1/'>Old</a><a href='/root'>Root</a></nav>"))
    assert page.canonical == "https://example.com/docs/v2/page.html"
    assert [link.target for link in page.links if link.region == "nav"] == [
        "https://example.com/docs/v2/intro/", "https://example.com/docs/v1/", "https://example.com/root"]


def test_canonical_is_normalised() -> None:
    page = parse(document(head="<link rel='Canonical' href='HTTPS://Example.com:443/A?b=1&a=2'>"))
    assert page.canonical == "https://example.com/A?a=2&b=1"


def test_no_canonical() -> None:
    assert parse(document()).canonical is None


def test_links_without_an_http_target_are_skipped() -> None:
    skipped = ("<a href='javascript:void(0)'>a</a><a href='JavaScript:alert(1)'>b</a><a href='mailto:a@example.com'>c</a>"
               "<a href='tel:+4412345'>d</a><a href='#top'>e</a><a href=''>f</a><a>g</a><a href='ftp://example.com/f'>h</a>"
               "<a href='data:text/plain,x'>i</a>")
    page = parse(document(body=f"<footer>{skipped}<a href='/kept'>Kept</a></footer>"))
    assert [link.target for link in page.links] == ["https://example.com/kept", "https://example.com/grind/"]


def test_positions_follow_document_order() -> None:
    page = parse(document(body="<nav><a href='/a'>A</a><a href='javascript:x'>skip</a><a href='/b'>B</a></nav>"))
    assert [(link.position, link.target) for link in page.links] == [
        (0, "https://example.com/a"), (1, "https://example.com/b"), (2, "https://example.com/grind/")]


def test_external_links_are_other_sites() -> None:
    page = parse(document(body="<nav><a href='https://www.example.com/w'>W</a><a href='//other.org/x'>O</a>"
                               "<a href='https://blog.example.com/'>B</a></nav>"))
    assert [(link.target, link.external) for link in page.links if link.region == "nav"] == [
        ("https://www.example.com/w", False), ("https://other.org/x", True), ("https://blog.example.com/", True)]


def test_anchor_of_an_image_link_outside_the_content_is_its_alt() -> None:
    page = parse(document(body="<header><a href='/'><img src='logo.png' alt='Example Home'></a></header>"))
    assert link_to(page, "https://example.com/").anchor == "Example Home"


def test_anchor_of_an_empty_link_outside_the_content_is_its_title() -> None:
    page = parse(document(body="<nav><a href='/t' title='Titled'></a></nav>"))
    assert link_to(page, "https://example.com/t").anchor == "Titled"


def test_anchor_of_an_image_link_in_the_content_is_its_alt() -> None:
    page = parse(document(extra="<p>Picture <a href='/cup'><img src='cup.png' alt='A cup'></a> of coffee shown here "
                                "for you to look at closely.</p><p>" + "More prose about coffee follows here. " * 5 + "</p>"))
    link = link_to(page, "https://example.com/cup")
    assert "of coffee shown here for you to look at closely." in page.main_text
    assert (link.region, link.anchor) == ("content", "A cup")  # trafilatura alone gives "of coffee shown here ..."
    assert link.text_offset is None  # "A cup" is not in the text, so no offset points at it


def test_code_without_a_link_keeps_its_paragraph() -> None:
    page = parse(document(extra="<p>Use <code>the brew command</code> please for everything related to coffee and tea here.</p>"))
    assert "Use the brew command please for everything related to coffee and tea here." in page.main_text


def test_link_inside_code_keeps_its_paragraph() -> None:
    # trafilatura alone moves a link inside <code> to the end of its paragraph and loses the text after it
    page = parse(document(extra="<p>Use <code><a href='/c'>the brew command</a></code> please for everything "
                                "related to coffee and tea here.</p>"))
    assert "Use the brew command please for everything related to coffee and tea here." in page.main_text
    assert link_to(page, "https://example.com/c").region == "content"


# --- pipelines.finalize -----------------------------------------------------------------------------------------


def test_following_a_redirect_is_not_a_click(tmp_path: Path) -> None:
    db = open_database(tmp_path / "site.db")
    crawl_id = db["crawls"].insert({"status": "running"}).last_pk
    db["pages"].insert_all([
        {"url": "http://s/", "status": 200, "last_seen_crawl": crawl_id},
        {"url": "http://s/old", "status": 301, "redirect_to": "http://s/new", "last_seen_crawl": crawl_id},
        {"url": "http://s/new", "status": 200, "last_seen_crawl": crawl_id},
    ])
    db["links"].insert({"source": "http://s/", "target": "http://s/old", "region": "content", "external": 0})
    finalize_crawl(db, crawl_id, ["http://s/"], "finished", "finished")
    assert {row["url"]: row["depth"] for row in db["pages"].rows} == {"http://s/": 0, "http://s/old": 1, "http://s/new": 1}
    assert db["pages"].get("http://s/old")["final_url"] == "http://s/new"


def test_a_database_sqlite_cannot_write_is_one_line_that_names_it_and_a_bug_is_shown_whole(tmp_path: Path) -> None:
    path = tmp_path / "site.db"
    open_database(path).close()
    read_only = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(Unwritable, match=r"site\.db: SQLite could not write it \(attempt to write a readonly database\); "
                                         r"none of this run's results were stored$"):
        with explained(path):
            read_only.execute("CREATE TABLE suggestions (source TEXT)")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        with explained(path):
            read_only.execute("SELECT * FROM nowhere")


def test_a_transaction_that_fails_midway_writes_none_of_its_sqlite_utils_writes(tmp_path: Path) -> None:
    """sqlite-utils (4) commits each write it makes unless a transaction is open, so `with db.conn:` around its calls is
    no transaction: a crawl's batch could lose its links and keep its pages. `writing` opens one first."""
    db = open_database(tmp_path / "site.db")
    with pytest.raises(RuntimeError), writing(db):
        db["pages"].upsert_all([{"url": "https://example.com/a", "status": 200}], pk="url")
        db.execute("DELETE FROM links")
        db["links"].insert_all([{"source": "https://example.com/a", "target": "https://example.com/b"}])
        raise RuntimeError("stopped")
    assert db["pages"].count == 0 and db["links"].count == 0
    with writing(db):
        db["pages"].upsert_all([{"url": "https://example.com/a", "status": 200}], pk="url")
    assert db["pages"].count == 1


def test_no_code_takes_a_connection_context_for_a_transaction() -> None:
    """`with db.conn:` commits at its end but opens nothing, and sqlite-utils commits its own writes inside it one by
    one: a transaction is `writing(db)` or `db.atomic()`."""
    root = Path(__file__).resolve().parent.parent
    found = [f"{path.relative_to(root)}:{number}" for folder in ("analysis", "linkspider", "pipelines", "audit", "bench")
             for path in sorted((root / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bwith\s+[\w.]*\.conn\s*:", line)]
    assert found == []
