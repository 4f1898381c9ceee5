"""Build the Kettle & Crema demo site from demo/content into demo/site.

Usage: python3 demo/build.py

Standard library only. The output is regenerated from scratch on every run.
"""
from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from datetime import date
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent
POSTS_DIR = ROOT / "content" / "posts"
PAGES_DIR = ROOT / "content" / "pages"
SITE_DIR = ROOT / "site"

SITE_NAME = "Kettle &amp; Crema"
ORIGIN_TOKEN = "__ORIGIN__"
POSTS_PER_PAGE = 15
HOME_POST_COUNT = 10

TAGS: dict[str, str] = {
    "brewing": "Brewing",
    "espresso": "Espresso",
    "beans": "Beans",
    "roasting": "Roasting",
    "equipment": "Equipment",
    "water": "Water",
}
ORPHANS = frozenset({"cupping-at-home", "travel-coffee-kit", "coffee-on-a-budget"})
POPULAR = ("pour-over-basics", "espresso-basics", "burr-vs-blade-grinders",
           "storing-coffee-beans", "water-chemistry")
PRINT_SLUGS = frozenset({"pour-over-basics"})
STATIC_PAGES = ("about", "contact", "privacy")
DRAFT_PAGE = "draft-competition-recipes"
REDIRECTS = (("/blog/old-french-press-guide/", "/blog/french-press-guide/", 301),)

NAV_LINKS = (
    ("Home", "/"), ("Blog", "/blog/"), ("Brewing", "/tags/brewing/"),
    ("Espresso", "/tags/espresso/"), ("Beans", "/tags/beans/"),
    ("Equipment", "/tags/equipment/"), ("About", "/about/"),
)
FOOTER_LINKS = (
    ("About", "/about/"), ("Contact", "/contact/"),
    ("Privacy", "/privacy/"), ("Staff login", "/admin/"),
)
SOCIAL_URL = "https://example.social/kettleandcrema"


@dataclass(frozen=True)
class Source:
    """A content file: front-matter fields plus an HTML body fragment."""

    slug: str
    meta: dict[str, str]
    body: str

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def description(self) -> str:
        return self.meta.get("description", "")


@dataclass(frozen=True)
class Post:
    """A blog post with parsed dates and tags."""

    source: Source
    published: date
    modified: date | None
    tags: tuple[str, ...]

    @property
    def slug(self) -> str:
        return self.source.slug

    @property
    def title(self) -> str:
        return self.source.title

    @property
    def url(self) -> str:
        return f"/blog/{self.slug}/"

    @property
    def listed(self) -> bool:
        """Whether the post may appear in listings (orphans never do)."""
        return self.slug not in ORPHANS


# --------------------------------------------------------------------------
# Reading content
# --------------------------------------------------------------------------

