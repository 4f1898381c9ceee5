"""Turn one HTML document into a :class:`~linkspider.items.Page`: metadata, main text and links.

The main content comes from trafilatura. To know which of the page's links sit inside it, every
<a> is tagged with a unique marker URL before extraction; the markers that survive into
trafilatura's output are the content links, and their position in the text gives the sentence
that holds each one. Every other link is classified by its nearest landmark ancestor.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import trafilatura
from lxml import etree
from lxml.html import HtmlElement
from trafilatura.xml import xmltotxt

from linkspider.items import Link, Page
from linkspider.sentences import sentence_at, sentence_spans
from linkspider.urls import is_http_url, normalize_url

MARKER = "http://linkspider.invalid/"
# trafilatura warns of markup it finds odd ("missing link attribute", "empty link: {'target':
# 'http://linkspider.invalid/33'}"): the site's HTML, not the crawl, with our marker for the page's URL. In the crawl's
# log it reads as an error of the crawl, so only its errors are shown.
logging.getLogger("trafilatura").setLevel(logging.ERROR)
# Content links are bracketed in the extracted text as OPEN index SEP anchor CLOSE, and code blocks
# as OPEN CODE SEP code CLOSE: printable characters (the extractor drops unprintable ones) in a
# pattern that prose does not contain.
OPEN, SEP, CLOSE, CODE = "\u27e6", "\u205e", "\u27e7", "code"
# Put at the end of each <div>'s text: trafilatura joins the texts of divs laid out as a grid or table (Javadoc's
# summaries: "Modifier and TypeMethodDescriptionclone()boolean") with nothing between. Where one is followed by a word,
# the div ended there and the text gets a line break; elsewhere it goes (_block_ends).
BLOCK_END = "\u27e0"
_BLOCK_END_RUN = f"[ \\t]*{BLOCK_END}[{BLOCK_END} \\t]*"
# a line of them alone (trafilatura leaves out empty lines), or the text's end
_LONE_BLOCK_ENDS = re.compile(f"^{_BLOCK_END_RUN}\\n|\\n?{_BLOCK_END_RUN}\\Z", re.MULTILINE)
_BLOCK_ENDS_BEFORE_SPACE = re.compile(f"[ \\t]*{BLOCK_END}+(?=\\s|\\Z)")
_BLOCK_ENDS_BEFORE_WORD = re.compile(f"[ \\t]*{BLOCK_END}+")
_MARKED = re.compile(f"{OPEN}(\\d+|{CODE}){SEP}(.*?){CLOSE}", re.DOTALL)
# The extractor's elements whose text a <code> inside may be inline ("call <code>spawn</code> to ...").
_INLINE_PARENTS = {"p", "item", "cell", "head", "hi", "quote", "del"}
_BLOCKS = {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure", "footer",
           "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
           "td", "th", "tr", "ul"}  # HTML's block elements (and <br>): their edges part words
_SOURCE_BREAK = re.compile(r"[ \t\r]*\n[ \t\r\n]*")  # a line break of the HTML source, with the spaces around it

STRIPPED_CHARS = 2000
# Navigation is never main content. trafilatura leaves it out of what it finds, but where it finds too little (a short
# page) it falls back to the whole body's text, menus and sidebars included: 96 of the 2,251 pages of Rust's std docs
# began with their sidebar (BENCHMARKS.md, "Quality"). So it is pruned before either.
NAVIGATION = ["//nav", "//*[@role='navigation']"]
# A link into the page whose text is a permalink or back-link glyph alone is the page's chrome, not its text: left in,
# it ends the heading's line ("Debugger#") and the context shown. The glyphs site generators use for it: "#" (Node.js,
# Hugo), "\u00b6" (Sphinx), "\u00a7" (rustdoc), "\u21a9" (footnotes), "\u2191", "\U0001f517", "\u2693"; not any symbol:
# mdBook's heading "?" (the operator) links to itself too.
_GLYPH = re.compile("[#\u00b6\u00a7\u21a9\u2191\U0001f517\u2693][\ufe0e\ufe0f]?")
_LANDMARK_TAGS = {"nav": "nav", "header": "header", "footer": "footer", "aside": "aside"}
_LANDMARK_ROLES = {"navigation": "nav", "banner": "header", "contentinfo": "footer", "complementary": "aside"}
_LANDMARK_WORDS = {
    "nav": "nav", "navbar": "nav", "navigation": "nav", "menu": "nav", "breadcrumb": "nav", "breadcrumbs": "nav",
    "header": "header", "masthead": "header",
    "footer": "footer",
    "sidebar": "aside", "widget": "aside",
}  # fmt: skip
_WORD_SPLIT = re.compile(r"[\s_-]+")
_SKIPPED_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "#")


def parse_html(page: Page, root: HtmlElement, base_url: str, headers: dict[str, str], is_internal: Callable[[str], bool]) -> Page:
    """Fill page from an HTML document already parsed into root (which this mutates)."""
    page.noindex, page.nofollow = robots_directives(root, headers.get("x-robots-tag", ""))
    page.title = _text(root.find(".//title"))
    page.description = _first_attr(root, "//meta[translate(@name,'DESCRIPTION','description')='description']/@content")
    page.h1 = _text(root.find(".//h1"))
    page.canonical = _canonical(root, base_url)
    page.lang = _first_attr(root, "/html/@lang") or headers.get("content-language") or None
    page.published, page.modified = declared_dates(root)
    page.stripped_html = " ".join(etree.tostring(root, method="text", encoding="unicode").split())[:STRIPPED_CHARS]
    for glyph in root.xpath("//a[starts-with(@href, '#')]"):
        if _GLYPH.fullmatch(glyph.text_content().strip()):
            glyph.drop_tree()  # its tail stays
    for code in root.xpath("//code[.//a][not(ancestor::pre)]"):
        code.drop_tag()  # trafilatura loses the rest of a paragraph after a link inside inline <code>
    for pre in root.xpath("//pre[not(.//code)]"):
        _wrap_content(pre, "code")  # preformatted text is no prose (_code_blocks), however trafilatura reads it
    anchors = list(_anchors(root, base_url))
    for index, (element, _) in enumerate(anchors):
        element.set("href", f"{MARKER}{index}")
    preformatted = {index for index, (element, _) in enumerate(anchors) if next(element.iterancestors("pre"), None) is not None}
    content = main_content(root, preformatted)
    page.main_text, content_links = content.text, content.links
    page.headings = "\n".join(content.headings) or None
    page.code_spans = json.dumps(content.code_spans) if content.code_spans else None
    page.word_count = len(page.main_text.split())
    page.content_hash = hashlib.sha1(f"{page.title or ''}\n{page.main_text}".encode()).hexdigest()
    sentences = sentence_spans(page.main_text)
    container = _common_ancestor([anchors[position][0] for position in [*content_links, *content.code_links]])
    for position, (element, target) in enumerate(anchors):
        rel = (element.get("rel") or "").lower().split()
        anchor = _text(element) or element.get("title") or _image_alt(element) or element.get("alt") or ""
        link = Link(target=target, anchor=anchor, region=landmark(element), position=position,
                    nofollow="nofollow" in rel, external=not is_internal(target))
        if position in content_links:
            extracted, offset = content_links[position]
            link.region, link.anchor = "content", anchor or extracted
            if page.main_text[offset:offset + len(link.anchor)] == link.anchor:
                link.text_offset = offset  # else the extractor moved text into the link (an image link, say)
            start, end = sentence_at(page.main_text, offset, sentences)
            link.context = page.main_text[start:end]
        elif position in content.code_links:
            link.region = "content"  # a declaration's link to its type: the page's own, in no sentence
        elif container is not None and landmark(element, stop=container) == "other" and _inside(element, container):
            link.region = "content"  # in the body, in a block the extractor dropped (a list of links, say)
        page.links.append(link)
    return page


@dataclass
class MainContent:
    text: str
    links: dict[int, tuple[str, int]]  # marked anchor -> (anchor text, offset in the text)
    headings: list[str]
    code_spans: list[tuple[int, int]]  # (start, end) in the text of each code block: no place for a link
    code_links: set[int] = field(default_factory=set)  # marked anchors in a code block: content, in no sentence


def main_content(root: HtmlElement, preformatted: set[int] = frozenset()) -> MainContent:
    """Main text, where the marked anchors and the code blocks landed in it, and its headings. preformatted: the
    marked anchors that sit in a <pre> (code cross-references: they may be in a code block, see _code_blocks)."""
    with _block_ends_marked(root):
        document = trafilatura.bare_extraction(
            root, include_links=True, include_comments=False, include_tables=True, include_images=False,
            deduplicate=False, prune_xpath=NAVIGATION,
        )
    if document is None or document.body is None:
        return MainContent("", {}, [], [])
    body = document.body
    code_blocks = _code_blocks(body, preformatted)
    in_code = {ref for code in code_blocks for ref in code.iter("ref")}  # a link in code has no place in the text
    for ref in body.iter("ref"):
        index = _marked(ref)
        if ref not in in_code and index is not None:
            _bracket_link(ref, str(index))
    etree.strip_tags(body, "ref")
    _unwrap(body, code_blocks)
    for code in code_blocks:
        _bracket_code(code)
    headings = [" ".join(_MARKED.sub(r"\2", "".join(head.itertext())).replace(BLOCK_END, " ").split())
                for head in body.iter("head")]
    text = _block_ends(xmltotxt(body, include_formatting=False))
    content = _strip_markers(text, [heading for heading in headings if heading])
    content.code_links = {_marked(ref) for ref in in_code} - {None}
    return content


@contextmanager
def _block_ends_marked(root: HtmlElement) -> Iterator[None]:
    """BLOCK_END at the end of each <div>'s text while the extractor reads the page; taken out after, since the links'
    texts are read from the page too."""
    ends = []
    for div in root.xpath("//div[not(ancestor::pre)][normalize-space()]"):
        element, attribute = (div[-1], "tail") if len(div) else (div, "text")
        setattr(element, attribute, (getattr(element, attribute) or "") + BLOCK_END)
        ends.append((element, attribute))
    try:
        yield
    finally:
        for element, attribute in ends:
            setattr(element, attribute, getattr(element, attribute).replace(BLOCK_END, "") or None)


def _block_ends(text: str) -> str:
    """The extracted text with each BLOCK_END a line break where a word follows it, and gone elsewhere."""
    return _BLOCK_ENDS_BEFORE_WORD.sub("\n", _BLOCK_ENDS_BEFORE_SPACE.sub("", _LONE_BLOCK_ENDS.sub("", text)))


def _unwrap(body: etree._Element, code_blocks: list[etree._Element]) -> None:
    """Join the lines of the HTML source inside each block, code blocks aside: a browser shows a line break there as
    a space, and the text keeps a paragraph on one line (a line break ends a sentence: sentences.py). Hard-wrapped
    HTML (Markdown rendered line for line) otherwise cut sentences, contexts and anchors at every wrap."""
    verbatim = {node for code in code_blocks for node in code.iter()}
    for element in body.iter():
        if element.text and element not in verbatim:
            element.text = _SOURCE_BREAK.sub(" ", element.text)
        if element.tail and element.getparent() not in verbatim:  # a code block's own tail is outside it
            element.tail = _SOURCE_BREAK.sub(" ", element.tail)


def _bracket_link(element: etree._Element, mark: str) -> None:
    """Bracket the element's text (its children's included) as OPEN mark SEP text CLOSE."""
    element.text = f"{OPEN}{mark}{SEP}{element.text or ''}"
    if len(element):
        element[-1].tail = (element[-1].tail or "") + CLOSE
    else:
        element.text += CLOSE


def _bracket_code(code: etree._Element) -> None:
    """Bracket a code block's text as OPEN CODE SEP text CLOSE from its first to its last visible character: the text
    output drops the whitespace at a block's edges, and the brackets must not keep it there."""
    visible = [node for node in _reading_order(code) if (getattr(*node) or "").strip()]
    if not visible:
        return
    (first, first_attribute), (last, last_attribute) = visible[0], visible[-1]
    text = getattr(first, first_attribute)
    lead = len(text) - len(text.lstrip())
    setattr(first, first_attribute, f"{text[:lead]}{OPEN}{CODE}{SEP}{text[lead:]}")
    text = getattr(last, last_attribute)
    body = text.rstrip()
    setattr(last, last_attribute, f"{body}{CLOSE}{text[len(body):]}")


