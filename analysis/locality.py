"""An order of the pages that keeps related pages together, for the loops over millions of pairs.

The pairs come sorted by source; a loop over them reads each pair's target (its vector, its keyword row, its terms)
from anywhere in arrays of tens or hundreds of MB: a cache miss or several a pair. Taken in the order of a breadth-first
walk of the pairs' own graph (a page, then the pages it pairs with, then theirs), a stretch of sources shares most of
its targets, whose rows are then read from cache (Cuthill-McKee's ordering, for locality). Each pair is computed as
before, only at another time: the results are the same. At 100,000 synthetic pages the keyword similarities of the
4.65M candidate pairs took 2.4 s of one core in source order, 1.4 s in this order (BENCHMARKS.md, "Analysis").

The anchor search keeps its sources in id order: its blocks read their texts and tokens from files a run of
consecutive pages at a time, and with its blocks in this order rank took 131 s at 1,000,000 pages against 121 and
127 s without (one run each).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from analysis.compiled import compiled
from analysis.load import run_items


def in_visit_order(starts: np.ndarray, linked: np.ndarray, pages: int, size: int, threads: int,
                   compute: Callable[[np.ndarray], np.ndarray], out: np.ndarray) -> None:
    """out[rows] = compute(rows) for every pair (page p's are rows starts[p]:starts[p + 1], linking linked[row]: its
    target, or its code source * pages + target), about `size` rows a step, `threads` steps at once, the pages in
    visit_order."""
    order = visit_order(starts, linked, pages)

    def fill(step: slice) -> None:
        rows = rows_of(starts, order, step)
        out[rows] = compute(rows)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(fill, steps(starts, order, size)))


def source_starts(keys: np.ndarray, pages: int, per_source: int = 1) -> np.ndarray:
    """Where each page's pairs start among pairs sorted by source, keys their sources (or their codes, source *
    pages + target, with per_source = pages); a ValueError if they are not so sorted (the orders here would leave
    pairs out)."""
    return _source_starts(keys, pages, per_source)


def steps(starts: np.ndarray, order: np.ndarray, size: int) -> list[slice]:
    """The pages in this order cut into steps of about `size` pairs (page p's pairs are starts[p]:starts[p + 1]; a
    page's are never split), as slices of order: few numbers, which a thread pool's map may take all at once."""
    ends = np.cumsum(np.diff(starts)[order])
    cuts = np.searchsorted(ends, np.arange(size, ends[-1] if len(ends) else 0, size), "right") + 1
    edges = [0, *np.unique(np.minimum(cuts, len(order))).tolist(), len(order)]
    return [slice(first, last) for first, last in zip(edges, edges[1:]) if first < last]


def rows_of(starts: np.ndarray, order: np.ndarray, step: slice) -> np.ndarray:
    """The places of a step's pairs, a page's together, its pages in order."""
    pages = order[step]
    return run_items(starts[pages], starts[pages + 1] - starts[pages])[1]


@compiled
def visit_order(starts: np.ndarray, linked: np.ndarray, pages: int) -> np.ndarray:
    """The pages, each once, breadth first over the pairs: page p's pairs are linked[starts[p]:starts[p + 1]], each
    its target or a pair code (source * pages + target)."""
    visited, seen, found, walked = np.empty(pages, np.int64), np.zeros(pages, np.bool_), 0, 0
    for root in range(pages):
        if seen[root]:
            continue
        seen[root], visited[found], found = True, root, found + 1
        while walked < found:
            page, walked = visited[walked], walked + 1
            for at in range(starts[page], starts[page + 1]):
                other = linked[at] % pages
                if not seen[other]:
                    seen[other], visited[found], found = True, other, found + 1
    return visited


@compiled
def _source_starts(keys: np.ndarray, pages: int, per_source: int) -> np.ndarray:
    starts, last = np.zeros(pages + 1, np.int64), 0
    for at in range(len(keys)):
        source = keys[at] // per_source
        if source < last:
            raise ValueError("pairs not sorted by source")
        starts[source + 1] += 1
        last = source
    return np.cumsum(starts)
