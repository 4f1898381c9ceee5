"""Quality benchmark: crawl a folder of HTML with the real spider, then backtest the analysis on it.

    .venv/bin/python bench/backtest.py CORPUS_DIR [--rounds 10] [--share 0.2] [--db PATH]

Serves CORPUS_DIR on 127.0.0.1, crawls it with `scrapy crawl site` (skipped when --db already
exists), and runs `scrapy analyze DB --backtest` over several seeds: recall, recall within the
per-page cap, hit rate and anchor agreement of the engine beside the seed pipeline and TF-IDF, on
the same hidden links. Results are also stored in the database's `backtests` table.
Ten rounds by default: a round hides 30-45 links of a blog, so one hit is 0.02-0.03 of recall, and
the mean of three seeds was up to 0.09 off the mean of ten (BENCHMARKS.md, "Quality").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from linkspider.localserver import serve  # noqa: E402 (needs the project on the path)


def scrapy(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "scrapy.cmdline", *args], cwd=REPO)
    if done.returncode:
        sys.exit(done.returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="folder of HTML to serve and crawl")
    parser.add_argument("--rounds", type=int, default=10, help="seeds 1..N (default: 10)")
    parser.add_argument("--share", type=float, default=0.2, help="share of editorial links hidden (default: 0.2)")
    parser.add_argument("--db", type=Path, help="database to write or reuse (default: a temporary file)")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp(prefix="linkspider-backtest-")) / f"{args.corpus.name}.db"
    if not db.exists():
        with serve(args.corpus) as url:
            scrapy("crawl", "site", "-a", f"url={url}", "-a", f"db={db}", "-s", "AUTOTHROTTLE_ENABLED=False",
                   "-s", "LOG_LEVEL=WARNING")
    scrapy("analyze", str(db), "--backtest", "--rounds", str(args.rounds), "--share", str(args.share), "--no-progress")


if __name__ == "__main__":
    main()