def parse_source(path: Path) -> Source:
    """Split a file into front matter (between --- lines) and body."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("missing opening ---")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError("missing closing ---") from None
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        if ":" in line:
            key, value = line.split(":", 1)
            meta[key.strip().lower()] = value.strip()
    if not meta.get("title"):
        raise ValueError("missing title")
    body = "\n".join(lines[end + 1:]).strip()
    return Source(path.stem, meta, body)


def parse_tags(raw: str, slug: str) -> tuple[str, ...]:
    """Return the tags of a comma-separated list; an unknown tag is an error in the source."""
    tags = []
    for tag in (t.strip().lower() for t in raw.split(",")):
        if tag and tag not in TAGS:
            raise ValueError(f"{slug}: unknown tag {tag!r} (known: {', '.join(TAGS)})")
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def make_post(source: Source) -> Post:
    """Turn a parsed source into a Post, validating its dates."""
    modified = source.meta.get("modified")
    return Post(
        source=source,
        published=date.fromisoformat(source.meta["date"]),
        modified=date.fromisoformat(modified) if modified else None,
        tags=parse_tags(source.meta.get("tags", ""), source.slug),
    )


def load_posts() -> list[Post]:
    """Load every post, newest first; a broken source stops the build."""
    posts = [make_post(parse_source(path)) for path in sorted(POSTS_DIR.glob("*.html"))]
    return sorted(posts, key=lambda p: (p.published, p.slug), reverse=True)


def load_page(name: str) -> Source:
    """Load one page source from content/pages."""
    return parse_source(PAGES_DIR / f"{name}.html")


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------

def text(value: str) -> str:
    """Escape a string for use as element text (quotes are left alone)."""
    return escape(value, quote=False)


def link(href: str, label: str) -> str:
    """An anchor with an escaped href and label."""
    return f'<a href="{escape(href)}">{text(label)}</a>'


def human_date(value: date) -> str:
    """Format a date like '14 March 2025'."""
    return f"{value.day} {value:%B %Y}"


def head(title: str, description: str, extra: str = "") -> str:
    """The document start up to and including <body>."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n'
        '<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(title)} | {SITE_NAME}</title>\n"
        f'<meta name="description" content="{escape(description)}">\n'
        f"{extra}</head>\n<body>\n"
    )


def site_header() -> str:
    """Logo, main navigation and cookie banner."""
    nav = "".join(f"<li>{link(href, text)}</li>" for text, href in NAV_LINKS)
    return (
        f'<header class="site-header"><a class="logo" href="/">{SITE_NAME}</a></header>\n'
        f'<nav class="main-nav"><ul>{nav}</ul></nav>\n'
        '<div class="cookie-banner">We use cookies to remember your cart. '
        '<a href="/privacy/">Privacy policy</a></div>\n'
    )


def site_footer() -> str:
    """The footer shared by every page."""
    items = "".join(f"<li>{link(href, text)}</li>" for text, href in FOOTER_LINKS)
    social = f'<li><a href="{SOCIAL_URL}" rel="external">Follow us</a></li>'
    return f'<footer class="site-footer"><ul>{items}{social}</ul></footer>\n'


def layout(title: str, description: str, main: str, extra_head: str = "") -> str:
    """A complete page in the normal site layout."""
    return (
        head(title, description, extra_head)
        + site_header()
        + f"<main>\n{main}\n</main>\n"
        + site_footer()
        + "</body>\n</html>\n"
    )


# --------------------------------------------------------------------------
# Posts
# --------------------------------------------------------------------------

def post_head(post: Post, canonical: str) -> str:
    """Canonical link, article dates and JSON-LD for a post."""
    data: dict[str, str] = {
        "@context": "https://schema.org",
        "@type": "BlogPosting",
        "headline": post.title,
        "datePublished": post.published.isoformat(),
    }
    extra = (
        f'<link rel="canonical" href="{canonical}">\n'
        f'<meta property="article:published_time" content="{post.published.isoformat()}">\n'
    )
    if post.modified:
        data["dateModified"] = post.modified.isoformat()
        extra += f'<meta property="article:modified_time" content="{post.modified.isoformat()}">\n'
    json_ld = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return extra + f'<script type="application/ld+json">{json_ld}</script>\n'


def post_footer(post: Post, with_print_link: bool) -> str:
    """Tag links, plus the printer-friendly link where one exists."""
    tags = ", ".join(link(f"/tags/{tag}/", TAGS[tag]) for tag in post.tags)
    footer = f'<footer class="post-footer">Tags: {tags}'
    if with_print_link and post.slug in PRINT_SLUGS:
        footer += f' <a href="{post.url}print/">Printer-friendly version</a>'
    return footer + "</footer>"


def article(post: Post, with_print_link: bool = True) -> str:
    """The <article> element for a post."""
    when = post.published.isoformat()
    return (
        f'<article class="post">\n<h1>{text(post.title)}</h1>\n'
        f'<p class="byline">By the Kettle &amp; Crema team on '
        f'<time datetime="{when}">{human_date(post.published)}</time></p>\n'
        f'<div class="entry-content">\n{post.source.body}\n</div>\n'
        f"{post_footer(post, with_print_link)}\n</article>"
    )


