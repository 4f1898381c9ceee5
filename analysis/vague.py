"""Existing content links whose anchor says nothing of their target ("here", "read more"), each with a phrase of its
own sentence that names the target, to link instead.

Lighthouse's SEO audit "Links do not have descriptive text" fails such links: a search engine and a screen reader
learn nothing of the page from "here". VAGUE_ANCHORS is its English list, with "this link" (remark-lint-link-text's)
and the deictic "this post", "this article", "this page". What an editor wrote around "here" usually names the page
("the evaluation we started last year is here"), so the better anchor is the anchor search's (anchors.py) for the
same pair, kept to the link's sentence; none where no phrase of it names the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sqlite_utils

from analysis.anchors import AnchorFinder, completion_clear_of, text_options
from analysis.load import Corpus, resolver
from linkspider.sentences import sentence_at

VAGUE_ANCHORS = frozenset({
    "click here", "click this", "go", "here", "information", "learn more", "more", "more info", "more information",
    "right here", "read more", "see more", "start", "this",  # Lighthouse's
    "this link", "this post", "this article", "this page",
})
_AROUND = " \t\n.,:;!?()[]\"'\u2018\u2019\u201c\u201d\u2026"  # what may stand around the words of a link's text
_LONGEST = max(map(len, VAGUE_ANCHORS)) + 8  # characters of a vague anchor with what stands around it, at most


@dataclass(frozen=True)
class VagueLink:
    source: int
    target: int
    anchor: str  # as linked
    offset: int  # where it starts in the source's main text
    context: str  # the sentence that holds it
    context_offset: int  # where that sentence starts in the source's main text
    better: str | None  # a phrase of that sentence that names the target, or None
    better_offset: int | None


def is_vague(anchor: str) -> bool:
    return anchor.strip(_AROUND).lower() in VAGUE_ANCHORS


def vague_links(db: sqlite_utils.Database, corpus: Corpus, finder: AnchorFinder) -> list[VagueLink]:
    """The content links between analysed pages whose anchor is vague, by source and offset, with the better anchor of
    each."""
    rows = [row for row in db.execute(
        "SELECT links.source, links.target, links.anchor, links.text_offset FROM links JOIN pages ON pages.url = links.source "
        "WHERE links.region = 'content' AND links.external = 0 AND links.text_offset IS NOT NULL AND pages.gone = 0 "
        "AND length(links.anchor) <= ? ORDER BY links.source, links.text_offset", [_LONGEST]) if is_vague(row[2])]
    if not rows:
        return []  # and no resolver read (every page's row: seconds at 1,000,000 pages)
    resolve, index = resolver(db), corpus.index
    links = [(i, j, anchor, offset) for source, target, anchor, offset in rows
             if (i := index.get(source)) is not None and (j := index.get(resolve.get(target, target))) is not None and i != j]
    if not links:
        return []
    sources, targets = (np.array(column, dtype=np.int64) for column in list(zip(*links))[:2])
    found = finder.search_all(sources, targets)
    vague = []
    for (i, j, anchor, offset), (starts, ends, strengths) in zip(links, found.alternatives(np.arange(len(links)))):
        text = corpus.texts[i]
        first, last = sentence_at(text, offset)
        better = next(((start, end) for start, end, _ in text_options(text, starts, ends, strengths)
                       if first <= start and end <= last), None)
        if better:  # with the word that completes its phrase, as the queue shows it, but not into a link
            better = (better[0], completion_clear_of(text, *better, corpus.link_spans[i]))
        vague.append(VagueLink(i, j, anchor, offset, text[first:last], first, better and text[better[0]:better[1]],
                               better and better[0]))
    return vague
