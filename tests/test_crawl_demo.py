"""The demo site crawled through the real command: every table checked against what demo/build.py generates."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit

import lxml.html
import pytest

from conftest import DEMO_SITE, CrawlRun, run_crawl
from demo_source import (
    HTML_PAGES, ORPHANS, POSTS, REDIRECTS, SITE_NAME, Post, absolute, anchors, broken_link_paths, build, click_depths,
    disallowed_link_paths, internal_paths, is_disallowed, sitemap_entries, to_served,
)
from linkspider.localserver import SiteHandler, serve

BOILERPLATE_WORDS = ("Staff login", "Popular guides", "Newsletter", "We use cookies", "Privacy policy", "Follow us",
                     "Tags:", "By the Kettle")


def rows(run: CrawlRun, sql: str, *params: object) -> list[tuple]:
    return run.db.execute(sql, params).fetchall()


def urls_with_status(run: CrawlRun, status: int) -> set[str]:
    return {url for (url,) in rows(run, "SELECT url FROM pages WHERE status = ?", status)}


def served(base_url: str, paths: Iterable[str]) -> set[str]:
    return {absolute(base_url, path) for path in paths}


def copy_database(source: Path, target: Path) -> Path:
    """A consistent copy of an SQLite file (WAL included), through SQLite's backup API."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)
    return target


# --- which URLs were fetched and what they answered ------------------------------------------------------------


def test_every_page_of_the_site_answers_200(demo_crawl: CrawlRun, demo_url: str) -> None:
    assert urls_with_status(demo_crawl, 200) == served(demo_url, HTML_PAGES)


def test_redirect_sources_answer_301(demo_crawl: CrawlRun, demo_url: str) -> None:
    assert urls_with_status(demo_crawl, 301) == served(demo_url, REDIRECTS)


def test_broken_links_answer_404(demo_crawl: CrawlRun, demo_url: str) -> None:
    assert broken_link_paths() == {"/blog/missing-grinder-post/"}  # the one broken link the demo content holds
    assert urls_with_status(demo_crawl, 404) == served(demo_url, broken_link_paths())


def test_no_other_url_is_recorded(demo_crawl: CrawlRun, demo_url: str) -> None:
    expected = served(demo_url, [*HTML_PAGES, *REDIRECTS, *broken_link_paths(), *disallowed_link_paths()])
    assert {url for (url,) in rows(demo_crawl, "SELECT url FROM pages")} == expected


def test_excluded_urls_are_neither_fetched_nor_followed_but_links_to_them_are_kept(demo_crawl: CrawlRun, demo_url: str,
                                                                                    tmp_path: Path) -> None:
    excluded = run_crawl(demo_url, tmp_path / "excluded.db", "-a", "exclude=/tags/*,*/blog/page/*")  # a path, a URL
    assert excluded.returncode == 0, excluded.stderr
    everything = {url for (url,) in rows(demo_crawl, "SELECT url FROM pages")}
    left_out = {url for url in everything if urlsplit(url).path.startswith(("/tags/", "/blog/page/"))}
    assert left_out
    assert {url for (url,) in rows(excluded, "SELECT url FROM pages")} == everything - left_out
    linked = left_out & {url for (url,) in rows(excluded, "SELECT target FROM links")}  # still the targets of links
    assert absolute(demo_url, "/blog/page/3/") in left_out - linked  # linked only from page 2: not followed
    assert f"  excluded by -a exclude: {len(linked)} URLs, not fetched" in excluded.stdout.splitlines()
    options = json.loads(rows(excluded, "SELECT options FROM crawls")[0][0])
    assert options["exclude"] == ["/tags/*", "*/blog/page/*"]