def sidebar(by_slug: dict[str, Post]) -> str:
    """Popular guides and newsletter box."""
    items = "".join(f"<li>{link(by_slug[slug].url, by_slug[slug].title)}</li>" for slug in POPULAR)
    return (
        f'<aside class="sidebar"><h2>Popular guides</h2><ul>{items}</ul>'
        "<h2>Newsletter</h2><p>One brewing guide a month, straight to your inbox.</p>"
        "</aside>"
    )


def render_post(post: Post, by_slug: dict[str, Post]) -> str:
    """A post page in the normal layout."""
    main = article(post) + "\n" + sidebar(by_slug)
    return layout(post.title, post.source.description, main, post_head(post, post.url))


def render_print(post: Post) -> str:
    """A bare printer-friendly version of a post, canonical to the original."""
    return (
        head(post.title, post.source.description, post_head(post, post.url))
        + article(post, with_print_link=False)
        + f'\n<p class="print-source">Printed from {SITE_NAME}: '
        + f"{link(post.url, post.title)}</p>\n</body>\n</html>\n"
    )


# --------------------------------------------------------------------------
# Listings and plain pages
# --------------------------------------------------------------------------

def post_list(posts: list[Post]) -> str:
    """A list of post title links with dates and descriptions."""
    if not posts:
        return "<p>No posts yet.</p>"
    items = "".join(
        f'<li>{link(p.url, p.title)} <time datetime="{p.published.isoformat()}">'
        f"{human_date(p.published)}</time><p>{text(p.source.description)}</p></li>\n"
        for p in posts
    )
    return f'<ul class="post-list">\n{items}</ul>'


def blog_page_url(number: int) -> str:
    """URL of page `number` (1-based) of the blog listing."""
    return "/blog/" if number == 1 else f"/blog/page/{number}/"


def pagination(number: int, total: int) -> str:
    """Previous/Next links for the blog listing."""
    parts = []
    if number > 1:
        parts.append(f'<a rel="prev" href="{blog_page_url(number - 1)}">Previous</a>')
    if number < total:
        parts.append(f'<a rel="next" href="{blog_page_url(number + 1)}">Next</a>')
    return f'<nav class="pagination">{" ".join(parts)}</nav>' if parts else ""


def render_blog_pages(listed: list[Post]) -> dict[str, str]:
    """All pages of the blog listing, keyed by URL."""
    chunks = [listed[i:i + POSTS_PER_PAGE] for i in range(0, len(listed), POSTS_PER_PAGE)]
    chunks = chunks or [[]]
    pages = {}
    for number, chunk in enumerate(chunks, start=1):
        title = "Blog" if number == 1 else f"Blog, page {number}"
        main = f"<h1>{title}</h1>\n{post_list(chunk)}\n{pagination(number, len(chunks))}"
        pages[blog_page_url(number)] = layout(
            title, "Brewing guides, bean notes and equipment advice from Kettle & Crema.", main)
    return pages


def render_tag_page(tag: str, listed: list[Post]) -> str:
    """A listing of the non-orphan posts with one tag."""
    label = TAGS[tag]
    posts = [p for p in listed if tag in p.tags]
    main = f"<h1>{label}</h1>\n{post_list(posts)}"
    return layout(label, f"Kettle & Crema guides and articles about {label.lower()}.", main)


def render_home(listed: list[Post]) -> str:
    """The home page: intro and the newest posts."""
    main = (
        "<h1>Kettle &amp; Crema</h1>\n"
        "<p>We are a small roastery, and this is where we share what we have learned "
        "about brewing, beans and equipment: practical guides for making better "
        "coffee at home.</p>\n<h2>Latest guides</h2>\n"
        + post_list(listed[:HOME_POST_COUNT])
        + '\n<p><a href="/blog/">All posts</a></p>'
    )
    return layout("Coffee Brewing Guides", "Practical coffee brewing guides, bean notes and "
                  "equipment advice from a small roastery.", main)


