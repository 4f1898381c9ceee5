"""Stage 4, candidates: neighbour pairs minus the links that exist, within the similarity band.

Pairs come from both neighbour lists of the index stage (by meaning and by words); each gets both
similarities. A pair already linked from the source's main content is dropped; one linked only
from nav, footer or sidebars stays (that is not an editorial link) and is flagged. Pairs below the
threshold are unrelated; pairs above the upper bound are near-duplicates, reported as
cannibalisation instead of suggested. Both bounds apply to the embedding similarity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.index import Keywords
from analysis.load import Corpus, Pair

Neighbours = tuple[np.ndarray, np.ndarray]  # (similarities, indices), one row per page


@dataclass
class Candidate:
    source: int
    target: int
    similarity: float  # cosine of the embeddings
    lexical: float  # TF-IDF cosine of the texts
    template_linked: bool  # the source links to the target, but only from its template


def find_candidates(corpus: Corpus, vectors: np.ndarray, by_meaning: Neighbours, keywords: Keywords,
                    by_words: Neighbours, threshold: float, max_similarity: float,
                    excluded: set[Pair] = frozenset()) -> tuple[list[Candidate], list[tuple[int, int, float]]]:
    """(candidates, cannibalisation pairs (a, b, similarity) with a < b) from each page's neighbours."""
    pairs = {(source, int(target)) for neighbours in (by_meaning[1], by_words[1])
             for source, row in enumerate(neighbours) for target in row if target >= 0 and target != source}
    if not pairs:
        return [], []
    sources, targets = (np.array(side) for side in zip(*sorted(pairs)))
    similarities = np.einsum("ij,ij->i", vectors[sources], vectors[targets])
    lexical = keywords.similarity(sources, targets)
    candidates, cannibalised = [], {}
    for source, target, similarity, words in zip(sources.tolist(), targets.tolist(), similarities.tolist(), lexical.tolist()):
        if similarity < threshold:
            continue
        if similarity > max_similarity:
            cannibalised[min(source, target), max(source, target)] = similarity
        elif (source, target) not in corpus.content_pairs and (source, target) not in excluded:
            candidates.append(Candidate(source, target, similarity, words, (source, target) in corpus.template_pairs))
    return candidates, [(a, b, similarity) for (a, b), similarity in sorted(cannibalised.items())]