def test_admin_is_recorded_as_disallowed_by_robots_txt(demo_crawl: CrawlRun, demo_url: str) -> None:
    assert disallowed_link_paths() == {"/admin/"}  # the footer's "Staff login"
    admin = demo_crawl.page(absolute(demo_url, "/admin/"))
    assert admin["error"] == "IgnoreRequest: disallowed by robots.txt"
    assert (admin["status"], admin["size"], admin["content_type"], admin["is_html"]) == (None, None, None, 0)
    assert rows(demo_crawl, "SELECT count(*) FROM links WHERE source = ?", admin["url"]) == [(0,)]


def test_external_links_are_flagged_and_never_fetched(demo_crawl: CrawlRun, demo_url: str) -> None:
    origin = demo_url.rstrip("/")
    flags = {(urlsplit(target).netloc == urlsplit(demo_url).netloc, external)
             for target, external in rows(demo_crawl, "SELECT target, external FROM links")}
    assert flags == {(True, 0), (False, 1)}
    external_hosts = {urlsplit(t).netloc for (t,) in rows(demo_crawl, "SELECT target FROM links WHERE external = 1")}
    assert external_hosts == {"en.wikipedia.org", urlsplit(build.SOCIAL_URL).netloc}
    assert rows(demo_crawl, "SELECT url FROM pages WHERE url NOT LIKE ?", origin + "/%") == []


# --- redirects, canonicals, robots ----------------------------------------------------------------------------


def test_redirect_is_recorded_hop_by_hop(demo_crawl: CrawlRun, demo_url: str) -> None:
    [(source, target)] = REDIRECTS.items()
    old, new = absolute(demo_url, source), absolute(demo_url, target)
    page = demo_crawl.page(old)
    assert (page["status"], page["redirect_to"], page["final_url"]) == (301, new, new)
    assert json.loads(page["redirect_chain"]) == [{"url": old, "status": 301}]
    assert page["is_html"] == 0 and page["main_text"] is None


def test_redirect_row(demo_crawl: CrawlRun, demo_url: str) -> None:
    [(source, target)] = REDIRECTS.items()
    assert list(demo_crawl.db["redirects"].rows) == [
        {"source": absolute(demo_url, source), "target": absolute(demo_url, target), "status": 301, "external": 0,
         "crawl_id": 1}
    ]


def test_pages_that_do_not_redirect_end_at_themselves(demo_crawl: CrawlRun) -> None:
    assert rows(demo_crawl, "SELECT url FROM pages WHERE redirect_to IS NULL AND "
                            "(final_url IS NOT url OR redirect_chain IS NOT NULL)") == []


def test_print_page_is_canonical_to_its_post(demo_crawl: CrawlRun, demo_url: str) -> None:
    [slug] = build.PRINT_SLUGS
    print_page = demo_crawl.page(absolute(demo_url, f"/blog/{slug}/print/"))
    assert print_page["status"] == 200
    assert print_page["canonical"] == absolute(demo_url, f"/blog/{slug}/")


def test_posts_are_canonical_to_themselves(demo_crawl: CrawlRun, demo_url: str) -> None:
    for post in POSTS:
        assert demo_crawl.page(absolute(demo_url, post.url))["canonical"] == absolute(demo_url, post.url)


def test_draft_page_is_the_only_noindex_page(demo_crawl: CrawlRun, demo_url: str) -> None:
    assert rows(demo_crawl, "SELECT url FROM pages WHERE noindex = 1") == [(absolute(demo_url, f"/blog/{build.DRAFT_PAGE}/"),)]
    assert rows(demo_crawl, "SELECT count(*) FROM pages WHERE nofollow = 1") == [(0,)]


# --- sitemap, orphans, click depth ----------------------------------------------------------------------------


def test_orphan_posts_are_found_only_through_the_sitemap(demo_crawl: CrawlRun, demo_url: str) -> None:
    found = rows(demo_crawl, "SELECT url, status, in_sitemap, depth FROM pages WHERE sitemap_only = 1 ORDER BY url")
    assert found == [(absolute(demo_url, path), 200, 1, None) for path in ORPHANS]


