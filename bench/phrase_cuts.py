"""Whole phrases: how often a link text cuts a pair of words the site writes as one, the editors' and the queue's.

    .venv/bin/python bench/phrase_cuts.py DB [DB ...]

Each DB is a crawl that `scrapy analyze` has written a queue into. For each, the share of the site's own content
links whose text (the editors') and of the queue's text anchors whose first or last word cuts one of the site's
collocations (windows.cuts_a_collocation: "survey working" of "survey working group"). Editors seldom cut one: their share
is what a queue of whole phrases should come near (BENCHMARKS.md, "Quality").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.index import Keywords  # noqa: E402 (needs the project on the path)
from analysis.load import load_corpus  # noqa: E402
from analysis.phrases import phrases_of  # noqa: E402
from analysis.windows import cuts_a_collocation  # noqa: E402
from linkspider.db import open_existing  # noqa: E402


def cut_counts(path: Path) -> dict[str, tuple[int, int]]:
    """{"editors": (cut, links), "queue": (cut, anchors)} of one analysed crawl."""
    db = open_existing(path)
    corpus = load_corpus(db)
    keywords = Keywords(corpus.texts, corpus.titles)
    queued: dict[int, list[tuple[int, int]]] = {}
    for source, offset, anchor in db.execute("SELECT source, offset, anchor FROM suggestions WHERE anchor_source = 'text'"):
        queued.setdefault(corpus.index[source], []).append((offset, offset + len(anchor)))
    counts = {"editors": [0, 0], "queue": [0, 0]}
    for page in range(len(corpus)):
        phrases = phrases_of(corpus, keywords, [page])
        for kind, spans in (("editors", corpus.link_spans[page]), ("queue", queued.get(page, []))):
            for start, end in spans:
                first = int(np.searchsorted(phrases.starts, start))
                last = int(np.searchsorted(phrases.ends, end, side="right")) - 1
                if first <= last:  # a text of one word or more
                    counts[kind][0] += cuts_a_collocation(first, last, phrases.collocated)
                    counts[kind][1] += 1
    return {kind: (cut, total) for kind, (cut, total) in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("databases", type=Path, nargs="+", help="crawls analysed by `scrapy analyze`")
    args = parser.parse_args()
    print("| crawl | editors' link texts that cut a collocation | the queue's text anchors that do |")
    print("| --- | --- | --- |")
    for path in args.databases:
        shares = [f"{cut}/{total} = {cut / max(total, 1):.3f}" for cut, total in cut_counts(path).values()]
        print(f"| {path.stem} | {' | '.join(shares)} |")


if __name__ == "__main__":
    main()
