"""`make demo`: serve the bundled demo site on 127.0.0.1, crawl it, analyse it, show the top suggestions.

Everything goes through the real commands, as a user would run them against their own site.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from linkspider.localserver import serve  # noqa: E402 (needs the project on the path)

OUT = ROOT / "demo-output"
DB = OUT / "kettleandcrema.db"
SITE = ROOT / "demo" / "site"
PORT = 8765  # the same URLs each run, so a second `make demo` re-crawls and reuses its vectors


def demo_site() -> AbstractContextManager[str]:
    """The demo site served on PORT, or on any free port if that one is taken (the crawl then sees new URLs)."""
    try:
        return serve(SITE, PORT)
    except OSError:
        return serve(SITE)


def scrapy(*args: str) -> None:
    """Run a `scrapy` command of this project; stop the demo if it fails."""
    done = subprocess.run([sys.executable, "-m", "scrapy.cmdline", *args], cwd=ROOT)
    if done.returncode:
        sys.exit(done.returncode)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    with demo_site() as url:
        print(f"== Serving the demo site (demo/site) at {url}", flush=True)
        print(f"== scrapy crawl site -a url={url} -a db={DB.relative_to(ROOT)}", flush=True)
        scrapy("crawl", "site", "-a", f"url={url}", "-a", f"db={DB}", "-s", "LOG_LEVEL=WARNING")
    print(f"\n== scrapy analyze {DB.relative_to(ROOT)}", flush=True)
    scrapy("analyze", str(DB))
    print(f"\nReview the queue in {DB.with_suffix('.suggestions.csv').relative_to(ROOT)} "
          f"(or open {DB.relative_to(ROOT)} in Datasette).")


if __name__ == "__main__":
    main()