def _reading_order(element: etree._Element) -> list[tuple[etree._Element, str]]:
    """The element's pieces of text in reading order, as (element, "text" or "tail"); its own tail not included."""
    pieces = [(element, "text")]
    for child in element:
        pieces += [*_reading_order(child), (child, "tail")]
    return pieces


def _code_blocks(body: etree._Element, preformatted: set[int]) -> list[etree._Element]:
    """The extractor's <code> elements that are blocks (of <pre>): not inside another, either outside any
    paragraph-like element, of several lines or the whole of a quote, and holding no link but links of a <pre>
    (preformatted: an API's declaration links its types, "pub type c_short = i16;"). A <code> in a sentence is inline (a
    command's name, often linked), and one with other links is no code: the extractor takes an embedded tweet for one.
    trafilatura makes a <pre> a quote where its text does not look like code to it (no brace, no indented line: a C
    declaration indented two spaces, a Sphinx block of highlighted spans); every <pre> holds a <code> (parse_html), so
    such a quote holds nothing else."""
    blocks = []
    for code in body.iter("code"):
        text = "".join(code.itertext()).strip()
        holder = next(parent for parent in code.iterancestors() if parent.tag != "ref")  # a linked <code> is in its link
        if (not any(parent.tag == "code" for parent in code.iterancestors())
                and {_marked(ref) for ref in code.iter("ref")} - {None} <= preformatted
                and (holder.tag not in _INLINE_PARENTS or "\n" in text or _whole_quote(code, holder))):
            blocks.append(code)
    return blocks


