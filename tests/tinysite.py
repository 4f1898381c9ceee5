"""Small fixture sites cut from the demo site: a few of its posts, as they are, under a home page that lists them.

Small enough that crawling and analysing one takes seconds, real enough that the analysis suggests links.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from conftest import DEMO_SITE

SLUGS = ("espresso-basics", "dialing-in-espresso", "choosing-espresso-machine", "milk-steaming", "pour-over-basics",
         "v60-technique", "brew-ratio", "grind-size-chart")
HOME = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head><body><h1>{title}</h1><ul>{items}</ul></body></html>"


def tiny_site(folder: Path, slugs: Sequence[str] = SLUGS, title: str = "A tiny coffee site") -> Path:
    """Write the site into folder: /blog/<slug>/ for each post, the demo's 404 page, a home page linking to the posts."""
    for slug in slugs:
        (folder / "blog" / slug).mkdir(parents=True, exist_ok=True)
        shutil.copy(DEMO_SITE / "blog" / slug / "index.html", folder / "blog" / slug / "index.html")
    shutil.copy(DEMO_SITE / "404.html", folder / "404.html")
    write_home(folder, title)
    return folder


def write_home(folder: Path, title: str = "A tiny coffee site") -> None:
    """The home page: a link to every post in the folder (call again after removing one)."""
    slugs = sorted(path.parent.name for path in (folder / "blog").glob("*/index.html"))
    items = "".join(f"<li><a href='/blog/{slug}/'>{slug.replace('-', ' ')}</a></li>" for slug in slugs)
    (folder / "index.html").write_text(HOME.format(title=title, items=items), encoding="utf-8")
