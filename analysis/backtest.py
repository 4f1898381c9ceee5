"""Backtest: hide some of the site's own editorial links, analyse as if they did not exist, count what comes back.

An editorial link sits in a sentence of a page's main content, between two candidate pages; links
repeated from many pages (boilerplate), code cross-references (`Vec::push`) and links between two copies
of one page are not editorial.
Hidden links keep their anchor text in the page, as after an editor removed the link. A source
that links one page more than once (by two of its URLs, or with two texts) has all those links
hidden together, and a suggestion's anchor agrees with the editor if it agrees with any of their
texts. The same hidden links are scored for the engine and two baselines:

- seed: the pipeline this project started from: title + the first 2,000 characters of the
  tag-stripped HTML, a dense cosine matrix, threshold 0.55, 4 per page, the title as anchor;
- tfidf: TF-IDF cosine over the same titles and whole main texts the engine reads, 4 per page.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import sqlite_utils

from analysis.candidates import same_texts
from analysis.embed import embed_pages
from analysis.load import Corpus, load_corpus, resolver
from analysis.pipeline import Options, propose
from analysis.scope import InScope, Scope
from linkspider.db import open_existing, utc_now

SEED_THRESHOLD = 0.55
SWEEP = [round(0.2 + 0.05 * step, 2) for step in range(9)]  # thresholds tried for the best balance
CODE_LIKE = re.compile(r"::|\(\)|[_`]|^\S*[a-z][A-Z]\S*$|^\S+\.\S+$")
A_WORD = re.compile(r"\w")  # an anchor without one ("<<", "?", "→") is a button, not a phrase an editor linked
MIN_CONTEXT_WORDS = 6


class BacktestError(ValueError):
    """The site has too few editorial links to measure anything."""


@dataclass
class HiddenLink:
    """A source's editorial link to a page, with every other link of its content to that page: hidden together."""

    source: str
    resolved: str  # the candidate page the links stand for
    targets: tuple[str, ...]  # the URLs they link it by, as linked (one may redirect or canonicalise to it)
    anchors: tuple[str, ...]  # the texts they link it with, the editorial link's first


@dataclass
class Score:
    method: str
    seed: int
    hidden: int
    suggestions: int  # made from pages that had hidden links
    hits: int
    recall: float
    reachable_recall: float  # hits / hidden links that fit under the per-page cap
    hit_rate: float  # hits / suggestions from pages that had hidden links
    anchor_agreement: float  # hits whose anchor matches one of the editor's (equal, or half its words shared)
    top_target_share: float  # the largest share of the whole queue that goes to one target
    threshold: float | None = None


