"""What the spider hands to the pipeline: one item per fetched URL, one per sitemap read."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Link:
    """One <a href> on a page, resolved and classified."""

    target: str
    anchor: str
    region: str
    position: int
    nofollow: bool = False
    external: bool = False
    context: str | None = None
    text_offset: int | None = None


@dataclass
class Page:
    """Everything recorded about one requested URL; fields mirror the `pages` table."""

    url: str
    status: int | None = None
    error: str | None = None
    redirect_to: str | None = None
    content_type: str | None = None
    is_html: bool = False
    encoding: str | None = None
    size: int | None = None
    title: str | None = None
    description: str | None = None
    h1: str | None = None
    canonical: str | None = None
    noindex: bool = False
    nofollow: bool = False
    lang: str | None = None
    published: str | None = None
    modified: str | None = None
    main_text: str | None = None
    headings: str | None = None  # the main content's headings, one a line
    code_spans: str | None = None  # JSON [[start, end], ...] of the main text's code blocks, None when it has none
    word_count: int | None = None
    content_hash: str | None = None
    body_hash: str | None = None
    stripped_html: str | None = None
    fetched_at: str | None = None
    download_latency: float | None = None
    links: list[Link] = field(default_factory=list)


@dataclass
class SitemapEntries:
    """The page URLs one sitemap lists."""

    sitemap: str
    entries: list[tuple[str, str | None]]  # (normalised url, lastmod)