def _whole_quote(code: etree._Element, holder: etree._Element) -> bool:
    """The <code> is all there is of a quote: a <pre> the extractor did not take for code."""
    return (holder.tag == "quote" and len(holder) == 1
            and not (holder.text or "").strip() and not (code.tail or "").strip())


def _wrap_content(element: HtmlElement, tag: str) -> None:
    """Put everything inside the element into one new child of this tag, as <pre><code>...</code></pre> is written."""
    wrapper = element.makeelement(tag, {})
    wrapper.text, element.text = element.text, None
    wrapper.extend(list(element))
    element.append(wrapper)


def _marked(ref: etree._Element) -> int | None:
    """The index of the marked anchor an extracted link stands for (parse_html), or None."""
    index = (ref.get("target") or "").removeprefix(MARKER)
    return int(index) if index.isdigit() else None


def _strip_markers(marked: str, headings: list[str]) -> MainContent:
    """Remove the bracketed markers from the text, noting where each marked anchor and code block landed."""
    pieces: list[str] = []
    found: dict[int, tuple[str, int]] = {}
    code_spans: list[tuple[int, int]] = []
    length, last = 0, 0
    for match in _MARKED.finditer(marked):
        before, inside = marked[last:match.start()], match.group(2)
        length += len(before)
        if match.group(1) == CODE:
            code_spans.append((length, length + len(inside)))
        else:
            found[int(match.group(1))] = (inside.strip(), length + len(inside) - len(inside.lstrip()))
        pieces += [before, inside]
        length += len(inside)
        last = match.end()
    pieces.append(marked[last:])
    return MainContent("".join(pieces), found, headings, code_spans)


