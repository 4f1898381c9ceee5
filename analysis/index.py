"""Stage 3, index: the nearest pages of every page, by meaning (FAISS) and by words (TF-IDF).

Never an n x n matrix. Dense vectors: exact inner-product search (vectors are unit length, so the
inner product is cosine similarity) up to EXACT_LIMIT pages, IVF above it (FAISS's k-means lists, each
page compared with the pages of its few nearest lists, a list at a time), whose memory grows linearly
with the number of pages. Words: TF-IDF cosine, computed a block of rows at a time.
The two disagree usefully: embeddings of the opening of a page miss a specific term deep in it
that an editor linked on; keywords miss paraphrase. EXACT_LIMIT is set by measurement (BENCHMARKS.md).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import faiss
import numpy as np
from scipy import sparse

from analysis.compiled import compiled
from analysis.load import distinct
from analysis.locality import in_visit_order, source_starts
from analysis.memory import return_freed_memory
from analysis.words import STOP, Tokens, TokenFile, Vocabulary

EXACT_LIMIT = 10_000  # exact costs ~1 CPU-s here, then grows with pages squared (bench/neighbours.py)
IVF_LISTS_PER_ROOT = 2  # k-means lists = this x sqrt(pages): ~n^1.5 work in all, lists found and lists searched balanced
IVF_PROBES = 4  # lists searched per page: its own and the next nearest
IVF_TRAIN_PER_LIST = 40  # k-means trained on a seeded sample of this many pages per list
IVF_ITERATIONS = 10
IVF_SEED = 1234
PRODUCT_CELLS = 1 << 24  # scores of one matrix product of best_of (64 MB of float32)
SHARE_SLACK = 1e-6  # shares of a name's weight are float32 sums: one a hair under the bound still reaches it
WEIGH_AT_ONCE = 1 << 20  # values of the TF-IDF matrix weighed a step (8 MB of temporaries)
THREADS = 2  # array work run at once: numpy and scipy release the GIL, so a second thread uses the second core
COLLOCATION_DICE = 0.12  # 2 x pair / (first + second word): editors cut 0-2% of such pairs (BENCHMARKS.md)
COLLOCATION_HEAD = 0.5  # of a pair's second word's uses that follow its first: "management" after "color" (BENCHMARKS.md)
COLLOCATION_MIN = 3  # times a pair is written before it may be a collocation
COLLOCATION_PAGES = 10_000  # pages whose pairs are counted (every n-th of a larger site): plenty for the pairs that recur


def build_index(vectors: np.ndarray) -> faiss.IndexFlatIP:
    """An exact inner-product index over unit vectors (the search up to EXACT_LIMIT pages)."""
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def centroids(vectors: np.ndarray) -> np.ndarray:
    """The IVF lists' centres, 2 x sqrt(pages) of them: FAISS's spherical k-means (as IndexIVFFlat trains its
    quantizer for inner product) over a seeded sample of IVF_TRAIN_PER_LIST pages a list."""
    pages, dim = vectors.shape
    lists = max(1, min(pages, round(IVF_LISTS_PER_ROOT * math.sqrt(pages))))
    clustering = faiss.Clustering(dim, lists)
    clustering.spherical = True
    clustering.seed = IVF_SEED
    clustering.niter = IVF_ITERATIONS
    clustering.min_points_per_centroid = 1  # the sample below is the one used, without faiss's warning
    clustering.max_points_per_centroid = 1 << 30
    sample = np.random.default_rng(IVF_SEED).choice(pages, min(pages, IVF_TRAIN_PER_LIST * lists), replace=False)
    clustering.train(np.ascontiguousarray(vectors[np.sort(sample)]), faiss.IndexFlatIP(dim))
    return faiss.vector_to_array(clustering.centroids).reshape(lists, dim)


def nearest(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(similarities, indices), each (pages, k'), best first; k' = min(k + 1, pages) to allow for the page itself.

    Up to EXACT_LIMIT pages, exact search (faiss.IndexFlatIP). Above, IVF: each page is compared with the pages of
    the IVF_PROBES k-means lists nearest to it (its own list is the nearest), list by list: the pages that probe a
    list against the pages filed in it, one matrix product, whose scores a compiled loop merges into each page's
    best (faiss.contrib.big_batch_search's scheme). FAISS's IndexIVFFlat compares a page with a list one vector at
    a time, and its bundled BLAS multiplies 3-4x slower than numpy's here: nearest() took 112-193 s at 1,000,000
    pages, and now 71.5, 32-46 of it FAISS's k-means (BENCHMARKS.md). Deterministic for a given input (among equal
    scores the lower page first). A page whose lists hold fewer than k' pages is searched again over all pages, so
    no row has a missing neighbour (index -1) unless there are fewer than k' pages.
    """
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    pages, want = len(vectors), min(k + 1, len(vectors))
    if pages <= EXACT_LIMIT:
        return build_index(vectors).search(vectors, want)
    centres = centroids(vectors)
    _, lists = best_of(vectors, centres, min(IVF_PROBES, len(centres)))
    similarities, indices = _search_lists(vectors, lists, want)
    short = np.flatnonzero((indices < 0).any(axis=1))
    if len(short):
        similarities[short], indices[short] = best_of(vectors[short], vectors, want)  # no copy of the vectors
    return similarities, indices


