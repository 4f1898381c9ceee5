"""Crawl benchmark: linkspider on a synthetic blog, with Scrapy's own `scrapy bench` as the yardstick.

    .venv/bin/python bench/crawl.py [--pages 5000] [--out DIR] [--seed 1] [--bench-seconds 10]

1. Writes a synthetic blog of --pages HTML pages into a temporary folder: posts of 600-1000 words of
   seeded pseudo-prose with 5-10 in-text links each, inside a header/nav, sidebar and footer
   template, plus a front page, an archive of paginated listings and category pages, so that every
   post is at most three clicks from the front page.
2. Serves it on 127.0.0.1 with linkspider.localserver.serve and crawls it with the real
   `scrapy crawl site` command (content extraction on), in a subprocess whose peak RSS and CPU time
   come from os.wait4 (the figures /usr/bin/time -v prints); then crawls it again into the same
   database, nothing changed, which reuses the stored extraction of every page (linkspider/reuse.py).
3. Runs `scrapy bench` (Scrapy's built-in benchmark: a local link farm, crawled for ~10 s by a
   spider that only extracts links) before and after the crawl, outside the project so that no
   project setting applies, and takes the mean of its two rates.
4. Prints pages/s of both, their ratio, the crawl's peak RSS, the pages in the database and how
   well the database's content links match the links the generator put in the post bodies.

The issue's targets: linkspider at least 50% of `scrapy bench`'s rate, peak memory under 1 GB.
Nothing leaves 127.0.0.1. With --out DIR the site, its database, the logs and results.json are kept.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from html import escape
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from linkspider.localserver import serve  # noqa: E402
from linkspider.urls import normalize_url  # noqa: E402

# Loopback crawl: no politeness delay, enough requests in flight to keep the CPU busy.
CRAWL_SETTINGS = {
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS": "32",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "32",
    "LOG_LEVEL": "INFO",
}
PER_PAGE = 25  # posts per archive listing page
CATEGORIES = ["rust", "python", "databases", "networking", "testing", "design", "operations", "security"]
STATIC_PAGES = {"about": "About this blog", "contact": "Contact", "privacy": "Privacy policy"}

# Function words are frequent, content words follow a Zipf-like tail: text that reads like prose
# to an extractor (sentences, commas, paragraphs) without being anyone's writing.
FUNCTION_WORDS = """the of and to a in is that for it as with on this be are by we was from at or an
not but can which have has will when if so they their more one all also into than then there these
our its only about how what most some other would should could each many such between after before
""".split()
CONTENT_WORDS = """system data request server page crawler index query latency cache memory thread process
network packet socket buffer parser token graph node edge link site content text article post
model design pattern module package function method class object value type error exception test
benchmark result number measure metric time second minute hour release version feature change
commit branch merge review patch bug fix issue report user reader writer author editor team
project library framework language compiler runtime interpreter syntax semantics program code
file folder disk storage database table column row record field key schema migration backup
queue worker job task schedule event signal handler callback future promise stream pipeline
input output format encoding unicode string byte character line word sentence paragraph document
search ranking score relevance similarity vector embedding cluster sample batch window budget
cost price load traffic scale growth limit threshold target goal plan idea question answer
problem solution approach trade-off decision choice option default setting configuration
deployment container machine instance cloud region zone host domain address route path
security password secret certificate permission policy access audit log trace span profile
performance throughput bandwidth capacity pressure contention lock mutex atomic channel
simple complex fast slow small large early late careful clear stable robust fragile
quickly slowly carefully rarely often usually always never almost nearly really simply
build run write read measure change improve reduce increase remove replace explain describe
understand notice expect suggest prefer handle avoid keep move share learn teach follow
""".split()
VOCABULARY = FUNCTION_WORDS + CONTENT_WORDS
WEIGHTS = [3.0 / (1 + rank) ** 0.8 for rank in range(len(FUNCTION_WORDS))] + [
    1.0 / (1 + rank) ** 0.6 for rank in range(len(CONTENT_WORDS))
]


@dataclass
class Post:
    slug: str
    title: str
    category: str
    published: date
    teaser: str = ""


@dataclass
class Result:
    """What one benchmark run measured; written to results.json and printed as a table."""

    site_pages: int
    posts: int
    crawl_responses: int
    crawl_elapsed_s: float
    crawl_wall_s: float
    crawl_pages_per_s: float
    crawl_peak_rss_mb: float
    crawl_cpu_s: float
    crawl_errors: int
    pages_in_db: int
    pages_200_in_db: int
    content_link_recall: float
    content_link_precision: float
    bench_pages_per_s: float
    bench_runs: list[float]
    ratio: float
    load_average: list[float]
    recrawl_wall_s: float  # the same site crawled again into the same database, nothing changed
    recrawl_cpu_s: float
    recrawl_reused: int  # pages whose stored extraction the re-crawl reused (linkspider/reuse.py)


# ---------------------------------------------------------------------------- the synthetic site


def sentence(rng: random.Random, low: int = 8, high: int = 24) -> list[str]:
    words = rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(low, high))
    for position in range(3, len(words) - 3):
        if rng.random() < 0.06:
            words[position] += ","
    words[0] = words[0].capitalize()
    words[-1] = words[-1].rstrip(",") + rng.choice([".", ".", ".", ".", "?", "!"])
    return words


def title_of(rng: random.Random) -> str:
    return " ".join(word.capitalize() for word in rng.choices(CONTENT_WORDS, k=rng.randint(4, 8)))


def post_body(rng: random.Random, targets: list[str]) -> tuple[str, set[str]]:
    """600-1000 words in paragraphs and sections, 5-10 of the sentences holding a link to a target."""
    budget = rng.randint(600, 1000)
    paragraphs: list[list[list[str]]] = []
    words = 0
    while words < budget:
        paragraph = [sentence(rng) for _ in range(rng.randint(3, 7))]
        paragraphs.append(paragraph)
        words += sum(len(s) for s in paragraph)
    sentences = [s for paragraph in paragraphs for s in paragraph]
    linked: set[str] = set()
    for s in rng.sample(sentences, min(len(sentences), rng.randint(5, 10))):
        target = rng.choice(targets)
        start = rng.randrange(0, len(s) - 4)
        end = start + rng.randint(2, 4)
        anchor = " ".join(s[start:end]).rstrip(",")
        s[start:end] = [f'<a href="/posts/{target}/">{escape(anchor)}</a>']
        linked.add(f"/posts/{target}/")
    html: list[str] = []
    for number, paragraph in enumerate(paragraphs):
        if number and number % 4 == 0:
            html.append(f"<h2>{escape(title_of(rng))}</h2>")
        if rng.random() < 0.1:
            html.append("<ul>" + "".join(f"<li>{' '.join(sentence(rng, 4, 10))}</li>" for _ in range(3)) + "</ul>")
        html.append("<p>" + " ".join(" ".join(s) for s in paragraph) + "</p>")
    return "\n".join(html), linked


def layout(title: str, main: str, recent: list[Post]) -> str:
    """The template every page shares: header with nav, main, sidebar, footer."""
    nav = "".join(f'<li><a href="/category/{c}/">{c.capitalize()}</a></li>' for c in CATEGORIES)
    sidebar = "".join(f'<li><a href="/posts/{p.slug}/">{escape(p.title)}</a></li>' for p in recent)
    tags = " ".join(f'<a href="/category/{c}/">#{c}</a>' for c in CATEGORIES)
    static = "".join(f'<li><a href="/{slug}/">{label}</a></li>' for slug, label in STATIC_PAGES.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)} | Synthetic Engineering</title>
<meta name="description" content="{escape(title)}"><link rel="stylesheet" href="/style.css"></head>
<body>
<header class="site-header"><a class="logo" href="/">Synthetic Engineering</a>
<nav><ul><li><a href="/">Home</a></li><li><a href="/archive/">Archive</a></li>{nav}<li><a href="/about/">About</a></li></ul></nav>
</header>
<div class="container">
<main>{main}</main>
<aside class="sidebar"><h3>Recent posts</h3><ul>{sidebar}</ul><h3>Tags</h3><p>{tags}</p></aside>
</div>
<footer><ul>{static}<li><a href="/archive/">All posts</a></li></ul><p>&copy; 2024 Synthetic Engineering. Built for benchmarks.</p></footer>
</body></html>
"""