def editorial_links(db: sqlite_utils.Database, corpus: Corpus) -> list[HiddenLink]:
    """One link per (source, target) pair that an editor wrote into a sentence of the main content, in words (no
    button such as texinfo's "[ << ] [ < ] [ Up ] [ > ] [ >> ]" row, which crawls as content), but between two
    copies of one page (the same main text: a type re-exported under two paths, a print version): to the engine those
    are one page, cannibalisation and never a suggestion (candidates.find_candidates); they want a canonical, not a
    link, so no method is scored on them. Nor on a link between two languages (a language switcher written into the
    text): the engine pairs pages within a language.

    Each carries the pair's other content links: the URLs they are written with ("/post" beside "/post/": hiding one,
    the pair would stay linked by the other, and no method could find it) and their texts (an editor who linked
    "another" and "style team" to one page linked both, and "style team" agrees)."""
    resolve, index = resolver(db), corpus.index
    rows = [(source, target, resolve.get(target, target), anchor, context) for source, target, anchor, context in db.execute(
        "SELECT links.source, links.target, links.anchor, links.context FROM links JOIN pages ON pages.url = links.source "
        "WHERE links.region = 'content' AND links.external = 0 AND pages.gone = 0 ORDER BY links.source, links.position"
    )]
    repeated = Counter((resolved, context) for _, _, resolved, _, context in rows)
    boilerplate = max(3, len(corpus) // 20)
    by_anchor = Counter((resolved, anchor.lower()) for _, _, resolved, anchor, _ in rows)
    targets, anchors = defaultdict(dict), defaultdict(dict)  # by pair, in the page's order, each once
    for source, target, resolved, anchor, _ in rows:
        targets[source, resolved][target] = None
        if A_WORD.search(anchor):
            anchors[source, resolved][anchor] = None
    links: dict[tuple[str, str], HiddenLink] = {}
    for source, _, resolved, anchor, context in rows:
        if source not in index or resolved not in index or resolved == source or (source, resolved) in links:
            continue
        if len((context or "").split()) < MIN_CONTEXT_WORDS or len(anchor) >= 0.8 * len(context or ""):
            continue  # a link on a line of its own, not in a sentence
        if (repeated[resolved, context] > 2 or by_anchor[resolved, anchor.lower()] > boilerplate or CODE_LIKE.search(anchor)
                or not A_WORD.search(anchor)):
            continue
        others = (text for text in anchors[source, resolved] if text != anchor)
        links[source, resolved] = HiddenLink(source, resolved, tuple(targets[source, resolved]), (anchor, *others))
    pairs = np.array([index[source] * len(corpus) + index[resolved] for source, resolved in links], dtype=np.int64)
    return [link for link, copies, kept in zip(links.values(), same_texts(corpus, pairs), corpus.one_language(pairs))
            if kept and not copies]


def hidden_links(links: list[HiddenLink], share: float, seed: int) -> list[HiddenLink]:
    """The round's share of the links to hide: those that rank first by a hash of the seed and the link's own paths.
    A link's place depends on itself alone, not on the host (a local crawl's port changes) nor on the other links: a
    re-crawl that gains or loses a few editorial links hides the same others, so two crawls' figures compare. (A
    sample of the list, as before, drew other links altogether: rustblog's anchor agreement moved 0.492 -> 0.453 for
    two links fewer, with the same suggestions; BENCHMARKS.md, "Quality".)"""
    def rank(link: HiddenLink) -> bytes:
        return hashlib.blake2b(f"{seed}\n{_path(link.source)}\n{_path(link.resolved)}".encode(), digest_size=8).digest()
    return sorted(links, key=rank)[:max(1, round(share * len(links)))]


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def agrees_with_any(suggested: str, editors: tuple[str, ...]) -> bool:
    """The suggested anchor agrees with one of the texts the editor linked the pair with (anchors_agree)."""
    return any(anchors_agree(suggested, editor) for editor in editors)


def anchors_agree(suggested: str, editor: str) -> bool:
    """Equal, or at least half of the suggested anchor's words are in the editor's anchor."""
    ours, theirs = set(re.findall(r"\w+", suggested.lower())), set(re.findall(r"\w+", editor.lower()))
    return suggested.lower() == editor.lower() or (bool(ours) and len(ours & theirs) >= len(ours) / 2)


def score(method: str, seed: int, corpus: Corpus, hidden: list[HiddenLink], pairs: dict[tuple[int, int], str],
          max_per_page: int, threshold: float | None = None) -> Score:
    """Compare proposed pairs (with their anchors) to the hidden links."""
    index = corpus.index
    hidden_pairs = {(index[link.source], index[link.resolved]): link.anchors for link in hidden}
    sources = {source for source, _ in hidden_pairs}
    hits = [pair for pair in pairs if pair in hidden_pairs]
    made = sum(1 for source, _ in pairs if source in sources)
    per_source = Counter(source for source, _ in hidden_pairs)
    reachable = sum(min(count, max_per_page) for count in per_source.values())
    agree = sum(1 for pair in hits if agrees_with_any(pairs[pair], hidden_pairs[pair]))
    top_target = max(Counter(target for _, target in pairs).values(), default=0)
    return Score(method, seed, len(hidden), made, len(hits), _ratio(len(hits), len(hidden)), _ratio(len(hits), reachable),
                 _ratio(len(hits), made), _ratio(agree, len(hits)), _ratio(top_target, len(pairs)), threshold)


def run_backtest(db_path: str | Path, options: Options, share: float = 0.2, seeds: list[int] = (1,),
                 calibrate: bool = False) -> tuple[list[Score], float]:
    """Scores of the engine and both baselines for each seed, and the threshold with the best balance."""
    db = open_existing(db_path)
    full = load_corpus(db, options.min_words, languages=not options.all_languages)
    scope = Scope(options.exclude, options.targets)
    links = editorial_links(db, full)
    if scope:  # the links the analysis may propose: from pages it may link from, to pages it may link to
        allowed, index = scope.of(full.urls), full.index
        links = [link for link in links if allowed.sources[index[link.source]] and allowed.targets[index[link.resolved]]]
    if len(links) < 5:
        raise BacktestError(f"only {len(links)} editorial links on this site: too few to backtest")
    scores: list[Score] = []
    sweep: dict[float, list[Score]] = defaultdict(list)
    quiet = Options(**{**asdict(options), "progress": False})  # the stages are said in the first round only
    for round_number, seed in enumerate(seeds, 1):
        if options.progress:
            print(f"backtest round {round_number} of {len(seeds)} (seed {seed})", file=sys.stderr, flush=True)
        hidden = hidden_links(links, share, seed)
        unlinked = {(link.source, target) for link in hidden for target in link.targets}
        corpus = load_corpus(db, options.min_words, hidden=unlinked, languages=not options.all_languages)
        proposal = propose(db, corpus, options if round_number == 1 else quiet, {})
        engine = {(item.source, item.target): item.anchor.text for item in proposal.queue}
        scores.append(score("engine", seed, corpus, hidden, engine, options.max_per_page, proposal.threshold))
        allowed = scope.of(corpus.urls) if scope else None  # the baselines keep to the same scope
        scores.append(score("seed", seed, corpus, hidden, seed_pipeline(db, corpus, options, allowed), options.max_per_page,
                            SEED_THRESHOLD))
        scores.append(score("tfidf", seed, corpus, hidden, tfidf_baseline(corpus, options.max_per_page, allowed),
                            options.max_per_page))
        for threshold in SWEEP:
            trial = propose(db, corpus, Options(**{**asdict(quiet), "threshold": threshold}), {})
            pairs = {(item.source, item.target): item.anchor.text for item in trial.queue}
            sweep[threshold].append(score("engine", seed, corpus, hidden, pairs, options.max_per_page, threshold))
    best = max(SWEEP, key=lambda t: (_balance(sweep[t]), -abs(t - scores[0].threshold)))
    save(db, scores, share, best, options.model if calibrate else None)
    return scores, best


def seed_pipeline(db: sqlite_utils.Database, corpus: Corpus, options: Options,
                  allowed: InScope | None = None) -> dict[tuple[int, int], str]:
    """The naive pipeline: raw page text, a dense n x n cosine matrix, a fixed threshold, the title as anchor."""
    stripped = dict(db.execute("SELECT url, stripped_html FROM pages WHERE status = 200 AND gone = 0"))
    texts = [f"{title} {stripped.get(url) or ''}" for url, title in zip(corpus.urls, corpus.titles)]
    hashes = [hashlib.sha1(text.encode()).hexdigest() for text in texts]
    vectors = embed_pages(db, corpus.urls, texts, hashes, options.model, options.device, progress=False,
                          recipe="seed-baseline", backend=options.backend).vectors
    return _top_pairs(corpus, vectors @ vectors.T, options.max_per_page, SEED_THRESHOLD, allowed)


def tfidf_baseline(corpus: Corpus, per_page: int, allowed: InScope | None = None) -> dict[tuple[int, int], str]:
    """Keyword similarity on the engine's own text: TF-IDF cosine, the best few per page (scikit-learn's, imported here:
    1.6 s that an analysis without --backtest does not spend)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [f"{title}\n{text}" for title, text in zip(corpus.titles, corpus.texts)]
    matrix = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts)
    return _top_pairs(corpus, (matrix @ matrix.T).toarray(), per_page, 0.0, allowed)


def _top_pairs(corpus: Corpus, similarity: np.ndarray, per_page: int, threshold: float,
               allowed: InScope | None = None) -> dict[tuple[int, int], str]:
    """Each source's best per_page unlinked targets at the threshold or above (only those allowed, with a scope)."""
    pairs, linked = {}, corpus.linked_pairs()
    sources, targets = (allowed.sources, allowed.targets) if allowed else (np.ones(len(corpus), dtype=bool),) * 2
    for source in np.flatnonzero(sources).tolist():
        row = similarity[source]
        ranked = [t for t in np.argsort(-row)
                  if t != source and targets[t] and (source, t) not in linked and row[t] >= threshold]
        for target in ranked[:per_page]:
            pairs[source, int(target)] = corpus.titles[target]
    return pairs


def save(db: sqlite_utils.Database, scores: list[Score], share: float, best: float, calibrate_model: str | None) -> None:
    now = utc_now()
    with db.atomic():
        db["backtests"].insert_all(({"run_at": now, "share": share, "best_threshold": best, **asdict(s)} for s in scores),
                                   alter=True)
        if calibrate_model:
            db["meta"].insert({"key": f"threshold:{calibrate_model}", "value": str(best)}, replace=True)


def table(scores: list[Score], best: float) -> str:
    """Mean over seeds per method, engine first."""
    lines = [f"{'method':8} {'hidden':>6} {'recall':>7} {'reachable':>9} {'hit rate':>8} {'anchors':>7} {'top target':>10}"]
    for method in ("engine", "seed", "tfidf"):
        rows = [s for s in scores if s.method == method]
        mean = {field: sum(getattr(s, field) for s in rows) / len(rows)
                for field in ("hidden", "recall", "reachable_recall", "hit_rate", "anchor_agreement", "top_target_share")}
        lines.append(f"{method:8} {mean['hidden']:6.0f} {mean['recall']:7.3f} {mean['reachable_recall']:9.3f} "
                     f"{mean['hit_rate']:8.3f} {mean['anchor_agreement']:7.3f} {mean['top_target_share']:10.3f}")
    lines.append(f"(means over {len(scores) // 3} round(s); anchors: share of hits whose anchor agrees with the editor's; "
                 "top target: largest share of the queue one target takes)")
    lines.append(f"best threshold on this site (balance of recall and hit rate): {best:.2f}")
    return "\n".join(lines)


def _balance(scores: list[Score]) -> float:
    """F1 of recall and hit rate, averaged over seeds."""
    return sum(2 * s.recall * s.hit_rate / (s.recall + s.hit_rate) if s.recall + s.hit_rate else 0.0 for s in scores) / len(scores)


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0