def nearest_within(vectors: np.ndarray, k: int, groups: np.ndarray, compatible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """nearest(), with each page's neighbours among the pages of the groups its own group may be paired with
    (compatible[a, b]: load.Corpus.language_groups): on a site in two languages, each page's in its own (a page and
    its translation are near neighbours with a multilingual model, and each would take another's place). Where every
    group goes with every other, nearest() itself; else one search per group, each row as wide as nearest's, -inf and
    -1 where a group's pages and those it goes with are fewer."""
    if compatible.all():
        return nearest(vectors, k)
    want = min(k + 1, len(vectors))
    similarities, indices = np.full((len(vectors), want), -np.inf, dtype=np.float32), np.full((len(vectors), want), -1)
    for group in np.unique(groups).tolist():
        members = np.flatnonzero(compatible[group][groups])
        found_similarities, found = nearest(vectors[members], k)
        rows = np.flatnonzero(groups[members] == group)
        similarities[members[rows], :found.shape[1]] = found_similarities[rows]
        indices[members[rows], :found.shape[1]] = np.where(found[rows] >= 0, members[found[rows]], -1)
    return similarities, indices


def best_of(queries: np.ndarray, base: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows of base), each (queries, want), best first: every query's exact nearest rows of base by inner
    product, PRODUCT_CELLS scores at a time."""
    everyone, step = np.arange(len(base)), max(1, PRODUCT_CELLS // max(1, len(base)))
    blocks = (np.arange(start, min(len(queries), start + step)) for start in range(0, len(queries), step))
    return _merged(((queries[block] @ base.T, block, everyone) for block in blocks), len(queries), want)


def _search_lists(vectors: np.ndarray, lists: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray]:
    """Each page's best `want` among the pages filed in its lists (lists[page]: the lists it probes, its own first)."""
    count = int(lists.max()) + 1
    filed = np.argsort(lists[:, 0], kind="stable")  # the pages of each list, list by list
    filed_bounds = np.searchsorted(lists[filed, 0], np.arange(count + 1))
    probing = np.argsort(lists.ravel(), kind="stable")  # the pages probing each list
    probing_bounds = np.searchsorted(lists.ravel()[probing], np.arange(count + 1))
    probing //= lists.shape[1]

    def products() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for number in range(count):
            queries = probing[probing_bounds[number]:probing_bounds[number + 1]]
            members = filed[filed_bounds[number]:filed_bounds[number + 1]]
            if len(queries) and len(members):
                yield vectors[queries] @ vectors[members].T, queries, members

    return _merged(products(), len(vectors), want)


def _merged(products: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], queries: int,
            want: int) -> tuple[np.ndarray, np.ndarray]:
    """Each of `queries` queries' best `want` (scores, rows; -inf and -1 where fewer), from products (scores, their
    queries, their members) merged in turn by keep_best."""
    scores = np.full((queries, want), -np.inf, dtype=np.float32)
    rows = np.full((queries, want), -1, dtype=np.int64)
    for product in products:
        keep_best(*product, scores, rows)
    return scores, rows


@compiled
def keep_best(scores: np.ndarray, queries: np.ndarray, members: np.ndarray, best: np.ndarray, best_rows: np.ndarray) -> None:
    """Merge scores[i, j] (query queries[i] against member members[j]) into each query's best so far: best[q] and
    best_rows[q], highest first, the lower row first among equal scores, -1 where none yet."""
    last = best.shape[1] - 1
    for row in range(len(queries)):
        query = queries[row]
        for column in range(len(members)):
            score, member = scores[row, column], members[column]
            if not _ahead(score, member, best[query, last], best_rows[query, last]):
                continue
            at = last
            while at > 0 and _ahead(score, member, best[query, at - 1], best_rows[query, at - 1]):
                best[query, at], best_rows[query, at] = best[query, at - 1], best_rows[query, at - 1]
                at -= 1
            best[query, at], best_rows[query, at] = score, member


