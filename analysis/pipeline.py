"""The analysis, stage by stage: load, embed, index, candidates, rank and anchor, export.

`run` is what `scrapy analyze` and `python -m analysis` call; `propose` is the part the
backtest re-runs with some of the site's links hidden.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sqlite_utils

from analysis.anchors import AnchorFinder
from analysis.candidates import Candidates, find_candidates
from analysis.changes import Changes, record_changes
from analysis.embed import DEFAULT_BACKEND, DEFAULT_MODEL, ModelTexts, embed_pages
from analysis.export import (export_cannibalization, export_csv, export_vague_links, rejected_pairs, save_cannibalization,
                             save_hubs, save_orphans, save_suggestions, save_vague_links)
from analysis.impact import Impact, measure_impact
from analysis.index import Keywords, nearest_within
from analysis.load import Corpus, Pair, crawl_note, load_corpus
from analysis.memory import return_freed_memory
from analysis.names import COMMON_SHARE, cited_headings, title_heads
from analysis.report import save_report_settings, write_report
from analysis.scope import InScope, Scope
from analysis.score import Queue, rank
from analysis.vague import VagueLink, vague_links
from linkspider.db import open_existing, writing

# Default lower similarity bound per model, set with the backtest (see BENCHMARKS.md, "Quality").
THRESHOLDS = {DEFAULT_MODEL: 0.35, "BAAI/bge-small-en-v1.5": 0.55}
FALLBACK_THRESHOLD = 0.5
MENTION_SHARE = 0.6  # a source holding this share of a target's (rarer) title words mentions it
# Keyword neighbours cost the square of the pages (BENCHMARKS.md, "Analysis": 13 s at 10,000 pages,
# 16 minutes and more than 8 GB at 100,000); above this many pages they are skipped, and each source
# keeps MENTIONS_PER_SOURCE mentions, which then bring back most of what they found (BENCHMARKS.md, "Quality").
KEYWORD_NEIGHBOURS_LIMIT = 20_000
MENTIONS_PER_SOURCE = 20
MENTION_WORD_PAGES = 1_000  # past the limit, mentions are searched by a name's rarer words on at most this many pages


@dataclass
class Options:
    model: str = DEFAULT_MODEL
    threshold: float | None = None  # None: the model's default (or the site's calibrated value)
    max_similarity: float = 0.9
    max_per_page: int = 4
    max_per_target: int | None = None  # None: the largest cap keeping each target within 2% of the queue, at least 3
    min_words: int = 50
    neighbours: int = 30  # per page, from each of the two indexes
    device: str = "auto"
    backend: str = DEFAULT_BACKEND  # torch, onnx or onnx-int8 (analysis/embed.py)
    csv: Path | None = None
    progress: bool = True
    approved_only: bool = False  # the impact of the approved suggestions only (default: pending and approved)
    exclude: tuple[str, ...] = ()  # URL patterns of pages that are neither source nor target (scope.py)
    targets: tuple[str, ...] = ()  # URL patterns of the only pages that may be targets; none: every page
    all_languages: bool = False  # pair pages whatever language they declare (load_corpus's languages)


@dataclass
class Proposal:
    """What the stages after loading produce for one corpus."""

    queue: Queue  # of Suggestion, best first
    hubs: dict[int, int]
    cannibalised: list[tuple[int, int, float]]
    threshold: float
    max_per_target: int
    embedded: int
    encoder: str | None  # what embedded them (Embeddings.encoder)
    past_keyword_limit: bool = False  # past KEYWORD_NEIGHBOURS_LIMIT: no keyword neighbours, MENTIONS_PER_SOURCE mentions a source
    scope: str | None = None  # with --exclude or --targets: what they left (InScope.line)
    vague: list[VagueLink] = field(default_factory=list)  # links anchored on "here" and the like (vague.py)


@dataclass
class Result:
    corpus: Corpus
    proposal: Proposal
    timings: dict[str, float]
    counts: dict[str, int]
    csv: Path
    cannibalization_csv: Path
    impact: Impact
    report: Path
    changes: Changes  # since the last analysis
    crawl_note: str | None  # what the analysis misses when the latest crawl did not finish (load.crawl_note)
    vague_csv: Path


@contextmanager
def timed(timings: dict[str, float], stage: str, progress: bool = False, part: str = "") -> Iterator[None]:
    """Add the stage's time to timings, then hand what it freed back to the system (return_freed_memory); with
    progress, say on stderr that it starts: given for the stages after embedding, which run for a minute and more on a
    large site with no other sign of life (embedding has its bar, and a bad database or model is one line on stderr,
    with nothing before it). part: which part of a stage that runs in two (the export's tables, then its CSV)."""
    if progress:
        print(f"stage: {stage}" + (f" ({part})" if part else ""), file=sys.stderr, flush=True)
    start = time.perf_counter()
    yield
    return_freed_memory()
    timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


def default_threshold(db: sqlite_utils.Database, model: str) -> float:
    """The site's calibrated threshold for this model if `--calibrate` stored one, else the model's default."""
    stored = db.execute("SELECT value FROM meta WHERE key = ?", [f"threshold:{model}"]).fetchone()
    return float(stored[0]) if stored else THRESHOLDS.get(model, FALLBACK_THRESHOLD)


def propose(db: sqlite_utils.Database, corpus: Corpus, options: Options, timings: dict[str, float],
            excluded: set[Pair] = frozenset(), with_vague_links: bool = False) -> Proposal:
    """Embed, index, filter, rank and anchor: the review queue for a loaded corpus.

    With --targets and no --max-per-target, no hub guard: the targets are the pages the user wants linked, and a cap
    of 2% of the queue each would leave a few chosen pages three links apiece. A scope that leaves no source or no
    target is a ScopeError, before anything is embedded (and cached in the database). with_vague_links: the site's
    links anchored on "here" and the like, with a better anchor each (vague.py), for the run, not the backtest."""
    threshold = options.threshold if options.threshold is not None else default_threshold(db, options.model)
    scope = Scope(options.exclude, options.targets)
    allowed = scope.of(corpus.urls) if scope else None
    max_per_target = len(corpus) if options.targets and options.max_per_target is None else options.max_per_target
    candidates, cannibalised, keywords, embedded, encoder = _candidates(db, corpus, options, threshold, timings, excluded,
                                                                        allowed)
    with timed(timings, "rank+anchor", options.progress):
        finder = AnchorFinder(corpus, keywords)
        keywords.drop_matrix()  # the finder took what it needs of it
        queue, hubs, cap = rank(corpus, candidates, finder, options.max_per_page, max_per_target, options.progress)
        vague = vague_links(db, corpus, finder) if with_vague_links else []
    return Proposal(queue, hubs, cannibalised, threshold, cap, embedded, encoder, len(corpus) > KEYWORD_NEIGHBOURS_LIMIT,
                    allowed.line if allowed else None, vague)


def _candidates(db: sqlite_utils.Database, corpus: Corpus, options: Options, threshold: float, timings: dict[str, float],
                excluded: set[Pair], allowed: InScope | None
                ) -> tuple[Candidates, list[tuple[int, int, float]], Keywords, int, str | None]:
    """Embed, index and filter: (candidates, cannibalised pairs, keyword index, pages embedded now, what embedded them).

    A function of its own so that what only these stages need (the vectors and the neighbour lists: ~180 MB
    at 100,000 pages) is freed before ranking, the stage of the peak.
    """
    with timed(timings, "embed"):
        embeddings = embed_pages(db, corpus.urls, ModelTexts(corpus.titles, corpus.texts), corpus.hashes, options.model,
                                 options.device, progress=options.progress, backend=options.backend)
    with timed(timings, "index", options.progress):
        by_meaning = nearest_within(embeddings.vectors, options.neighbours, *corpus.language_groups)
        return_freed_memory()
        keywords = Keywords(corpus.texts, corpus.titles)  # whole pages
        return_freed_memory()
        if len(corpus) <= KEYWORD_NEIGHBOURS_LIMIT:
            by_words, mentions = keywords.nearest(options.neighbours), mentioned_pairs(corpus, keywords)
        else:  # keyword neighbours grow with the square of the pages, and so do mentions a source
            by_words = (np.zeros((len(corpus), 0)), np.zeros((len(corpus), 0), dtype=np.int64))
            mentions = mentioned_pairs(corpus, keywords, MENTIONS_PER_SOURCE, MENTION_WORD_PAGES)
    with timed(timings, "candidates", options.progress):
        candidates, cannibalised = find_candidates(corpus, embeddings.vectors, by_meaning, keywords, by_words, mentions,
                                                   threshold, options.max_similarity, excluded, allowed)
    return candidates, cannibalised, keywords, embeddings.computed, embeddings.encoder


def mentioned_pairs(corpus: Corpus, keywords: Keywords, per_source: int | None = None,
                    word_pages: int | None = None) -> np.ndarray:
    """Pair codes (source * pages + target, sorted) where the source's text holds most of the rarer words of the
    target's title, of its title's head (names.title_heads: "timeit"), or of one of its cited headings (a part of the
    page, by its name: "Temporary lifetime extension"),
    or cites it by the number its title carries ("Section 8.16.6": citations.py); with per_source and word_pages, as
    Keywords.mentions takes them (a source's citations are kept whatever per_source)."""
    headings, heads = cited_headings(corpus, keywords), title_heads(corpus.titles, keywords)
    owners = np.concatenate([np.arange(len(corpus)), headings.owners(), np.array([page for page, _ in heads], dtype=np.int64)])
    by_words = keywords.mentions(corpus.titles + headings.texts + [head for _, head in heads], MENTION_SHARE, COMMON_SHARE,
                                 owners, per_source, word_pages)
    return np.union1d(by_words, corpus.citations.pair_codes(corpus.texts, len(corpus))) if corpus.citations else by_words


def run(db_path: str | Path, options: Options) -> Result:
    """The whole analysis of one crawl database, written back into it and beside it."""
    db_path = Path(db_path)
    db = open_existing(db_path)
    timings: dict[str, float] = {}
    with _set_aside_from_the_collector() as set_aside:
        with timed(timings, "load"):
            corpus = load_corpus(db, options.min_words, languages=not options.all_languages)
        set_aside()  # the corpus lives to the end
        proposal = propose(db, corpus, options, timings, rejected_pairs(db, corpus), with_vague_links=True)
        set_aside()  # so does the queue
        csv_path = options.csv or db_path.with_suffix(".suggestions.csv")
        cannibalization_csv = csv_path.with_name(db_path.stem + ".cannibalization.csv")
        vague_csv = csv_path.with_name(db_path.stem + ".vague-links.csv")
        with writing(db):  # this run's tables take the place of the last run's together, or not at all
            with timed(timings, "export", options.progress, "tables"):
                counts = save_suggestions(db, corpus, proposal.queue)
                cannibalised = save_cannibalization(db, corpus, proposal.cannibalised)
                save_orphans(db, corpus)
                save_hubs(db, corpus, proposal.hubs, proposal.max_per_target)
                vague = save_vague_links(db, corpus, proposal.vague)
                changes = record_changes(db, corpus, len(proposal.queue), counts)
                save_report_settings(db, (proposal.threshold, options.max_similarity), proposal.scope or "",
                                     corpus.languages_line() or "")
            with timed(timings, "impact", options.progress):
                impact = measure_impact(db, options.approved_only, corpus.site)
        with timed(timings, "export", options.progress, "CSV, with each suggestion's gain"):
            counts["rows"] = export_csv(db, csv_path)  # after the impact: the CSV shows each suggestion's gain
            export_cannibalization(cannibalised, cannibalization_csv)
            export_vague_links(vague, vague_csv)
        with timed(timings, "report", options.progress):
            report = write_report(db, impact, db_path.with_suffix(".report.html"))
    return Result(corpus, proposal, timings, counts, csv_path, cannibalization_csv, impact, report, changes, crawl_note(db),
                  vague_csv)


@contextmanager
def _set_aside_from_the_collector() -> Iterator[Callable[[], None]]:
    """gc.freeze, to call when what lives to the end of the analysis is made (the corpus, the queue: no cycles among
    them), so that Python's cycle collector stops walking it at every full collection (~1.2 of its 2.1 s in the
    100,000-page command, BENCHMARKS.md); all is handed back at the end, for a batch's next site."""
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
