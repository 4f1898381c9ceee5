"""Stage 4, candidates: neighbour pairs minus the links that exist, within the similarity band.

Pairs come from both neighbour lists of the index stage (by meaning and by words) and from
mentions (the source's text holds most of the target's title words, or of one of its headings: see
pipeline.mentioned_pairs); each gets both similarities.
A pair already linked from the source's main content is dropped; one linked only from nav, footer
or sidebars stays (that is not an editorial link) and is flagged. A listing page (load.py) is no
source: its text is generated, a list of other pages, with no sentence an editor could link from.
Pairs below the threshold are unrelated, unless the source mentions the target (an editor links a
mention whatever the rest of the page is about) or the target is one of the source's CLOSEST_BY_WORDS
nearest pages by words (the model reads a page's first 256 tokens, the keywords all of it); of a target
whose title is one word, only where the source writes that word as the title does (named_as_written). A
source's peers are its PEERS nearest pages by meaning: a page that PEERS_LINKING of them link from
their main content is a candidate too, over the threshold (pages like the source link there: std's
40-odd `atomic_*` intrinsics all link `sync/atomic`, which many of them do not have among their 30
nearest), and every candidate carries how many peers link its target (score.py weighs it). Pairs
above the upper bound are near-duplicates, reported as cannibalisation instead of suggested. Both
bounds apply to the embedding similarity. Two pages whose main texts are the same are duplicates whatever their titles
make of that similarity (a print version, a book's index page that repeats its first chapter, a type
re-exported under two paths: 0.83 for Rust's `ffi::c_int` and `os::raw::c_int`), and are reported
the same way. A source is offered one page of such a set (the one nearest it by URL path, then the one most pages
link), and none if it already links one of them (one_copy_each). On a site in several languages, a page is paired only
with pages of its own language (and region), or of none declared (load.same_language): a link into another language
is no link to suggest, and a page's translation no cannibalisation.

Pairs travel as arrays (a large site has millions); a pair is coded as source * pages + target.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from urllib.parse import urlsplit

import numpy as np

from analysis.compiled import compiled
from analysis.index import THREADS, Keywords, vector_dots
from analysis.load import Corpus, Pair, among, distinct, pair_codes
from analysis.locality import in_visit_order, source_starts
from analysis.scope import InScope
from analysis.words import WORD, is_stop_word, starts_a_sentence

Neighbours = tuple[np.ndarray, np.ndarray]  # (similarities, indices), one row per page
PAIRS_AT_ONCE = 65_536  # pairs a step of the similarities, THREADS steps at once
CLOSEST_BY_WORDS = 4  # a source's nearest pages by words that are candidates whatever their embedding similarity
PEERS = 20  # a source's nearest pages by meaning whose content links are evidence (Candidate.peer_links)
PEERS_LINKING = 3  # a page that this many of a source's peers link is a candidate


@dataclass
class Candidate:
    source: int
    target: int
    similarity: float  # cosine of the embeddings
    lexical: float  # TF-IDF cosine of the texts
    template_linked: bool  # the source links to the target, but only from its template
    mentioned: bool = False  # the source's text holds most of the words of the target's title or of one of its headings
    peer_links: int = 0  # how many of the source's PEERS link the target from their main content


@dataclass
class Candidates:
    """Candidate pairs as columns (the fields of Candidate), sorted by source, then target."""

    source: np.ndarray
    target: np.ndarray
    similarity: np.ndarray
    lexical: np.ndarray
    template_linked: np.ndarray
    mentioned: np.ndarray
    peer_links: np.ndarray

    @classmethod
    def of(cls, rows: Iterable[Candidate]) -> Candidates:
        rows = sorted(rows, key=lambda row: (row.source, row.target))
        types = (np.int64, np.int64, np.float32, np.float32, bool, bool, np.uint8)
        return cls(*(np.array([getattr(row, column.name) for row in rows], dtype=kind) for column, kind in zip(fields(cls), types)))

    def __len__(self) -> int:
        return len(self.source)

    def release(self) -> None:
        """Empty every column, freeing it for the caller that spent them (score.rank) while others still hold this object."""
        for column in fields(self):
            setattr(self, column.name, getattr(self, column.name)[:0].copy())

    def __iter__(self) -> Iterator[Candidate]:
        columns = [getattr(self, column.name).tolist() for column in fields(self)]
        return (Candidate(*row) for row in zip(*columns))


def neighbour_codes(neighbours: np.ndarray, pages: int, first: int | None = None) -> np.ndarray:
    """Each row's neighbours (row i: page i's) as pair codes, without the page itself and missing (-1) entries; with
    first, only each row's first that many of them."""
    sources = np.arange(len(neighbours), dtype=np.int64)[:, None]
    keep = (neighbours >= 0) & (neighbours != sources)
    if first is not None:
        keep &= np.cumsum(keep, axis=1) <= first
    return np.broadcast_to(sources, neighbours.shape)[keep] * pages + neighbours[keep]