def test_sitemap_entries_are_every_sitemap_url_with_its_lastmod(demo_crawl: CrawlRun, demo_url: str) -> None:
    expected = {(absolute(demo_url, path), lastmod) for path, lastmod in sitemap_entries()}
    assert {(absolute(demo_url, post.url), (post.modified or post.published).isoformat()) for post in POSTS} < expected
    sitemap = absolute(demo_url, "/sitemap.xml")
    assert set(rows(demo_crawl, "SELECT url, lastmod FROM sitemap_entries WHERE sitemap = ?", sitemap)) == expected
    assert rows(demo_crawl, "SELECT count(*) FROM sitemap_entries WHERE sitemap != ?", sitemap) == [(0,)]


def test_in_sitemap_flags_match_sitemap_entries(demo_crawl: CrawlRun) -> None:
    assert rows(demo_crawl, "SELECT url FROM pages WHERE in_sitemap != (url IN (SELECT url FROM sitemap_entries))") == []


def test_home_is_depth_0_and_navigation_depth_1(demo_crawl: CrawlRun, demo_url: str) -> None:
    assert demo_crawl.page(demo_url)["depth"] == 0
    for _, href in build.NAV_LINKS[1:] + build.FOOTER_LINKS:
        assert demo_crawl.page(absolute(demo_url, href))["depth"] == 1, href


def test_posts_on_the_home_page_are_depth_1_and_other_posts_deeper(demo_crawl: CrawlRun, demo_url: str) -> None:
    listed = [post for post in POSTS if post.listed]
    on_home = {post.url for post in listed[:build.HOME_POST_COUNT]}
    depths = {post.url: demo_crawl.page(absolute(demo_url, post.url))["depth"] for post in listed}
    assert {url for url, depth in depths.items() if depth == 1} == on_home
    assert all(depth >= 2 for url, depth in depths.items() if url not in on_home)


def test_a_few_deeper_depths(demo_crawl: CrawlRun, demo_url: str) -> None:
    [slug] = build.PRINT_SLUGS
    assert demo_crawl.page(absolute(demo_url, "/blog/page/2/"))["depth"] == 2  # Next on /blog/
    assert demo_crawl.page(absolute(demo_url, "/blog/page/3/"))["depth"] == 3  # Next on /blog/page/2/
    assert demo_crawl.page(absolute(demo_url, f"/blog/{slug}/print/"))["depth"] == 2  # its post is on the home page
    assert demo_crawl.page(absolute(demo_url, f"/blog/{build.DRAFT_PAGE}/"))["depth"] == 2  # linked from /about/


def test_redirect_source_is_one_click_below_the_page_that_links_it(demo_crawl: CrawlRun, demo_url: str) -> None:
    [source] = REDIRECTS
    linking = [path for path in HTML_PAGES if source in internal_paths(path)]
    shallowest = min(demo_crawl.page(absolute(demo_url, path))["depth"] for path in linking)
    assert demo_crawl.page(absolute(demo_url, source))["depth"] == shallowest + 1


def test_every_depth_is_the_fewest_clicks_from_home(demo_crawl: CrawlRun, demo_url: str) -> None:
    expected = {absolute(demo_url, path): depth for path, depth in click_depths().items()}
    recorded = dict(rows(demo_crawl, "SELECT url, depth FROM pages"))
    assert recorded == {url: expected.get(url) for url in recorded}


# --- main text ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("post", POSTS, ids=lambda post: post.slug)
def test_post_main_text_is_its_body_without_boilerplate(demo_crawl: CrawlRun, demo_url: str, post: Post) -> None:
    main_text = demo_crawl.page(absolute(demo_url, post.url))["main_text"]
    body = lxml.html.fromstring(post.source.body)
    blocks = [" ".join(block.text_content().split()) for block in body.iter("p", "li", "h2", "h3")]
    assert blocks and [block for block in blocks if block not in main_text] == []
    assert main_text.startswith(post.title + "\n")
    assert [word for word in BOILERPLATE_WORDS if word in main_text] == []