def render_plain_page(source: Source, extra_head: str = "") -> str:
    """A simple content page in the normal layout."""
    main = f"<h1>{text(source.title)}</h1>\n{source.body}"
    return layout(source.title, source.description, main, extra_head)


def render_404() -> str:
    """The not-found page."""
    main = ('<h1>Page not found</h1>\n<p>Sorry, we could not find that page. '
            'Try the <a href="/blog/">blog</a> or go back to the <a href="/">home page</a>.</p>')
    return layout("Page not found", "The page you were looking for does not exist.", main)


# --------------------------------------------------------------------------
# Machine-readable files
# --------------------------------------------------------------------------

def render_redirects() -> str:
    """Netlify-style _redirects file."""
    return "".join(f"{src} {dst} {code}\n" for src, dst, code in REDIRECTS)


def render_robots() -> str:
    """robots.txt; the local server replaces the origin token."""
    return f"User-agent: *\nDisallow: /admin/\n\nSitemap: {ORIGIN_TOKEN}/sitemap.xml\n"


def render_sitemap(posts: list[Post]) -> str:
    """sitemap.xml with fixed pages, tag pages and every post (orphans too)."""
    urls: list[tuple[str, date | None]] = [
        ("/", None), ("/blog/", None), ("/about/", None), ("/contact/", None), ("/privacy/", None),
    ]
    urls += [(f"/tags/{tag}/", None) for tag in TAGS]
    urls += [(p.url, p.modified or p.published) for p in posts]
    entries = []
    for path, lastmod in urls:
        extra = f"<lastmod>{lastmod.isoformat()}</lastmod>" if lastmod else ""
        entries.append(f"<url><loc>{ORIGIN_TOKEN}{path}</loc>{extra}</url>\n")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + "".join(entries) + "</urlset>\n"
    )


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def output_path(url_or_file: str) -> Path:
    """Map a site URL ('/blog/x/') or file name ('404.html') to a path."""
    if url_or_file.endswith("/"):
        return SITE_DIR / url_or_file.strip("/") / "index.html"
    return SITE_DIR / url_or_file.lstrip("/")


def collect_pages(posts: list[Post]) -> dict[str, str]:
    """Every output file of the site, keyed by URL or file name."""
    by_slug = {p.slug: p for p in posts}
    listed = [p for p in posts if p.listed]
    pages: dict[str, str] = {"/": render_home(listed)}
    pages.update(render_blog_pages(listed))
    for post in posts:
        pages[post.url] = render_post(post, by_slug)
        if post.slug in PRINT_SLUGS:
            pages[f"{post.url}print/"] = render_print(post)
    for tag in TAGS:
        pages[f"/tags/{tag}/"] = render_tag_page(tag, listed)
    for name in STATIC_PAGES:
        pages[f"/{name}/"] = render_plain_page(load_page(name))
    noindex = '<meta name="robots" content="noindex">\n'
    pages[f"/blog/{DRAFT_PAGE}/"] = render_plain_page(load_page(DRAFT_PAGE), noindex)
    pages["404.html"] = render_404()
    pages["_redirects"] = render_redirects()
    pages["robots.txt"] = render_robots()
    pages["sitemap.xml"] = render_sitemap(posts)
    return pages


def write_site(pages: dict[str, str]) -> None:
    """Delete the old site and write every page."""
    if SITE_DIR.exists():
        shutil.rmtree(SITE_DIR)
    for key, text in pages.items():
        path = output_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def main() -> int:
    """Build the site and print a one-line summary."""
    posts = load_posts()
    pages = collect_pages(posts)
    write_site(pages)
    print(f"Built {len(pages)} files ({len(posts)} posts) into {SITE_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