def with_peer_links(pairs: np.ndarray, links: np.ndarray, neighbours: np.ndarray, pages: int,
                    least: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (sorted codes) and those whose target at least `least` of their source's PEERS link, merged, sorted, and
    how many peers link each one's target. links: the content links as sorted codes; neighbours: pages' neighbours by
    meaning (row i: page i's; itself and missing (-1) entries are passed over)."""
    starts = source_starts(links, pages, pages)
    gathered = _gathered(neighbours, starts)  # links of each source's peers, repeats counted
    room = len(pairs) + int((gathered // least).sum())  # a pair that peers add takes `least` of their links at least
    merged, counts = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.uint8)  # pages never written take no memory
    size = _with_peer_links(neighbours, starts, links % pages, pages, pairs, least, merged, counts,
                            np.empty(int(gathered.max(initial=0)), dtype=np.int64))
    return merged[:size], counts[:size]


@compiled
def _peers(neighbours: np.ndarray, source: int, peers: np.ndarray) -> int:
    """Put the source's first PEERS neighbours (not itself, none missing) in peers; return how many there are."""
    count = 0
    for page in neighbours[source]:
        if count == PEERS:
            break
        if page >= 0 and page != source:
            peers[count] = page
            count += 1
    return count


@compiled
def _gathered(neighbours: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """How many links each source's peers make in all."""
    sizes, peers = np.zeros(len(neighbours), dtype=np.int64), np.empty(PEERS, dtype=np.int64)
    for source in range(len(neighbours)):
        for peer in peers[:_peers(neighbours, source, peers)]:
            sizes[source] += starts[peer + 1] - starts[peer]
    return sizes


@compiled
def _with_peer_links(neighbours: np.ndarray, starts: np.ndarray, targets: np.ndarray, pages: int, pairs: np.ndarray,
                     least: int, merged: np.ndarray, counts: np.ndarray, linked: np.ndarray) -> int:
    """Write with_peer_links' pairs and counts into merged and counts, source by source; return how many there are. A
    source's peers' link targets are gathered in `linked` and sorted: each target's run is its count."""
    at, size, peers = 0, 0, np.empty(PEERS, dtype=np.int64)
    for source in range(pages):
        gathered = 0
        if source < len(neighbours):
            for peer in peers[:_peers(neighbours, source, peers)]:
                for link in range(starts[peer], starts[peer + 1]):
                    linked[gathered] = targets[link]
                    gathered += 1
            linked[:gathered].sort()
        run = 0
        while run < gathered:
            last = run + 1
            while last < gathered and linked[last] == linked[run]:
                last += 1
            if linked[run] != source:  # a page's peers linking it make no pair of it with itself
                code, count = source * pages + linked[run], last - run
                at, size = _unlinked_before(pairs, at, code, merged, counts, size)
                given = at < len(pairs) and pairs[at] == code
                if given or count >= least:
                    merged[size], counts[size] = code, count
                    size += 1
                at += given
            run = last
        at, size = _unlinked_before(pairs, at, (source + 1) * pages, merged, counts, size)
    return size


@compiled
def _unlinked_before(pairs: np.ndarray, at: int, code: int, merged: np.ndarray, counts: np.ndarray,
                     size: int) -> tuple[int, int]:
    """Copy the given pairs from place `at` up to code (not included), linked by no peer, to merged[size:]; return the
    places in both after them."""
    while at < len(pairs) and pairs[at] < code:
        merged[size], counts[size] = pairs[at], 0
        size += 1
        at += 1
    return at, size


def cosines(vectors: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The embedding similarity of each pair (code source * pages + target, by source; unit vectors: the inner product,
    as numpy's (a * b).sum(axis=1) gives it, to the bit: index.vector_dots), PAIRS_AT_ONCE pairs a step, THREADS steps at
    once, sources in locality.py's order, each step's sources and targets made from its codes (every pair's, 0.7 GB at
    1,000,000 pages, were find_candidates' peak)."""
    similarity = np.empty(len(pairs), dtype=np.float32)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    pages = len(vectors)

    def dots(rows: np.ndarray) -> np.ndarray:
        part = np.empty(len(rows), dtype=np.float32)
        vector_dots(vectors, *np.divmod(pairs[rows], pages), part)
        return part

    in_visit_order(source_starts(pairs, pages, pages), pairs, pages, PAIRS_AT_ONCE, THREADS, dots, similarity)
    return similarity


def same_texts(corpus: Corpus, pairs: np.ndarray, sets: np.ndarray | None = None) -> np.ndarray:
    """Which pairs' two main texts are the same, character for character (sets: PageTexts.copy_sets, if the caller
    has them)."""
    sets = corpus.texts.copy_sets() if sets is None else sets
    if not (sets >= 0).any():  # nearly every site: no pass over the pairs
        return np.zeros(len(pairs), dtype=bool)
    first, second = sets[pairs // len(corpus)], sets[pairs % len(corpus)]
    return (first >= 0) & (first == second)


def one_copy_each(corpus: Corpus, pairs: np.ndarray, keep: np.ndarray, sets: np.ndarray) -> None:
    """Of the kept pairs (sorted codes), unkeep those whose source would be offered a second page of one text (sets:
    PageTexts.copy_sets), or a copy of a page it links from its main content: a type re-exported under two paths, a
    product in two colours. A link to a second copy adds nothing a reader can use. The copy kept is the one nearest the
    source on the site (the most URL path segments in common: std's `ffi::c_long` links `ffi::c_int`, `os::raw::c_long`
    links `os::raw::c_int`), then the one most pages link (the site's own), then the first."""
    pages = len(corpus)
    if not (sets >= 0).any():
        return
    rows = np.flatnonzero(keep & (sets[pairs % pages] >= 0))
    link_sources, link_targets = np.divmod(corpus.content_codes, pages)
    linked = sets[link_targets] >= 0
    linked_sets = set(zip(link_sources[linked].tolist(), sets[link_targets[linked]].tolist()))
    inbound, chosen = corpus.inbound, {}
    for row, (source, target) in zip(rows.tolist(), zip(*(part.tolist() for part in np.divmod(pairs[rows], pages)))):
        own = (source, int(sets[target]))
        if own in linked_sets:
            keep[row] = False
            continue
        other = chosen.setdefault(own, (row, target))
        if other[0] != row:
            loser, winner = sorted([other, (row, target)], key=lambda kept: (
                _segments_in_common(corpus.urls[source], corpus.urls[kept[1]]), inbound[kept[1]], -kept[1]))
            keep[loser[0]] = False
            chosen[own] = winner


def _segments_in_common(url: str, other: str) -> int:
    """How many path segments two URLs of one site share from the start."""
    first, second = urlsplit(url).path.split("/")[:-1], urlsplit(other).path.split("/")[:-1]
    return next((at for at, (one, two) in enumerate(zip(first, second)) if one != two), min(len(first), len(second)))


def named_as_written(corpus: Corpus, pairs: np.ndarray, title_words: np.ndarray) -> np.ndarray:
    """Per pair code, whether its target may be named by its words: False where the target's title has one word (of
    title_words, each page's: Vocabulary.distinct_terms) and the source never writes it as the title does (its case,
    and not only first in a sentence, where any word takes a capital). Asked of the pairs below the threshold, which the
    model finds unrelated: one word is as often a common word in another sense as the page's name ("Longer contact
    extracts more" names no "Contact Us", "the file size" no GIMP's File menu, "the framework folder" no CMake's FOLDER
    property), and only its case tells which."""
    pages = len(corpus)
    named = title_words[pairs % pages] > 1
    asked = np.flatnonzero(~named)
    sources, targets = np.divmod(pairs[asked], pages)
    read = np.unique(sources).tolist()
    texts = dict(zip(read, corpus.texts.many(read)))
    for at, source, target in zip(asked.tolist(), sources.tolist(), targets.tolist()):
        word = next((word for word in WORD.findall(corpus.titles[target]) if not is_stop_word(word)), None)
        if word is not None:
            named[at] = _written_as(word, texts[source])
    return named


def _written_as(word: str, text: str) -> bool:
    """Whether the text writes the word as it is written (case and all), as a whole word, and not only first in a
    sentence where it is a capitalised common word."""
    if word not in text:  # most never write it so: no pattern made (9,278 pairs at 100,000 synthetic pages, 0.46 -> 0.09 s)
        return False
    capitalised = word[:1].isupper() and word[1:].islower()
    return any(not capitalised or not starts_a_sentence(text, match.start())
               for match in re.finditer(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", text))


def find_candidates(corpus: Corpus, vectors: np.ndarray, by_meaning: Neighbours, keywords: Keywords,
                    by_words: Neighbours, mentions: np.ndarray, threshold: float, max_similarity: float,
                    excluded: set[Pair] = frozenset(), allowed: InScope | None = None
                    ) -> tuple[Candidates, list[tuple[int, int, float]]]:
    """(candidates, cannibalisation pairs (a, b, similarity) with a < b) from each page's neighbours and mentions (sorted
    pair codes: pipeline.mentioned_pairs); with allowed (--exclude and --targets: scope.py), only the pairs from a page
    it allows as a source to one it allows as a target."""
    pages = len(corpus)
    with ThreadPoolExecutor(1) as beside:  # the titles' words counted while the pairs are sorted and merged on one core
        title_words = beside.submit(lambda: keywords.vocabulary.distinct_terms(corpus.titles)[1])
        pairs, linked_by_peers = with_peer_links(
            distinct(np.concatenate([neighbour_codes(by_meaning[1], pages), neighbour_codes(by_words[1], pages), mentions])),
            corpus.content_codes, by_meaning[1], pages, PEERS_LINKING)
    if corpus.multilingual:  # a page and one in another language: neither a link to suggest nor cannibalisation
        one_language = corpus.one_language(pairs)
        pairs, linked_by_peers = pairs[one_language], linked_by_peers[one_language]
    similarity = cosines(vectors, pairs)
    mentioned = among(pairs, mentions)
    closest_by_words = distinct(neighbour_codes(by_words[1], pages, CLOSEST_BY_WORDS))
    related = (similarity >= threshold) | mentioned | among(pairs, closest_by_words)
    below = related & (similarity < threshold)
    related[below] = named_as_written(corpus, pairs[below], title_words.result())
    del below
    sets = corpus.texts.copy_sets()
    duplicate = (related & (similarity > max_similarity)) | same_texts(corpus, pairs, sets)
    keep = related & ~duplicate
    del related
    for linked in (corpus.content_codes, pair_codes(excluded, pages)):
        keep &= ~among(pairs, linked)
    keep &= ~corpus.listings[pairs // pages]
    if allowed is not None:
        keep &= allowed.sources[pairs // pages] & allowed.targets[pairs % pages]
    one_copy_each(corpus, pairs, keep, sets)
    sources, targets = np.divmod(pairs[duplicate], pages)
    first, second = np.minimum(sources, targets), np.maximum(sources, targets)
    unique, where = np.unique(first * pages + second, return_index=True)
    cannibalised = list(zip((unique // pages).tolist(), (unique % pages).tolist(), similarity[duplicate][where].tolist()))
    # the columns of every pair go before the kept pairs' are made, and those before their keyword similarities: each
    # set of columns is held alone (BENCHMARKS.md, "Analysis")
    pairs, similarity, mentioned, linked_by_peers = pairs[keep], similarity[keep], mentioned[keep], linked_by_peers[keep]
    del keep
    template_linked = among(pairs, corpus.template_codes)
    source, target = np.divmod(pairs, pages)
    del pairs
    return Candidates(source, target, similarity, keywords.similarity(source, target), template_linked, mentioned,
                      linked_by_peers), cannibalised
