"""Stage 4, candidates: neighbour pairs minus the links that exist, within the similarity band.

Pairs come from both neighbour lists of the index stage (by meaning and by words) and from
mentions (the source's text holds most of the target's title words); each gets both similarities.
A pair already linked from the source's main content is dropped; one linked only from nav, footer
or sidebars stays (that is not an editorial link) and is flagged. Pairs below the threshold are
unrelated, unless the source mentions the target: an editor links a mention whatever the rest of
the page is about. Pairs above the upper bound are near-duplicates, reported as cannibalisation
instead of suggested. Both bounds apply to the embedding similarity.
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
    mentioned: bool = False  # the source's text holds most of the target's title words


def find_candidates(corpus: Corpus, vectors: np.ndarray, by_meaning: Neighbours, keywords: Keywords,
                    by_words: Neighbours, mentions: set[Pair], threshold: float, max_similarity: float,
                    excluded: set[Pair] = frozenset()) -> tuple[list[Candidate], list[tuple[int, int, float]]]:
    """(candidates, cannibalisation pairs (a, b, similarity) with a < b) from each page's neighbours and mentions."""
    pairs = {(source, int(target)) for neighbours in (by_meaning[1], by_words[1])
             for source, row in enumerate(neighbours) for target in row if target >= 0 and target != source}
    pairs |= mentions
    if not pairs:
        return [], []
    sources, targets = (np.array(side) for side in zip(*sorted(pairs)))
    similarities = np.einsum("ij,ij->i", vectors[sources], vectors[targets])
    lexical = keywords.similarity(sources, targets)
    candidates, cannibalised = [], {}
    for source, target, similarity, words in zip(sources.tolist(), targets.tolist(), similarities.tolist(), lexical.tolist()):
        mentioned = (source, target) in mentions
        if similarity < threshold and not mentioned:
            continue
        if similarity > max_similarity:
            cannibalised[min(source, target), max(source, target)] = similarity
        elif (source, target) not in corpus.content_pairs and (source, target) not in excluded:
            candidates.append(Candidate(source, target, similarity, words, (source, target) in corpus.template_pairs, mentioned))
    return candidates, [(a, b, similarity) for (a, b), similarity in sorted(cannibalised.items())]