def landmark(element: HtmlElement, stop: HtmlElement | None = None) -> str:
    """Region of a link outside the main content: its nearest nav/header/footer/aside ancestor (below stop)."""
    for ancestor in element.iterancestors():
        if ancestor is stop:
            break
        tag = ancestor.tag if isinstance(ancestor.tag, str) else ""
        if tag in _LANDMARK_TAGS:
            return _LANDMARK_TAGS[tag]
        role = (ancestor.get("role") or "").lower()
        if role in _LANDMARK_ROLES:
            return _LANDMARK_ROLES[role]
        for word in _WORD_SPLIT.split(f"{ancestor.get('class') or ''} {ancestor.get('id') or ''}".lower()):
            if word in _LANDMARK_WORDS:
                return _LANDMARK_WORDS[word]
    return "other"


def _common_ancestor(elements: list[HtmlElement]) -> HtmlElement | None:
    """The innermost element holding all of them: the body block the extractor took its text from."""
    if not elements:
        return None
    common = list(elements[0].iterancestors())
    for element in elements[1:]:
        ancestors = set(element.iterancestors())
        common = [ancestor for ancestor in common if ancestor in ancestors]
    return common[0] if common and common[0].tag not in ("body", "html") else None


def _inside(element: HtmlElement, container: HtmlElement) -> bool:
    return any(ancestor is container for ancestor in element.iterancestors())