@pytest.mark.parametrize("post", POSTS, ids=lambda post: post.slug)
def test_post_headings_are_its_titles_and_its_bodys_not_the_sidebars(demo_crawl: CrawlRun, demo_url: str, post: Post) -> None:
    headings = demo_crawl.page(absolute(demo_url, post.url))["headings"]
    body = lxml.html.fromstring(post.source.body)
    sections = [" ".join(heading.text_content().split()) for heading in body.iter("h2", "h3", "h4")]
    assert sections and headings.splitlines() == [post.title, *sections]  # not "Popular guides" nor "Newsletter"


def test_word_count_and_content_hash(demo_crawl: CrawlRun) -> None:
    for url, title, main_text, word_count, content_hash in rows(
            demo_crawl, "SELECT url, title, main_text, word_count, content_hash FROM pages WHERE status = 200"):
        assert word_count == len(main_text.split()), url
        assert content_hash == hashlib.sha1(f"{title}\n{main_text}".encode()).hexdigest(), url


# --- links ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("post", POSTS, ids=lambda post: post.slug)
def test_content_links_are_the_links_of_the_post_body(demo_crawl: CrawlRun, demo_url: str, post: Post) -> None:
    url = absolute(demo_url, post.url)
    expected = {(to_served(href, demo_url), text) for href, text in anchors(post.source.body, post.url)}
    recorded = set(rows(demo_crawl, "SELECT target, anchor FROM links WHERE source = ? AND region = 'content'", url))
    assert recorded == expected


def test_content_links_point_into_main_text(demo_crawl: CrawlRun) -> None:
    content_links = rows(demo_crawl, "SELECT links.source, anchor, context, text_offset, main_text FROM links "
                                     "JOIN pages ON pages.url = links.source WHERE region = 'content'")
    assert len(content_links) > 100
    for source, anchor, context, offset, main_text in content_links:
        assert main_text[offset:offset + len(anchor)] == anchor, (source, anchor)
        assert anchor in context and context in main_text, (source, anchor)
        assert "\n" not in context, (source, anchor)


def test_only_content_links_have_context(demo_crawl: CrawlRun) -> None:
    assert rows(demo_crawl, "SELECT count(*) FROM links WHERE (region = 'content') != (context IS NOT NULL)") == [(0,)]
    assert rows(demo_crawl, "SELECT count(*) FROM links WHERE (region = 'content') != (text_offset IS NOT NULL)") == [(0,)]


def template_links(post: Post, base_url: str) -> list[tuple[str, str, str]]:
    """(target, anchor, region) of a post page's links outside its body, in page order, from the layout's source."""
    tags = [(f"/tags/{tag}/", build.TAGS[tag], "footer") for tag in post.tags]
    if post.slug in build.PRINT_SLUGS:
        tags.append((f"{post.url}print/", "Printer-friendly version", "footer"))
    by_slug = {p.slug: p for p in POSTS}
    links = [("/", SITE_NAME, "header"),
             *[(href, text, "nav") for text, href in build.NAV_LINKS],
             ("/privacy/", "Privacy policy", "other"),  # the cookie banner is no landmark
             *tags,
             *[(by_slug[slug].url, by_slug[slug].title, "aside") for slug in build.POPULAR],
             *[(href, text, "footer") for text, href in build.FOOTER_LINKS]]
    return [(absolute(base_url, href), text, region) for href, text, region in links] + [
        (build.SOCIAL_URL, "Follow us", "footer")]


@pytest.mark.parametrize("post", POSTS, ids=lambda post: post.slug)
def test_layout_links_are_classified_by_landmark(demo_crawl: CrawlRun, demo_url: str, post: Post) -> None:
    url = absolute(demo_url, post.url)
    recorded = rows(demo_crawl, "SELECT target, anchor, region FROM links WHERE source = ? AND region != 'content' "
                                "ORDER BY position", url)
    assert recorded == template_links(post, demo_url)