def listing(posts: list[Post]) -> str:
    return "\n".join(
        f'<article class="teaser"><h2><a href="/posts/{p.slug}/">{escape(p.title)}</a></h2>'
        f'<p><time datetime="{p.published}">{p.published:%d %B %Y}</time> in '
        f'<a href="/category/{p.category}/">{p.category}</a></p><p>{p.teaser}</p></article>'
        for p in posts
    )


def write(root: Path, path: str, html: str) -> None:
    file = root / path.strip("/") / "index.html" if path != "/" else root / "index.html"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(html, encoding="utf-8")


def generate_site(root: Path, pages: int, seed: int) -> dict[str, set[str]]:
    """Write a site of about `pages` HTML pages; return each post's path and its in-text link paths."""
    fixed = 2 + len(CATEGORIES) + len(STATIC_PAGES)  # front page, archive index, categories, static
    count = max(1, pages - fixed)
    while count > 1 and count + fixed + math.ceil(count / PER_PAGE) > pages:
        count -= 1
    rng = random.Random(seed)
    newest = date(2024, 6, 1)
    posts = [
        Post(f"{'-'.join(rng.choices(CONTENT_WORDS, k=3))}-{i}", title_of(rng), rng.choice(CATEGORIES), newest - timedelta(days=i // 3))
        for i in range(count)
    ]
    slugs = [p.slug for p in posts]
    recent = posts[:10]
    expected: dict[str, set[str]] = {}
    for post in posts:
        body, linked = post_body(rng, slugs)
        post.teaser = " ".join(sentence(rng, 15, 25))
        main = (
            f'<article class="post"><h1>{escape(post.title)}</h1>'
            f'<p class="meta"><time datetime="{post.published}">{post.published:%d %B %Y}</time></p>\n{body}</article>'
        )
        write(root, f"/posts/{post.slug}/", layout(post.title, main, recent))
        expected[f"/posts/{post.slug}/"] = linked
    archive_pages = math.ceil(len(posts) / PER_PAGE)
    for number in range(1, archive_pages + 1):
        chunk = posts[(number - 1) * PER_PAGE:number * PER_PAGE]
        pager = "".join(
            f'<a rel="{rel}" href="/archive/page/{n}/">{label}</a> '
            for rel, n, label in (("prev", number - 1, "Newer"), ("next", number + 1, "Older"))
            if 1 <= n <= archive_pages
        )
        html = f"<h1>Archive, page {number}</h1>{listing(chunk)}<p class=\"pager\">{pager}</p>"
        write(root, f"/archive/page/{number}/", layout(f"Archive, page {number}", html, recent))
    index = "".join(f'<li><a href="/archive/page/{n}/">Page {n}</a></li>' for n in range(1, archive_pages + 1))
    write(root, "/archive/", layout("Archive", f"<h1>Archive</h1><ul>{index}</ul>", recent))
    for category in CATEGORIES:
        chunk = [p for p in posts if p.category == category][:30]
        html = f"<h1>Posts about {category}</h1>{listing(chunk)}<p><a href=\"/archive/\">Older posts</a></p>"
        write(root, f"/category/{category}/", layout(f"Posts about {category}", html, recent))
    for slug, label in STATIC_PAGES.items():
        write(root, f"/{slug}/", layout(label, f"<h1>{label}</h1><p>{' '.join(sentence(rng, 30, 60))}</p>", recent))
    write(root, "/", layout("Home", f"<h1>Latest posts</h1>{listing(posts[:20])}<p><a href=\"/archive/\">Archive</a></p>", recent))
    (root / "404.html").write_text(layout("Not found", "<h1>Not found</h1>", recent), encoding="utf-8")
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    (root / "style.css").write_text("body { font-family: sans-serif; }\n")
    return expected


# ---------------------------------------------------------------------------- measuring


def stats_value(log: str, key: str) -> float | None:
    """A number from the Scrapy stats dump at the end of a log."""
    match = re.search(rf"'{re.escape(key)}': ([\d.]+)", log)
    return float(match.group(1)) if match else None


def run_crawl(url: str, db: Path, log_file: Path) -> tuple[str, float, float, float]:
    """Run `scrapy crawl site`; return its log, wall time, peak RSS in MB and CPU seconds (user + system).

    os.wait4 gives the resource usage of that one process (what /usr/bin/time -v reports).
    """
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"url={url}", "-a", f"db={db}", "-a", "sitemap=false"]
    for name, value in CRAWL_SETTINGS.items():
        command += ["-s", f"{name}={value}"]
    started = time.perf_counter()
    with open(log_file, "w") as log:
        process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
    wall = time.perf_counter() - started
    if process.returncode:
        print(f"warning: the crawl exited with status {process.returncode}; see {log_file}", file=sys.stderr)
    peak_mb = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return log_file.read_text(), wall, peak_mb, usage.ru_utime + usage.ru_stime


def run_scrapy_bench(seconds: int, log_file: Path) -> float:
    """Pages/s of `scrapy bench`, run from an empty folder so that Scrapy's defaults apply, not the project's.

    (Inside the project it would also load the project's SQLite pipeline, which expects the site spider.)
    """
    with tempfile.TemporaryDirectory() as empty, open(log_file, "w") as log:
        command = [sys.executable, "-m", "scrapy", "bench", "-s", f"CLOSESPIDER_TIMEOUT={seconds}"]
        subprocess.run(command, cwd=empty, stdout=log, stderr=subprocess.STDOUT, check=False)
    text = log_file.read_text()
    responses = stats_value(text, "response_received_count")
    if not responses:  # no stats dump: fall back to the last "Crawled N pages" line
        crawled = re.findall(r"Crawled (\d+) pages", text)
        responses = float(crawled[-1]) if crawled else 0.0
    return responses / (stats_value(text, "elapsed_time_seconds") or seconds)


def content_agreement(db: Path, origin: str, expected: dict[str, set[str]]) -> tuple[float, float]:
    """Recall and precision of the database's internal content links against the generated in-text links."""
    found: dict[str, set[str]] = {}
    with sqlite3.connect(db) as conn:
        for source, target in conn.execute("SELECT source, target FROM links WHERE region = 'content' AND external = 0"):
            found.setdefault(source, set()).add(target)
    hits = wanted = got = 0
    for path, links in expected.items():
        truth = {normalize_url(origin + link) for link in links}
        mine = found.get(normalize_url(origin + path), set())
        hits, wanted, got = hits + len(truth & mine), wanted + len(truth), got + len(mine)
    return hits / max(wanted, 1), hits / max(got, 1)


def benchmark(pages: int, out: Path, seed: int, bench_seconds: int) -> Result:
    site = out / "site"
    site.mkdir(parents=True, exist_ok=True)
    load = list(os.getloadavg())
    print(f"writing {pages} pages into {site} ...", flush=True)
    expected = generate_site(site, pages, seed)
    site_pages = sum(1 for _ in site.rglob("index.html"))
    db = out / "crawl.db"
    for stale in out.glob("crawl.db*"):
        stale.unlink()
    print(f"running `scrapy bench` for {bench_seconds} s ...", flush=True)
    bench_rates = [run_scrapy_bench(bench_seconds, out / "bench-before.log")]
    with serve(site) as url:
        print(f"crawling {url} with `scrapy crawl site` ...", flush=True)
        log, wall, peak_mb, cpu = run_crawl(url, db, out / "crawl.log")
        recall, precision = content_agreement(db, url.rstrip("/"), expected)
        print("crawling it again into the same database ...", flush=True)
        _, again_wall, _, again_cpu = run_crawl(url, db, out / "recrawl.log")
    print(f"running `scrapy bench` again for {bench_seconds} s ...", flush=True)
    bench_rates.append(run_scrapy_bench(bench_seconds, out / "bench-after.log"))
    with sqlite3.connect(db) as conn:
        in_db, ok = conn.execute("SELECT count(*), sum(status = 200) FROM pages").fetchone()
        reused = conn.execute("SELECT reused FROM crawls ORDER BY id DESC LIMIT 1").fetchone()[0] or 0
    responses, elapsed = stats_value(log, "response_received_count") or 0, stats_value(log, "elapsed_time_seconds") or wall
    crawl_rate, bench_rate = responses / elapsed, sum(bench_rates) / len(bench_rates)
    return Result(
        site_pages=site_pages, posts=len(expected),
        crawl_responses=int(responses), crawl_elapsed_s=round(elapsed, 2), crawl_wall_s=round(wall, 2),
        crawl_pages_per_s=round(crawl_rate, 1), crawl_peak_rss_mb=round(peak_mb, 1), crawl_cpu_s=round(cpu, 1),
        crawl_errors=int(stats_value(log, "log_count/ERROR") or 0),
        pages_in_db=in_db, pages_200_in_db=ok or 0,
        content_link_recall=round(recall, 4), content_link_precision=round(precision, 4),
        bench_pages_per_s=round(bench_rate, 1), bench_runs=[round(rate, 1) for rate in bench_rates],
        ratio=round(crawl_rate / bench_rate, 3) if bench_rate else 0.0, load_average=[round(x, 2) for x in load],
        recrawl_wall_s=round(again_wall, 2), recrawl_cpu_s=round(again_cpu, 1), recrawl_reused=reused,
    )


def table(result: Result) -> str:
    rows = [
        ("linkspider pages/s", f"{result.crawl_pages_per_s:.1f}  ({result.crawl_responses} responses in {result.crawl_elapsed_s:.1f} s; "
                               f"{result.crawl_wall_s:.1f} s wall with start-up and finalisation)"),
        ("scrapy bench pages/s", f"{result.bench_pages_per_s:.1f}  (mean of runs before and after the crawl: "
                                 f"{', '.join(f'{rate:.1f}' for rate in result.bench_runs)})"),
        ("ratio", f"{result.ratio:.0%}  (target >= 50%)"),
        ("peak RSS MB", f"{result.crawl_peak_rss_mb:.0f}  (target < 1024)"),
        ("crawl CPU", f"{result.crawl_cpu_s:.1f} s user+system, {1000 * result.crawl_cpu_s / max(result.crawl_responses, 1):.1f} ms "
                      f"per page, {result.crawl_cpu_s / max(result.crawl_wall_s, 1e-9):.0%} of one core"),
        ("re-crawl, nothing changed", f"{result.recrawl_wall_s:.1f} s wall, {result.recrawl_cpu_s:.1f} s CPU "
                                      f"({result.recrawl_cpu_s / max(result.crawl_cpu_s, 1e-9):.0%} of the first crawl's); "
                                      f"extraction reused for {result.recrawl_reused} pages"),
        ("pages in DB", f"{result.pages_in_db}  ({result.pages_200_in_db} with status 200, site has {result.site_pages})"),
        ("crawl ERROR log lines", str(result.crawl_errors)),
        ("load average at start", " ".join(f"{x:.2f}" for x in result.load_average) + "  (other work on the machine skews the rates)"),
        ("content links", f"recall {result.content_link_recall:.1%}, precision {result.content_link_precision:.1%} "
                          f"(against the in-text links of {result.posts} posts)"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000, help="HTML pages in the synthetic site (default 5000)")
    parser.add_argument("--out", type=Path, help="keep the site, database, logs and results.json here (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the site generator (default 1)")
    parser.add_argument("--bench-seconds", type=int, default=10, help="how long `scrapy bench` runs (default 10)")
    args = parser.parse_args()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        result = benchmark(args.pages, args.out.resolve(), args.seed, args.bench_seconds)
        (args.out / "results.json").write_text(json.dumps(asdict(result), indent=2) + "\n")
    else:
        with tempfile.TemporaryDirectory(prefix="linkspider-bench-") as out:
            result = benchmark(args.pages, Path(out), args.seed, args.bench_seconds)
    print(table(result))


if __name__ == "__main__":
    main()