def robots_directives(root: HtmlElement, x_robots_tag: str) -> tuple[bool, bool]:
    """(noindex, nofollow) from <meta name=robots|googlebot> and the X-Robots-Tag header."""
    values = root.xpath("//meta[translate(@name,'ROBOTSGOOGLEBT','robotsgooglebt')='robots' or "
                        "translate(@name,'ROBOTSGOOGLEBT','robotsgooglebt')='googlebot']/@content")
    tokens: set[str] = set()
    for value in [*values, x_robots_tag]:
        for token in re.split(r"[,\s]+", value.lower()):
            tokens.add(token.rsplit(":", 1)[-1])  # "googlebot: noindex" names a user agent first
    return bool(tokens & {"noindex", "none"}), bool(tokens & {"nofollow", "none"})


def declared_dates(root: HtmlElement) -> tuple[str | None, str | None]:
    """Published and modified dates as the page declares them: article meta, JSON-LD, then a lone <time>."""
    published = _first_attr(root, "//meta[@property='article:published_time' or @itemprop='datePublished']/@content")
    modified = _first_attr(root, "//meta[@property='article:modified_time' or @itemprop='dateModified']/@content")
    for data in _json_ld(root):
        published = published or _find_key(data, "datePublished")
        modified = modified or _find_key(data, "dateModified")
    times = [value.strip() for value in root.xpath("//time/@datetime") if value.strip()]
    if not published and len(times) == 1:  # a listing's many <time>s date its entries, not itself
        published = times[0]
    return published, modified


def _anchors(root: HtmlElement, base_url: str) -> Iterator[tuple[HtmlElement, str]]:
    """Every <a>/<area> with an http(s) target, resolved against the base URL and normalised; and every <frame>'s page:
    a frameset shows its frames' pages and has no other links (an old manual's or Javadoc's index.html), so the crawl
    follows a frame as a link, outside the main content (a click deep, though none is made)."""
    for element in root.iter("a", "area", "frame"):
        href = (element.get("src" if element.tag == "frame" else "href") or "").strip()
        if not href or href.lower().startswith(_SKIPPED_SCHEMES):
            continue
        target = urljoin(base_url, href)
        if is_http_url(target):
            yield element, normalize_url(target)


def _canonical(root: HtmlElement, base_url: str) -> str | None:
    for element in root.iter("link"):
        if "canonical" in (element.get("rel") or "").lower().split() and element.get("href"):
            target = urljoin(base_url, element.get("href").strip())
            return normalize_url(target) if is_http_url(target) else None
    return None


def _json_ld(root: HtmlElement) -> Iterator[Any]:
    for script in root.xpath("//script[@type='application/ld+json']"):
        try:
            yield json.loads(script.text or "")
        except ValueError:
            continue


def _find_key(data: Any, key: str) -> str | None:
    """First string value of key anywhere in a JSON-LD structure (@graph and lists included)."""
    if isinstance(data, dict):
        if isinstance(data.get(key), str):
            return data[key]
        children = data.values()
    elif isinstance(data, list):
        children = data
    else:
        return None
    for child in children:
        if found := _find_key(child, key):
            return found
    return None


def _first_attr(root: HtmlElement, xpath: str) -> str | None:
    values = [value.strip() for value in root.xpath(xpath) if value.strip()]
    return values[0] if values else None


def _text(element: HtmlElement | None) -> str | None:
    """The element's text as a reader sees it: white space collapsed, and a space where a block inside it ends or
    begins (a link card's title and its summary), which the markup's text alone does not hold."""
    if element is None:
        return None
    if next(element.iterdescendants(*_BLOCKS), None) is not None:
        element = copy.deepcopy(element)  # the page keeps its text as it was
        for block in element.iterdescendants(*_BLOCKS):
            block.text, block.tail = f" {block.text or ''}", f" {block.tail or ''}"
    return " ".join(element.text_content().split()) or None


def _image_alt(element: HtmlElement) -> str | None:
    alts = [alt.strip() for alt in element.xpath(".//img/@alt") if alt.strip()]
    return alts[0] if alts else None