def test_link_positions_are_page_order(demo_crawl: CrawlRun) -> None:
    for source, positions in rows(demo_crawl, "SELECT source, group_concat(position) FROM "
                                              "(SELECT source, position FROM links ORDER BY source, position) GROUP BY source"):
        numbers = [int(n) for n in positions.split(",")]
        assert numbers == list(range(len(numbers))), source


def test_error_pages_have_no_links(demo_crawl: CrawlRun) -> None:
    assert rows(demo_crawl, "SELECT count(*) FROM links JOIN pages ON pages.url = links.source "
                            "WHERE pages.status IS NOT 200") == [(0,)]


def test_no_link_is_nofollow(demo_crawl: CrawlRun) -> None:
    assert rows(demo_crawl, "SELECT count(*) FROM links WHERE nofollow != 0") == [(0,)]


# --- metadata -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("post", POSTS, ids=lambda post: post.slug)
def test_post_metadata(demo_crawl: CrawlRun, demo_url: str, post: Post) -> None:
    page = demo_crawl.page(absolute(demo_url, post.url))
    assert {key: page[key] for key in ("title", "h1", "description", "lang", "published", "modified")} == {
        "title": f"{post.title} | {SITE_NAME}",
        "h1": post.title,
        "description": post.source.description,
        "lang": "en",
        "published": post.published.isoformat(),
        "modified": post.modified.isoformat() if post.modified else None,
    }


@pytest.mark.parametrize("name", [*build.STATIC_PAGES, build.DRAFT_PAGE])
def test_plain_page_metadata(demo_crawl: CrawlRun, demo_url: str, name: str) -> None:
    source = build.load_page(name)
    path = f"/blog/{name}/" if name == build.DRAFT_PAGE else f"/{name}/"
    page = demo_crawl.page(absolute(demo_url, path))
    assert (page["title"], page["h1"], page["description"], page["lang"], page["canonical"], page["modified"]) == (
        f"{source.title} | {SITE_NAME}", source.title, source.description, "en", None, None)


def test_html_responses_are_described(demo_crawl: CrawlRun) -> None:
    assert set(rows(demo_crawl, "SELECT content_type, is_html, encoding, error FROM pages WHERE status IN (200, 404)")) == {
        ("text/html", 1, "utf-8", None)}
    assert rows(demo_crawl, "SELECT count(*) FROM pages WHERE status = 200 AND (size IS NULL OR size = 0 "
                            "OR fetched_at IS NULL)") == [(0,)]


def test_crawl_row(demo_crawl: CrawlRun, demo_url: str) -> None:
    [crawl] = list(demo_crawl.db["crawls"].rows)
    assert (crawl["id"], crawl["start_urls"], crawl["status"], crawl["reason"]) == (1, demo_url, "finished", "finished")
    assert crawl["pages"] == rows(demo_crawl, "SELECT count(*) FROM pages")[0][0]
    assert json.loads(crawl["options"])["sites"] == [urlsplit(demo_url).netloc]


def test_every_page_is_seen_by_the_first_crawl(demo_crawl: CrawlRun) -> None:
    assert set(rows(demo_crawl, "SELECT first_seen_crawl, last_seen_crawl, gone FROM pages")) == {(1, 1, 0)}


# --- crawling again -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recrawl(demo_crawl: CrawlRun, demo_url: str, tmp_path_factory: pytest.TempPathFactory) -> CrawlRun:
    """The demo site crawled a second time into a copy of the first crawl's database."""
    copy = copy_database(demo_crawl.db_path, tmp_path_factory.mktemp("recrawl") / "demo.db")
    run = run_crawl(demo_url, copy)
    assert run.returncode == 0, run.stderr
    return run


def table_count(run: CrawlRun, table: str) -> int:
    return run.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_recrawl_adds_a_crawl_row(recrawl: CrawlRun) -> None:
    assert rows(recrawl, "SELECT id, status FROM crawls ORDER BY id") == [(1, "finished"), (2, "finished")]


