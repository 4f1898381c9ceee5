"""Stage 4, candidates: neighbour pairs minus the links that exist, within the similarity band.

A pair already linked from the source's main content is dropped; one linked only from nav, footer
or sidebars stays (that is not an editorial link) and is flagged. Pairs above the upper bound are
near-duplicates, reported as cannibalisation instead of suggested.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.load import Corpus, Pair


@dataclass
class Candidate:
    source: int
    target: int
    similarity: float
    template_linked: bool  # the source links to the target, but only from its template


def find_candidates(corpus: Corpus, similarities: np.ndarray, neighbours: np.ndarray, threshold: float,
                    max_similarity: float, excluded: set[Pair] = frozenset()) -> tuple[list[Candidate], list[tuple[int, int, float]]]:
    """(candidates, cannibalisation pairs (a, b, similarity) with a < b) from each page's neighbours."""
    candidates, cannibalised = [], {}
    for source, (row_sims, row_ids) in enumerate(zip(similarities, neighbours)):
        for similarity, target in zip(row_sims.tolist(), row_ids.tolist()):
            if target < 0 or target == source or similarity < threshold:
                continue
            if similarity > max_similarity:
                cannibalised[min(source, target), max(source, target)] = similarity
            elif (source, target) not in corpus.content_pairs and (source, target) not in excluded:
                candidates.append(Candidate(source, target, similarity, (source, target) in corpus.template_pairs))
    return candidates, [(a, b, similarity) for (a, b), similarity in sorted(cannibalised.items())]