@compiled
def _ahead(score: float, row: int, other_score: float, other_row: int) -> bool:
    """(score, row) comes before (other_score, other_row) in a best list: an empty place (-1), a lower score, or an
    equal score of a higher row."""
    return other_row < 0 or score > other_score or (score == other_score and row < other_row)


class Keywords:
    """TF-IDF vectors of the pages' texts: nearest pages by shared rare words, any pair's cosine, IDF.

    Columns are the term ids of :attr:`vocabulary`, which the anchor search tokenises with too. The fit also finds
    the site's collocations (:attr:`collocations`), the pairs of words it writes as one phrase.
    """

    BLOCK_CELLS = 4_000_000  # rows x pages of one block of similarities (16 MB of float32, reused)
    PAIRS_AT_ONCE = 65_536  # pairs a step of similarity()
    BLOCK_CHARACTERS = 1_000_000  # of texts tokenised at once by the fit (4 MB of code points)
    MENTION_PAGES = 2_048  # sources searched for mentions at once by each thread (their candidate names, with shares, in memory)

    def __init__(self, texts: Iterable[str], titles: Iterable[str] | None = None) -> None:
        """A page's words are its title's (if given) and its text's. texts may be made one at a time (a generator).

        When texts is a sequence (a list, PageTexts), the tokens of its texts are kept in a temporary file, so that the
        anchor search does not split the same texts again (text_tokens); if the file cannot be made or written (no
        writable TMPDIR, a full disk), it does.
        """
        self.vocabulary = Vocabulary()
        self._texts = texts if isinstance(texts, Sequence) else None
        self._tokens = self._token_file() if self._texts is not None else None
        pages = zip(texts) if titles is None else zip(titles, texts)
        parts = 1 if titles is None else 2  # texts a page
        terms_per_page, columns, counts = [], [], []  # a block of pages each
        pages_holding = np.zeros(0, dtype=np.int64)  # by term id
        pairs = _PairCounts(-(-len(texts) // COLLOCATION_PAGES) if isinstance(texts, Sequence) else 1)
        blocks = ([part for page in block for part in page] for block in _blocks(pages, self.BLOCK_CHARACTERS))

        def count_block(tokens: Tokens) -> None:
            nonlocal pages_holding
            block = len(tokens.counts) // parts  # pages
            if self._tokens is not None:
                self._keep(tokens, np.arange(parts - 1, block * parts, parts))
            content = tokens.ids != STOP
            page = np.repeat(np.arange(block * parts, dtype=np.int64) // parts, tokens.counts)[content]
            present, count = np.unique(page << 32 | tokens.ids[content], return_counts=True)  # (page, term), sorted
            terms_per_page.append(np.bincount(present >> 32, minlength=block))
            columns.append((present & 0xFFFFFFFF).astype(np.int32))
            counts.append(count.astype(np.float32))
            pages_holding = _added(pages_holding, np.bincount(columns[-1], minlength=len(self.vocabulary)))
            pairs.add(tokens, parts)

        with ThreadPoolExecutor(1) as after:  # a block counted, in order, while the next ones are identified
            waiting: deque[Future[None]] = deque()
            for tokens in self.vocabulary.tokenize_all(blocks, THREADS):
                waiting.append(after.submit(count_block, tokens))
                if len(waiting) > THREADS:  # no more blocks' tokens held than that
                    waiting.popleft().result()
            for counted in waiting:
                counted.result()
        return_freed_memory()  # the tokenising threads' freed blocks, before the columns are joined (-90 MB at 100k pages)
        rows = np.concatenate([np.zeros(0, dtype=np.int64), *terms_per_page])
        self.matrix: sparse.csr_matrix = sparse.csr_matrix(
            (_joined(counts, np.float32), _joined(columns, np.int32), np.concatenate([[0], np.cumsum(rows)])),
            shape=(len(rows), len(self.vocabulary)))
        self.pages = self.matrix.shape[0]
        self.document_frequency: np.ndarray = _added(pages_holding, np.zeros(len(self.vocabulary), dtype=np.int64))  # by term id
        self.idf: np.ndarray = _idf(self.document_frequency, self.pages)  # by term id
        _weigh(self.matrix, self.idf)
        self.collocations: np.ndarray = pairs.collocations()
        if self._tokens is not None:
            self._tokens.close_writing()

    @staticmethod
    def _token_file() -> TokenFile | None:
        """A file for the texts' tokens, or None where no temporary file can be made (no writable TMPDIR)."""
        try:
            return TokenFile()
        except OSError:
            return None

    def _keep(self, tokens: Tokens, texts: np.ndarray) -> None:
        """Write the tokens of these texts of a block to the file (none more, and none read back, if it fails)."""
        try:
            self._tokens.write(tokens, texts)
        except OSError:
            self._tokens = None

    def text_tokens(self, texts: Sequence[str], pages: list[int]) -> Tokens:
        """The tokens of these pages' texts: those the fit kept, if it read these very texts; else split anew."""
        if self._tokens is not None and texts is self._texts:
            return self._tokens.read(pages)
        return self.vocabulary.tokenize([texts[page] for page in pages])

    def idf_of_share(self, share: float) -> float:
        """The IDF of a word found on this share of the pages (scikit-learn's smoothed formula)."""
        return math.log((1 + self.pages) / (1 + share * self.pages)) + 1

    def topic_terms(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every page's most characteristic words, heaviest first (the first among equal weights), laid end to end:
        (starts, term ids, TF-IDF weights), page p's at starts[p]:starts[p + 1]. One compiled loop over the rows (an
        argsort a page in Python took a second at 100,000 pages)."""
        matrix = self.matrix
        kept = np.minimum(np.diff(matrix.indptr), count)
        starts = np.concatenate([[0], np.cumsum(kept)])
        places = _heaviest(matrix.indptr, matrix.data, starts)
        return starts, matrix.indices[places].astype(np.int64), matrix.data[places]

    def drop_matrix(self) -> None:
        """Free the TF-IDF matrix once the neighbours, mentions and pair similarities are made (~150 MB at 100,000
        pages, ~1.5 GB at 1,000,000): the anchor search then needs only the vocabulary, the IDF and the topic words
        it took first (AnchorFinder), and the rank stage, the peak, runs without it."""
        del self.matrix

    def nearest(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(similarities, indices) of each page's k + 1 most similar pages (itself included), best first."""
        pages = self.matrix.shape[0]
        k = min(k + 1, pages)
        block = max(1, min(self.BLOCK_CELLS // pages, math.ceil(pages / THREADS)))  # THREADS blocks at least
        similarities = np.zeros((pages, k), dtype=np.float32)
        indices = np.zeros((pages, k), dtype=np.int64)
        transposed = self.matrix.T.tocsr()  # once: a product with the CSC view would convert it for every block

        def fill(start: int) -> None:
            scores = (self.matrix[start:start + block] @ transposed).toarray()
            top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            top_scores = np.take_along_axis(scores, top, axis=1)
            order = np.argsort(-top_scores, axis=1)
            indices[start:start + block] = np.take_along_axis(top, order, axis=1)
            similarities[start:start + block] = np.take_along_axis(top_scores, order, axis=1)

        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(fill, range(0, pages, block)))
        return similarities, indices

    def mentions(self, names: list[str], min_share: float, common_share: float, owners: np.ndarray | None = None,
                 per_source: int | None = None, word_pages: int | None = None) -> np.ndarray:
        """Pair codes source * pages + target, sorted, where the source's text holds most of one of the target's names
        (names[i] is page owners[i]'s, page i's if not given: a title, or another name such as a heading).

        A name's word counts by its IDF; words on more than common_share of the pages are left out
        (they name nothing), so are names left with none. A source holding at least min_share of
        the remaining weight mentions the target, whatever its overall similarity. With per_source,
        a source keeps only that many of its mentions: the largest shares first, then the names of
        most weight (the rarest).

        Not a product of every name by every page, whose work grows with the square of the pages
        (8.4 s at 30,000 synthetic pages, BENCHMARKS.md): a source that mentions a name holds one of
        its rarer words, the ones left when its commonest words, together under min_share, are set
        aside, so only the pages holding one of those are candidates (a prefix filter: 8.1M of 70.6M
        postings there), and a candidate's commoner words are looked up only where the rarer ones
        leave its share undecided. Exact: the same pairs as the product. With word_pages, a rarer word
        on more pages than that is looked up but never searched by, and a source must hold a rarer
        word on fewer: the search's work then grows with the pages, not their square (a word on
        thousands of pages picks out no page, and searching by it was 35% of a 1,000,000-page site
        in 20 minutes).
        """
        owners = np.arange(len(names)) if owners is None else owners
        common, idf, pages = self.idf_of_share(common_share), self.idf, self.matrix.shape[0]
        terms_of, counts = self.vocabulary.distinct_terms(names)
        name_of = np.repeat(np.arange(len(names)), counts)
        kept = terms_of < len(idf)  # a word no page holds names nothing here
        kept[kept] = idf[terms_of[kept]] >= common
        terms_of, name_of = terms_of[kept], name_of[kept]
        counts = np.bincount(name_of, minlength=len(names))
        totals = np.bincount(name_of, weights=idf[terms_of], minlength=len(names))
        weights = (idf[terms_of] / totals[name_of]).astype(np.float32)
        order = np.lexsort((weights, name_of))  # each name's commonest (lightest) words first
        name_of, terms_of, weights = name_of[order], terms_of[order], weights[order]
        before = np.concatenate([[0.0], np.cumsum(weights, dtype=np.float64)])
        through = before[1:] - np.repeat(before[np.cumsum(counts) - counts], counts)  # each name's weight up to the word
        rarer = through >= min_share - SHARE_SLACK  # every word from the first that, with the commoner ones, reaches min_share
        if word_pages is not None:
            rarer &= self.document_frequency[terms_of] <= word_pages
        probe = sparse.csr_matrix((weights[rarer], (terms_of[rarer], name_of[rarer])), shape=(self.matrix.shape[1], len(names)))
        commoner = _Commoner(np.searchsorted(name_of[~rarer], np.arange(len(names) + 1)), terms_of[~rarer], weights[~rarer])
        self.matrix.sort_indices()  # a row's words in order, so that a block's (page, word) codes come sorted (a no-op here)
        with ThreadPoolExecutor(THREADS) as pool:  # blocks of sources, THREADS at once (scipy and numpy release the GIL)
            found = list(pool.map(lambda start: self._mentions_from(probe, commoner, start, min(start + self.MENTION_PAGES, pages),
                                                                    min_share, owners, totals, per_source),
                                  range(0, pages, self.MENTION_PAGES)))
        return distinct(np.concatenate([np.zeros(0, dtype=np.int64), *found]))

    def _mentions_from(self, probe: sparse.csr_matrix, commoner: _Commoner, start: int, end: int, min_share: float,
                       owners: np.ndarray, totals: np.ndarray, per_source: int | None) -> np.ndarray:
        """mentions() by the sources start to end - 1: the candidates' shares from their rarer words, completed where
        undecided (or to be ordered) by looking up their commoner words in the sources' rows (_commoner_shares)."""
        rows = self.matrix[start:end]
        held = sparse.csr_matrix((np.ones(len(rows.indices), dtype=np.float32), rows.indices, rows.indptr), shape=rows.shape)
        shares = (held @ probe).tocoo()
        source, name, share = shares.row.astype(np.int64) + start, shares.col.astype(np.int64), shares.data
        other = owners[name] != source  # a page's own names mention nothing
        # the whole share where the rarer words leave it undecided, or everywhere when it orders a source's mentions
        asked = np.flatnonzero(((share < min_share - SHARE_SLACK) | (per_source is not None)) & other)
        share[asked] += _commoner_shares(rows.indptr, rows.indices, rows.shape[1], source[asked] - start, name[asked],
                                         commoner.starts, commoner.terms, commoner.weights).astype(np.float32)
        keep = (share >= min_share - SHARE_SLACK) & other
        source, target, share, weight = source[keep], owners[name[keep]], share[keep], totals[name[keep]]
        # each source's best first, a target named twice by its best name; shares to four places, as float32 sums of the
        # same weights in another order differ in the last ones
        order = np.lexsort((target, -weight, -np.round(share, 4), source))
        source, codes = source[order], source[order] * self.matrix.shape[0] + target[order]
        once = np.sort(np.unique(codes, return_index=True)[1])  # each pair by its best name, still in that order
        source, codes = source[once], codes[once]
        if per_source is not None:
            codes = codes[np.arange(len(source)) - np.searchsorted(source, source) < per_source]
        return codes

    def similarity(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Cosine of each (source, target) pair (sorted by source), without forming any other pair: the dot product of
        the two rows, as scipy's row-wise multiply and sum gives it, to the bit (_row_dots), PAIRS_AT_ONCE pairs a step,
        THREADS steps at once, the sources in an order that keeps their targets' rows in cache (locality.py).
        Compiled, with no rows gathered (scipy's multiply copied every pair's two rows; BENCHMARKS.md, "Analysis")."""
        result = np.zeros(len(sources), dtype=np.float32)
        matrix = self.matrix
        matrix.sort_indices()  # products in column order, as scipy sums them (a no-op: the fit makes them sorted)
        longest = int(np.diff(matrix.indptr).max(initial=0))

        def dots(rows: np.ndarray) -> np.ndarray:
            part = np.empty(len(rows), dtype=np.float32)
            _row_dots(matrix.indptr, matrix.indices, matrix.data, matrix.shape[1], sources[rows], targets[rows], longest,
                      part)
            return part

        in_visit_order(source_starts(sources, self.pages), targets, self.pages, self.PAIRS_AT_ONCE, THREADS, dots, result)
        return result


@compiled
def _heaviest(indptr: np.ndarray, data: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The places in data of each CSR row's starts[r + 1] - starts[r] largest values, largest first, the first among
    equals first (as a stable argsort of the row's negated values), each row's kept in order by insertion."""
    places = np.empty(starts[-1], np.int64)
    for row in range(len(indptr) - 1):
        first, kept, size = starts[row], 0, starts[row + 1] - starts[row]
        for at in range(indptr[row], indptr[row + 1] if size else indptr[row]):
            if kept == size and data[at] <= data[places[first + size - 1]]:
                continue  # no heavier than the lightest kept: after it, as the sort would place it
            to = min(kept, size - 1)
            while to > 0 and data[places[first + to - 1]] < data[at]:
                places[first + to] = places[first + to - 1]
                to -= 1
            places[first + to] = at
            kept = min(kept + 1, size)
    return places


@compiled
def _commoner_shares(indptr: np.ndarray, indices: np.ndarray, columns: int, rows: np.ndarray, names: np.ndarray,
                     starts: np.ndarray, terms: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """For each (rows[k], names[k]), the weight of the name's commoner words (terms[starts[n]:starts[n + 1]], with
    weights) that row k of a CSR matrix (of this many columns) holds, summed in float64 in the words' order, as
    np.bincount sums them. The rows come in order: each row's columns are marked in one dense array while its names
    are answered (a binary search in the row, or among a block's every non-zero, cost several times more; a word and
    its answer made as arrays, 106M of them at 100,000 synthetic pages, twice as long as this loop)."""
    shares, marked, row = np.zeros(len(rows)), np.zeros(columns, np.bool_), -1
    for at in range(len(rows)):
        if rows[at] != row:
            if row >= 0:
                marked[indices[indptr[row]:indptr[row + 1]]] = False
            row = rows[at]
            marked[indices[indptr[row]:indptr[row + 1]]] = True
        total = 0.0
        for word in range(starts[names[at]], starts[names[at] + 1]):
            if marked[terms[word]]:
                total += np.float64(weights[word])
        shares[at] = total
    return shares


@compiled
def _row_dots(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, columns: int, sources: np.ndarray,
              targets: np.ndarray, longest: int, out: np.ndarray) -> None:
    """out[k]: the dot product of rows sources[k] and targets[k] of a CSR matrix with sorted columns (longest: the most
    non-zeros of a row), summed as scipy sums a row of the two rows' product: the non-zero float32 products in column
    order, the first plus numpy's pairwise sum of the others (np.add.reduceat). The pairs come by source: its row is
    spread into a dense one once, and each target's row looks its columns up there."""
    products, source_row = np.empty(longest + 1, np.float32), np.zeros(columns, np.float32)
    stack, lefts = _sum_stack()
    spread = -1
    for pair in range(len(sources)):
        if sources[pair] != spread:
            if spread >= 0:
                source_row[indices[indptr[spread]:indptr[spread + 1]]] = 0
            spread = sources[pair]
            source_row[indices[indptr[spread]:indptr[spread + 1]]] = data[indptr[spread]:indptr[spread + 1]]
        count = 0
        for at in range(indptr[targets[pair]], indptr[targets[pair] + 1]):  # every product written, the zeros overwritten
            product = source_row[indices[at]] * data[at]
            products[count] = product
            count += product != 0  # not a branch: which products are zero is unforeseeable (4.0 -> 2.5 s at 100,000 pages)
        out[pair] = products[0] + _pairwise_sum(products, 1, count - 1, stack, lefts) if count else np.float32(0)


@compiled
def vector_dots(vectors: np.ndarray, sources: np.ndarray, targets: np.ndarray, out: np.ndarray) -> None:
    """out[k]: the inner product of rows sources[k] and targets[k] of a float32 matrix, summed as numpy sums a row of
    their product ((a * b).sum(axis=1): float32 pairwise summation over the whole row), to the bit; without the
    copies of both rows that numpy's gather makes (candidates.cosines)."""
    products = np.empty(vectors.shape[1], np.float32)
    stack, lefts = _sum_stack()
    for pair in range(len(sources)):
        source, target = vectors[sources[pair]], vectors[targets[pair]]
        for at in range(len(products)):
            products[at] = source[at] * target[at]
        out[pair] = _pairwise_sum(products, 0, len(products), stack, lefts)


@compiled
def _sum_stack() -> tuple[np.ndarray, np.ndarray]:
    """The scratch of _pairwise_sum's halving, made once by a caller that sums many rows (an allocation a sum cost
    more than a short sum)."""
    return np.empty((3, 64), np.int64), np.empty(64, np.float32)  # 64 halvings: more than any count could need


@compiled
def _pairwise_sum(values: np.ndarray, start: int, count: int, stack: np.ndarray, lefts: np.ndarray) -> np.float32:
    """numpy's float32 pairwise summation of values[start:start + count] (its loops_utils.h): up to 128 values,
    _block_sum; above, the sum of the two halves (the first a multiple of 8), each summed so. The halving is walked
    with a stack of its own (_sum_stack): numba's cache crashes on a recursive function loaded back (a segfault here)."""
    if count <= 128:
        return _block_sum(values, start, count)
    starts, counts, stages = stack[0], stack[1], stack[2]
    starts[0], counts[0], stages[0], depth, returned = start, count, 0, 0, np.float32(0)
    while depth >= 0:
        first, size = starts[depth], counts[depth]
        half = size // 2 - (size // 2) % 8
        if size <= 128:  # a leaf: its sum goes back to the half that asked for it
            returned, depth = _block_sum(values, first, size), depth - 1
        elif stages[depth] == 0:  # sum the first half
            stages[depth], depth = 1, depth + 1
            starts[depth], counts[depth], stages[depth] = first, half, 0
        elif stages[depth] == 1:  # then the second
            lefts[depth], stages[depth], depth = returned, 2, depth + 1
            starts[depth], counts[depth], stages[depth] = first + half, size - half, 0
        else:  # both are in: this half's sum goes back
            returned, depth = lefts[depth] + returned, depth - 1
    return returned


@compiled
def _block_sum(values: np.ndarray, start: int, count: int) -> np.float32:
    """numpy's pairwise sum of at most 128 values: in order below 8, else eight partial sums joined as a tree."""
    if count < 8:
        total = np.float32(0)
        for at in range(start, start + count):
            total += values[at]
        return total
    p0, p1, p2, p3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    p4, p5, p6, p7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    for at in range(start + 8, start + count - count % 8, 8):
        p0, p1, p2, p3 = p0 + values[at], p1 + values[at + 1], p2 + values[at + 2], p3 + values[at + 3]
        p4, p5, p6, p7 = p4 + values[at + 4], p5 + values[at + 5], p6 + values[at + 6], p7 + values[at + 7]
    total = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
    for rest in range(start + count - count % 8, start + count):
        total += values[rest]
    return total


class _PairCounts:
    """The pairs of neighbouring words (Tokens.neighbours) and the words of every n-th page, counted block by block
    as the fit reads them: what Keywords.collocations is found from."""

    def __init__(self, every: int) -> None:
        self.every, self.pages = max(every, 1), 0
        self.keys: list[np.ndarray] = []  # a block's distinct pairs, sorted
        self.counts: list[np.ndarray] = []  # how often the block writes each
        self.words = np.zeros(0, dtype=np.int64)  # by term id

    def add(self, tokens: Tokens, parts: int) -> None:
        """Count the pairs and words of a block of the fit (`parts` texts a page)."""
        texts = np.arange(len(tokens.counts))
        if self.every > 1:
            tokens = tokens.select(texts[(self.pages + texts // parts) % self.every == 0])
        self.pages += len(texts) // parts
        keys, counts = np.unique(tokens.neighbours()[1], return_counts=True)
        self.keys.append(keys)
        self.counts.append(counts)
        self.words = _added(self.words, np.bincount(tokens.ids[tokens.ids != STOP]))

    def collocations(self) -> np.ndarray:
        """The pairs (first term << 32 | second term, sorted) written COLLOCATION_MIN times or more whose words are
        seldom written apart: either its Dice coefficient, 2 x pair / (first word + second word), is COLLOCATION_DICE
        or more ("working group", "const generics", "foreign key"), or its second word follows its first in
        COLLOCATION_HEAD of its uses or more, as a noun does the word that makes it a term ("color management",
        "error handling", "issue tracker": "color" and "error" go with much else). A first word that leads to the
        second is not enough: "getting" before "Rust", "good" before "hand grinder"."""
        keys, where = np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *self.keys]), return_inverse=True)
        counts = np.bincount(where, np.concatenate([np.zeros(0, dtype=np.int64), *self.counts]), len(keys))
        first, second = self.words[keys >> 32], self.words[keys & 0xFFFFFFFF]
        together = (2 * counts >= COLLOCATION_DICE * (first + second)) | (counts >= COLLOCATION_HEAD * second)
        return keys[together & (counts >= COLLOCATION_MIN)]


@dataclass
class _Commoner:
    """Each name's commonest words, those set aside by the prefix filter: name n's are terms[starts[n]:starts[n + 1]]."""

    starts: np.ndarray
    terms: np.ndarray
    weights: np.ndarray


def _added(total: np.ndarray, part: np.ndarray) -> np.ndarray:
    """The two counts by term id added, the shorter taken as zeros where it stops (the vocabulary grows block by block)."""
    if len(part) > len(total):
        total, part = part, total
    total[:len(part)] += part
    return total


def _idf(document_frequency: np.ndarray, pages: int) -> np.ndarray:
    """scikit-learn's smoothed IDF, ln((1 + pages) / (1 + pages holding the term)) + 1, in float32 step for step as
    TfidfTransformer computes it for a float32 matrix (test_keywords_are_scikit_learns_tfidf_to_the_bit)."""
    idf = np.full(len(document_frequency), pages + 1, dtype=np.float32)
    idf /= document_frequency.astype(np.float32) + 1
    np.log(idf, out=idf)
    idf += 1.0
    return idf


def _weigh(counts: sparse.csr_matrix, idf: np.ndarray) -> None:
    """Term counts to TF-IDF in place, as TfidfTransformer(sublinear_tf=True) transforms them (1 + ln count, times the
    IDF, rows to unit length), WEIGH_AT_ONCE values a step: its fit counted the pages of a term with an int64 copy of
    the column indices, and its transform multiplied by a float32 array of the IDF of every value (1.5 and 0.77 GB at
    1,000,000 pages, at the fit's peak: BENCHMARKS.md, "Analysis")."""
    data, indices = counts.data, counts.indices
    for start in range(0, len(data), WEIGH_AT_ONCE):
        part = data[start:start + WEIGH_AT_ONCE]
        np.log(part, out=part)
        part += 1.0
        part *= idf[indices[start:start + WEIGH_AT_ONCE]]
    _to_unit_length(data, counts.indptr)


@compiled
def _to_unit_length(data: np.ndarray, row_starts: np.ndarray) -> None:
    """Each row of a CSR matrix (its values and row starts) divided by its length, in place, as scikit-learn's
    normalize(copy=False) does to the bit (squares summed in double precision; an empty row left as it is), without
    importing scikit-learn (1.6 s of every analysis: analysis/stop_words.py)."""
    for row in range(len(row_starts) - 1):
        total = 0.0
        for at in range(row_starts[row], row_starts[row + 1]):
            total += data[at] * data[at]
        if total != 0.0:
            length = np.sqrt(total)
            for at in range(row_starts[row], row_starts[row + 1]):
                data[at] /= length


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    """The parts end to end, the list emptied as they are joined: the blocks of one column and the whole of it are held
    at once, not those of both columns (192M non-zeros at 1M pages: 0.77 GB less at the fit's peak)."""
    joined = np.concatenate([np.zeros(0, dtype=dtype), *parts])
    parts.clear()
    return joined


def _blocks(pages: Iterable[tuple[str, ...]], characters: int) -> Iterator[list[tuple[str, ...]]]:
    """The pages (their texts) in order, in lists of about this many characters."""
    block, size = [], 0
    for page in pages:
        block.append(page)
        size += sum(map(len, page))
        if size >= characters:
            yield block
            block, size = [], 0
    if block:
        yield block