def test_recrawl_duplicates_no_row(recrawl: CrawlRun, demo_crawl: CrawlRun) -> None:
    for table in ("pages", "links", "redirects", "sitemap_entries"):
        assert table_count(recrawl, table) == table_count(demo_crawl, table), table
    assert rows(recrawl, "SELECT source, position FROM links GROUP BY source, position HAVING count(*) > 1") == []


def test_recrawl_keeps_first_seen_and_updates_last_seen(recrawl: CrawlRun) -> None:
    assert set(rows(recrawl, "SELECT first_seen_crawl, last_seen_crawl, gone FROM pages")) == {(1, 2, 0)}
    assert rows(recrawl, "SELECT crawl_id FROM redirects") == [(2,)]


def test_recrawl_records_the_same_site(recrawl: CrawlRun, demo_crawl: CrawlRun) -> None:
    columns = "url, status, depth, canonical, main_text, content_hash, in_sitemap, sitemap_only"
    assert rows(recrawl, f"SELECT {columns} FROM pages ORDER BY url") == rows(demo_crawl, f"SELECT {columns} FROM pages ORDER BY url")


# --- a page that disappears -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def changed_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A copy of the demo site crawled, then crawled again after one post (and its print page) was deleted.

    The copy is served on its own port, so both crawls run against the same server (a copy of the
    session's database would hold another port's URLs). The paths the server was asked for are recorded.
    """
    [slug] = build.PRINT_SLUGS
    site = tmp_path_factory.mktemp("changed") / "site"
    shutil.copytree(DEMO_SITE, site)
    requested: list[list[str]] = [[], []]
    crawl = 0

    def record(handler: SiteHandler, code: object = "-", size: object = "-") -> None:
        requested[crawl].append(urlsplit(handler.path).path)

    with pytest.MonkeyPatch.context() as patch, serve(site) as url:
        patch.setattr(SiteHandler, "log_request", record)
        db_path = site.parent / "site.db"
        first = run_crawl(url, db_path)
        shutil.rmtree(site / "blog" / slug)
        crawl = 1
        second = run_crawl(url, db_path)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    yield {"run": second, "url": url, "slug": slug, "requested": requested}


def test_disallowed_url_is_never_requested(changed_site: dict) -> None:
    first_crawl = changed_site["requested"][0]
    assert "/robots.txt" in first_crawl and "/" in first_crawl
    assert [path for path in first_crawl if is_disallowed(path)] == []


def test_no_page_is_requested_twice_in_a_crawl(changed_site: dict) -> None:
    # robots.txt is read twice, by Scrapy's robots.txt middleware and by the spider looking for sitemaps
    first_crawl = [path for path in changed_site["requested"][0] if path != "/robots.txt"]
    assert len(first_crawl) == len(set(first_crawl))


def test_deleted_post_is_seen_with_status_404(changed_site: dict) -> None:
    run, url, slug = changed_site["run"], changed_site["url"], changed_site["slug"]
    page = run.page(absolute(url, f"/blog/{slug}/"))
    assert (page["status"], page["gone"], page["first_seen_crawl"], page["last_seen_crawl"]) == (404, 0, 1, 2)
    assert rows(run, "SELECT count(*) FROM links WHERE source = ?", page["url"]) == [(0,)]


def test_page_no_longer_reached_is_gone(changed_site: dict) -> None:
    run, url, slug = changed_site["run"], changed_site["url"], changed_site["slug"]
    assert rows(run, "SELECT url, status, last_seen_crawl, depth FROM pages WHERE gone = 1") == [
        (absolute(url, f"/blog/{slug}/print/"), 200, 1, None)]
    assert f"/blog/{slug}/print/" not in changed_site["requested"][1]


def test_every_other_page_is_seen_again(changed_site: dict) -> None:
    run = changed_site["run"]
    assert rows(run, "SELECT count(*) FROM pages WHERE gone = 0 AND last_seen_crawl != 2") == [(0,)]
    assert rows(run, "SELECT pages FROM crawls WHERE id = 2") == [(table_count(run, "pages") - 1,)]
