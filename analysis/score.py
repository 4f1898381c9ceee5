"""Stage 5a, rank and cap: score every candidate, then fill the queue in score order under two caps.

    score = similarity + ANCHOR_WEIGHT * anchor strength + NEED_WEIGHT * need(target)
    need  = 0.5 / (1 + inbound content links) + 0.3 * min(depth - 1, 4) / 4 + 0.2 * (target newer than source)

Similarity is cosine similarity of the page vectors (0..1 in practice). Anchor strength (0..1) is
how much of the target's title the best phrase of the source covers (see anchors.py): a source
that already names the target in its prose is the best place for a link. need (0..1) favours
targets that few pages link to, that are deep, and that the source predates (an old post
rarely links to what was written after it). A page with no known depth counts as deep.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from analysis.anchors import Anchor, AnchorFinder
from analysis.candidates import Candidate
from analysis.load import Corpus

DENSE_WEIGHT = 1.0
LEXICAL_WEIGHT = 1.0
ANCHOR_WEIGHT = 0.5
NEED_WEIGHT = 0.05
MAX_TARGET_SHARE = 0.02  # of the whole queue, for any one target (the default hub guard)
MIN_CAP = 3  # suggestions per target the default hub guard always allows
SHORTLIST = 20  # candidates per source that get an anchor search besides the mentions (set with the backtest)


@dataclass
class Suggestion:
    source: int
    target: int
    similarity: float
    score: float
    anchor: Anchor
    template_linked: bool


def need(corpus: Corpus, source: int, target: int) -> float:
    """How much the target needs a link from this source, 0..1 (see the module docstring)."""
    depth = corpus.depths[target]
    deep = 1.0 if depth is None else min(max(depth - 1, 0), 4) / 4
    newer = float((corpus.published[target] or "") > (corpus.published[source] or ""))
    return 0.5 / (1 + corpus.inbound[target]) + 0.3 * deep + 0.2 * newer


def rank(corpus: Corpus, candidates: list[Candidate], finder: AnchorFinder, max_per_page: int,
         max_per_target: int | None = None) -> tuple[list[Suggestion], dict[int, int], int]:
    """The review queue (best first), the hubs (target -> suggestions it wanted) and the per-target cap used.

    With no max_per_target, the cap is the largest that keeps every target within MAX_TARGET_SHARE
    of the queue, but not below MIN_CAP: on a small site 2% of the queue is less than one suggestion.
    """
    scored = sorted(((_score(corpus, candidate, anchors), candidate, anchors) for candidate in shortlist(corpus, candidates)
                     for anchors in [finder.anchors(candidate.source, candidate.target)]),
                    key=lambda item: (-item[0], item[1].source, item[1].target))
    if max_per_target is not None:
        return *select(scored, max_per_page, max_per_target), max_per_target
    per_source = Counter(candidate.source for candidate in candidates)
    cap = max(MIN_CAP, int(MAX_TARGET_SHARE * sum(min(count, max_per_page) for count in per_source.values())))
    while True:
        queue, hubs = select(scored, max_per_page, cap)
        if cap == MIN_CAP or cap <= MAX_TARGET_SHARE * len(queue):
            return queue, hubs, cap
        cap -= 1


def shortlist(corpus: Corpus, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates worth an anchor search (the costly part): every mention, and each source's best few
    by the rest of the score. A pair outside them would need an anchor stronger than a mention's to rank."""
    by_source: dict[int, list[Candidate]] = {}
    for candidate in candidates:
        by_source.setdefault(candidate.source, []).append(candidate)
    kept = []
    for group in by_source.values():
        group.sort(key=lambda candidate: -_score(corpus, candidate, None))
        kept += [candidate for rank, candidate in enumerate(group) if candidate.mentioned or rank < SHORTLIST]
    return kept


def _score(corpus: Corpus, candidate: Candidate, anchors: list[Anchor] | None) -> float:
    """The score of the module docstring; without anchors, the part that needs no anchor search."""
    strength = anchors[0].strength if anchors else 0.0
    return (DENSE_WEIGHT * candidate.similarity + LEXICAL_WEIGHT * candidate.lexical + ANCHOR_WEIGHT * strength
            + NEED_WEIGHT * need(corpus, candidate.source, candidate.target))


def select(scored: list[tuple[float, Candidate, list[Anchor]]], max_per_page: int,
           max_per_target: int) -> tuple[list[Suggestion], dict[int, int]]:
    """Fill the queue in score order under both caps, giving each suggestion an anchor not used for its target yet."""
    per_source: Counter[int] = Counter()
    per_target: Counter[int] = Counter()
    wanted: Counter[int] = Counter()
    used_anchors: set[tuple[str, int]] = set()
    used_spans: dict[int, list[tuple[int, int]]] = {}
    queue = []
    for score, candidate, anchors in scored:
        if per_source[candidate.source] >= max_per_page:
            continue
        wanted[candidate.target] += 1
        if per_target[candidate.target] >= max_per_target:
            continue
        anchor = _free_anchor(anchors, candidate.target, used_anchors, used_spans.setdefault(candidate.source, []))
        queue.append(Suggestion(candidate.source, candidate.target, candidate.similarity, round(score, 4), anchor,
                                candidate.template_linked))
        per_source[candidate.source] += 1
        per_target[candidate.target] += 1
        used_anchors.add((anchor.text.lower(), candidate.target))
        if anchor.span:
            used_spans[candidate.source].append(anchor.span)
    return queue, {target: count for target, count in wanted.items() if count > max_per_target}


def _free_anchor(anchors: list[Anchor], target: int, used: set[tuple[str, int]], spans: list[tuple[int, int]]) -> Anchor:
    """The best anchor not already pointing at this target elsewhere and not overlapping this source's others."""
    for anchor in anchors:
        if (anchor.text.lower(), target) in used:
            continue
        if anchor.span and any(anchor.span[0] < end and start < anchor.span[1] for start, end in spans):
            continue
        return anchor
    return anchors[-1]  # the title fallback
