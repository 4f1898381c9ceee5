"""The demo site as its source describes it: demo/build.py loaded as a module, and what tests derive from it.

Expected values in the demo tests come from here rather than from literals, so that editing the demo's
content keeps the tests exact.
"""

from __future__ import annotations

import html
import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
BUILD_PY = ROOT / "demo" / "build.py"
_ORIGIN = "http://demo.invalid"  # stands in for the server's origin while resolving links in the source


def _load_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("demo_build", BUILD_PY)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


build = _load_build()
Post = build.Post
POSTS = build.load_posts()
SITE_FILES: dict[str, str] = build.collect_pages(POSTS)  # every output file, keyed by URL path or file name
HTML_PAGES: dict[str, str] = {key: text for key, text in SITE_FILES.items() if key.endswith("/")}  # URL path -> HTML
REDIRECTS: dict[str, str] = {source: target for source, target, _ in build.REDIRECTS}
DISALLOWED: tuple[str, ...] = tuple(
    line.split(":", 1)[1].strip() for line in build.render_robots().splitlines() if line.lower().startswith("disallow:")
)
SITE_NAME = html.unescape(build.SITE_NAME)
ORPHANS = sorted(f"/blog/{slug}/" for slug in build.ORPHANS)


def absolute(base_url: str, path: str) -> str:
    """The served URL of a site path, e.g. absolute('http://127.0.0.1:8000/', '/blog/') -> 'http://127.0.0.1:8000/blog/'."""
    return base_url.rstrip("/") + path


def anchors(markup: str, page_path: str = "/") -> list[tuple[str, str]]:
    """(absolute href with the stand-in origin, whitespace-normalised text) of every <a href> in markup, in order."""
    root = lxml.html.fromstring(markup)  # a whole document, or a body fragment (wrapped in a <div>)
    return [(urljoin(_ORIGIN + page_path, a.get("href")), " ".join(a.text_content().split()))
            for a in root.iter("a") if a.get("href")]


def to_served(url: str, base_url: str) -> str:
    """A URL resolved against the stand-in origin, moved onto the server's origin (other hosts unchanged)."""
    return absolute(base_url, url.removeprefix(_ORIGIN)) if url.startswith(_ORIGIN + "/") else url


@cache
def internal_paths(page_path: str) -> list[str]:
    """Paths of the same-site links on the HTML page at page_path, in order."""
    return [urlsplit(href).path for href, _ in anchors(HTML_PAGES[page_path], page_path) if href.startswith(_ORIGIN + "/")]


def is_disallowed(path: str) -> bool:
    return path.startswith(DISALLOWED)


def linked_paths() -> set[str]:
    """Every same-site path that some page of the site links to."""
    return {target for page in HTML_PAGES for target in internal_paths(page)}


def disallowed_link_paths() -> set[str]:
    """Linked paths that robots.txt disallows: recorded, never fetched."""
    return {path for path in linked_paths() if is_disallowed(path)}


def broken_link_paths() -> set[str]:
    """Linked paths that are neither a page, a redirect nor disallowed by robots.txt: they answer 404."""
    return {path for path in linked_paths() if path not in HTML_PAGES and path not in REDIRECTS and not is_disallowed(path)}


def sitemap_entries() -> set[tuple[str, str | None]]:
    """(path, lastmod) of every <url> in the generated sitemap.xml."""
    namespace = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    root = etree.fromstring(SITE_FILES["sitemap.xml"].encode())
    return {(url.findtext("sm:loc", namespaces=namespace).removeprefix(build.ORIGIN_TOKEN),
             url.findtext("sm:lastmod", namespaces=namespace)) for url in root.iterfind("sm:url", namespace)}


def click_depths() -> dict[str, int]:
    """Fewest clicks from the home page to every linked path, over the links of the pages that answer 200.

    Following a redirect is not a click: the redirect's target is reached at the depth of its source.
    """
    depth, frontier = {"/": 0}, ["/"]
    while frontier:
        reached = []
        for path in frontier:
            for target in internal_paths(path) if path in HTML_PAGES else []:
                for step in (target, REDIRECTS.get(target)):
                    if step and step not in depth:
                        depth[step] = depth[path] + 1
                        reached.append(step)
        frontier = reached
    return depth
