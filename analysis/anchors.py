"""Stage 5b, anchors: a 2-6 word phrase from the source's own text that names the target.

Candidate phrases are word windows of the source's main text, inside one sentence, not crossing
punctuation, not starting or ending on a stop word, and not overlapping an existing link. A phrase
is scored by the target terms it holds: the share of the target's title it covers (title words
weighted by rarity across the site, IDF) plus the TF-IDF weight of the target's most characteristic
words and of the words other pages already link it with (an anchor names its page much as a title
does), minus a little for words that belong to none of these. The phrase an editor would link on
scores high, which makes the same number a strong ranking signal (see score.py). The pair is ranked
by its strongest window. The anchor shown weighs the link words by how many of the target's links use them too
(_link_words: the phrase most editors would write, where one editor's word ranks the pair as well), and it is the one
whose every word (as a reader counts them: "Rust 1.52.0" is two) brings SHORTER_ANCHOR of the strongest by those
weights: "raw pointer" rather than "mutable raw pointer of type", the concise anchor editors write, on a blog
(strengths near 1) as in documentation (a page's many topic words add up to 2 and more).

A source that writes out the target's name, or one of its headings (the name of a part of it:
"Creating a New Thread with spawn"), word for word cites it: names_said. The name, or a heading written in its own
capitals, is then the anchor. What a page goes by (its name, its title's head, its headings) and its title fallback
are names.py's.

A phrase must hold a word rare on the site (on at most COMMON_SHARE of the pages): a common word
names nothing. A title made only of common words ("cargo vendor" on a site where every command page
mentions both) names its page where it is written out word for word (a plural aside), and nowhere else.

The windows of a source do not depend on the target (phrases.py finds them). The search runs on
blocks of sources at once, THREADS blocks at a time (numpy and the compiled loops release the GIL):
for each pair, the target's terms are looked up among the source's words, and only the windows
around a rare matched word are scored, first with an upper bound, then exactly where the bound can
pass (windows.py, compiled).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np

from analysis.citations import title_numbers
from analysis.index import THREADS, Keywords
from analysis.load import Corpus, among, distinct, run_items
from analysis.memory import return_freed_memory
from analysis.phrases import (MAX_WORDS, MIN_WORDS, Phrases, heading_lines, named_versions, phrases_of, version_numbers,
                              web_addresses)
from analysis.names import (COMMON_SHARE, NAME_SAID_WORDS, WrittenName, balanced, cited_headings, compared_words,
                            page_names, page_names_of, said_spans, same_words, short_title, title_anchor, title_heads)
from analysis.series import Series
from analysis.windows import choose, find_matches, other_versions, runs_held, strong_windows, strongest
from analysis.words import (DETERMINERS, SUBORDINATORS, WORD, is_stop_word, reads_as_adverb_or_past, run_hashes,
                            says_when_in_its_year, starts_a_sentence, word_counts)
from linkspider.sentences import sentence_at

SHORTER_ANCHOR = 0.2  # per word, times the pair's best strength: the anchor shown is the window with the most strength less this
TOPIC_TERMS = 20  # the target's most characteristic words (TF-IDF) count beside its title
TOPIC_WEIGHT = 1.0
LINK_TEXT_WEIGHT = 0.75  # the words the site already links a page with, beside its title: chosen on six sites (BENCHMARKS.md, "Quality")
RANKS, CHOOSES = 0, 1  # the rows of TargetTerms.weights and Matches.weights: the pair's strength, its anchor shown
WHOLE_TITLE_WORDS = 2  # a title of this many words or more, none rare, names its page where it is written out
ALTERNATIVES = 3  # text anchors kept per pair, strongest first (Ranked.fill takes another when one is used)
BLOCK_WORDS = 50_000  # words of the sources searched at once (per thread: THREADS blocks run at once)
LABEL_PAGES = 5  # an anchor text the site links more pages with is a label ("Read on →"), no page's name (_naming_links)
_NAMING = re.compile(r"[^\W\d_]|\d\.\d")  # a letter of any script, or a dotted number ("1.34", a release; "8.16", a section)


@dataclass(frozen=True, slots=True)  # one per queued suggestion: no __dict__ each
class Anchor:
    text: str
    source: str  # "text": found in the source's main text; "title": the target's shortened title
    strength: float  # 0..1: share of the target title's weight the phrase covers (0 for titles)
    offset: int | None = None  # where the phrase starts in the source's main text
    context: str | None = None  # the sentence that holds it

    @property
    def span(self) -> tuple[int, int] | None:
        return None if self.offset is None else (self.offset, self.offset + len(self.text))


@dataclass
class Found:
    """The best text anchors of some pairs, ALTERNATIVES per pair, as character spans; -1 where none."""

    starts: np.ndarray  # (pairs, ALTERNATIVES) int32
    ends: np.ndarray
    strengths: np.ndarray  # float32, 0 where none
    best: np.ndarray  # (pairs,) float32: the strength of the pair's strongest window (not always shown), 0 where none
    name_said: np.ndarray  # (pairs,) bool: the source writes out the target's name or a heading word for word (names_said)
    anchorable: np.ndarray  # (pairs,) bool: a window may name the target, or its name leads: else no text anchor does

    @classmethod
    def empty(cls, pairs: int) -> Found:
        return cls(np.full((pairs, ALTERNATIVES), -1, dtype=np.int32), np.full((pairs, ALTERNATIVES), -1, dtype=np.int32),
                   np.zeros((pairs, ALTERNATIVES), dtype=np.float32), np.zeros(pairs, dtype=np.float32), np.zeros(pairs, dtype=bool),
                   np.zeros(pairs, dtype=bool))

    @classmethod
    def joined(cls, parts: list[Found]) -> Found:
        """The parts' pairs end to end."""
        return cls(*(np.concatenate([getattr(part, field.name) for part in [cls.empty(0), *parts]]) for field in fields(cls)))

    def __getitem__(self, rows: np.ndarray) -> Found:
        """These rows' anchors."""
        return Found(*(getattr(self, field.name)[rows] for field in fields(self)))

    def __setitem__(self, rows: np.ndarray, part: Found) -> None:
        for field in fields(self):
            getattr(self, field.name)[rows] = getattr(part, field.name)

    def lead_with(self, row: int, start: int, end: int) -> None:
        """Make the span the pair's first anchor, at the strength of its strongest window, the others that do not
        overlap it after."""
        starts, ends = self.starts[row], self.ends[row]
        apart = np.flatnonzero((starts >= 0) & ((ends <= start) | (starts >= end)))[:ALTERNATIVES - 1]
        order = [start, *starts[apart].tolist()], [end, *ends[apart].tolist()], [self.best[row], *self.strengths[row, apart].tolist()]
        for column, values, empty in zip((self.starts, self.ends, self.strengths), order, (-1, -1, 0)):
            column[row] = empty
            column[row, :len(values)] = values

    def lead_within(self, row: int, start: int, end: int) -> None:
        """Make the pair's first anchor that lies inside the span its first, the others after it in their order."""
        starts, ends = self.starts[row], self.ends[row]
        inside = np.flatnonzero((starts >= start) & (ends <= end) & (starts >= 0))[:1]
        order = np.concatenate([inside, np.setdiff1d(np.arange(len(starts)), inside)])
        for column in (self.starts, self.ends, self.strengths):
            column[row] = column[row, order]

    def alternatives(self, rows: np.ndarray) -> Iterator[tuple[list[int], list[int], list[float]]]:
        """(starts, ends, strengths) of these rows' text anchors, as lists read from the arrays at once."""
        return zip(self.starts[rows].tolist(), self.ends[rows].tolist(), self.strengths[rows].tolist())


def anchor_options(text: str, name: str, starts: list[int], ends: list[int], strengths: list[float]) -> Iterator[Anchor]:
    """A pair's anchors (Found.alternatives) as Anchor objects (without their sentence: see with_context), preferred
    first (strength less SHORTER_ANCHOR of the best a word), then the title fallback: the target's name (page_names), shortened."""
    for start, end, strength in text_options(text, starts, ends, strengths):
        yield Anchor(text[start:end], "text", round(strength, 4), start)
    yield Anchor(title_anchor(name), "title", 0.0)


def text_options(text: str, starts: list[int], ends: list[int], strengths: list[float]) -> Iterator[tuple[int, int, float]]:
    """A pair's text anchors (Found.alternatives) as (start, end, strength), preferred first, made one at a time: the
    queue takes the first one still free, which is nearly always the first. A window that starts or ends inside what a
    reader sees as one word is left out (splits_a_word)."""
    for start, end, strength in zip(starts, ends, strengths):
        if start >= 0 and not splits_a_word(text, start, end):
            yield start, end, strength


COMPLETING_WORD = re.compile(r" ([^\W\d_][\w'\u2019-]*)(?=[,;!?)\]\"\u201d\n]|[.:](?!\S)|\Z)")  # a word, then a break


def completion(text: str, start: int, end: int) -> int:
    """Where the anchor text[start:end] ends with the word that completes its phrase, if one does (else end): the next
    word, a space after it, then punctuation or the line's end; no stop word, adverb or past tense
    (words.reads_as_adverb_or_past), nor after a word that opens a clause, whose phrase is its subject and whose next
    word its verb ("once cargo doc finishes,": words.SUBORDINATORS, before a determiner or not); the anchor's last word
    no stop word, and MAX_WORDS words at most in all. "Japanese-style iced coffee," for "Japanese-style iced", "new
    networking APIs." for "new networking": the search's windows end on words that name the target, "coffee" names no
    iced pour-over, and editors link the whole phrase. Before a word such as "with" a noun phrase may end too, but as
    often a verb does ("the registry depended on"): those are left as they are."""
    word = COMPLETING_WORD.match(text, end)
    if word is None:  # most anchors: a word, or nothing, comes next, not a word and a break
        return end
    words = text[start:end].split()
    if (len(words) >= MAX_WORDS or is_stop_word(words[-1]) or is_stop_word(word.group(1))
            or reads_as_adverb_or_past(word.group(1))):
        return end
    before = [found.lower() for found in WORD.findall(text, max(0, start - 40), start)[-2:]]
    if before and before[-1] in DETERMINERS:
        before.pop()
    return end if before and before[-1] in SUBORDINATORS else word.end(1)


def completion_clear_of(text: str, start: int, end: int, spans: Iterable[tuple[int, int]]) -> int:
    """completion(), unless the completing word runs into one of these spans of the text (its links, the source's
    other anchors): then end. The queue and the vague links' better anchors both show an anchor so."""
    longer = completion(text, start, end)
    return end if any(end < last and first < longer for first, last in spans) else longer


_GOES_ON_GLUED = re.compile(r"[^\s\u2013\u2014.,;:!?()\[\]{}\"'\u2019\u201d\u2026]|[.,;:!?]\w|::\w")
_STARTED_GLUED = re.compile(r"[^\s\u2013\u2014()\[\]{}\"'\u2018\u201c]\Z")


def splits_a_word(text: str, start: int, end: int) -> bool:
    """The span text[start:end] starts or ends inside what a reader sees as one word, where no space parts it from
    what goes on: "Box" of "Box<T>", "Mongoid" of "Mongoid::Document", "1" of "1,000", "release" of "--release". Words
    joined by a dot or a slash are whole already (phrases.py), and a slash at either end belongs to the path it ends
    ("/usr/sbin/apachectl", "Documentation/howto/"); a dash or a bracket parts words ("cargo-package(1)")."""
    return bool(_GOES_ON_GLUED.match(text, end)) or bool(_STARTED_GLUED.search(text, max(0, start - 2), start))


def with_context(anchor: Anchor, text: str) -> Anchor:
    """The anchor with the sentence of the source text that holds it (found from the anchor's own line)."""
    if anchor.offset is None:
        return anchor
    context = text[slice(*sentence_at(text, anchor.offset))]  # made directly: dataclasses.replace costs 3x as much
    return Anchor(anchor.text, anchor.source, anchor.strength, anchor.offset, context)


class AnchorFinder:
    """Finds anchors for (source, target) pairs of one corpus."""

    def __init__(self, corpus: Corpus, keywords: Keywords) -> None:
        self.corpus = corpus
        self.keywords = keywords
        self.common = keywords.idf_of_share(COMMON_SHARE)  # a phrase must hold a rarer word than this
        # nor is a plain number or a single character such a word, but as one of the title's (target_terms)
        self._nameless = np.array([term.isdigit() or len(term) < 2 for term in keywords.vocabulary.terms[:len(keywords.idf)]],
                                  dtype=bool)
        with ThreadPoolExecutor(1) as beside:  # a compiled loop, beside the rest, in Python, on the other core
            topics = beside.submit(keywords.topic_terms, TOPIC_TERMS)  # taken now: nothing past here needs the matrix
            self._name_pages(corpus, keywords)
            self.series = Series.of(corpus.titles, corpus.published, corpus.urls, keywords.vocabulary)  # series.py
        self.topics = topics.result()

    def _name_pages(self, corpus: Corpus, keywords: Keywords) -> None:
        """The names that pages go by: as the title fallback, as a source writes them out (names_said), as versions."""
        self.names = page_names(corpus.names)  # for the title fallback; the terms keep a series label's words, and a number
        sections = [version_numbers(number.group(1)) if number else frozenset() for number in title_numbers(corpus.titles)]
        self._sections = frozenset().union(*sections)  # "8.16" of "8.16. Composite Types", on a site that numbers its titles
        # the version numbers each name writes, and its section's (other_versions)
        named = [sorted(version_numbers(name) | section) for name, section in zip(self.names, sections)]
        self._version_ids = {number: place for place, number in enumerate(sorted(set().union(*named)))}
        self._name_versions = (np.concatenate([[0], np.cumsum([len(numbers) for numbers in named])]).astype(np.int64),
                               np.array([self._version_ids[number] for numbers in named for number in numbers], dtype=np.int64))
        # the same, each with the word written before it: the release of that product ("Rustup 1.24.0", not "Rust")
        qualified = [sorted(named_versions(name)) if numbers else [] for name, numbers in zip(self.names, named)]
        self._qualified_ids = {version: place for place, version in enumerate(sorted(set().union(*qualified)))}
        self._name_qualified = (
            np.concatenate([[0], np.cumsum([len(versions) for versions in qualified])]).astype(np.int64),
            np.array([self._qualified_ids[version] for versions in qualified for version in versions], dtype=np.int64))
        said = page_names(corpus.written_titles)
        lowered = [name.lower() for name in said]
        words = word_counts(lowered).tolist()  # len(compared_words(name)) of each
        heads = title_heads(corpus.titles, keywords)
        named = Counter(lowered)  # pages of each name
        cased = {name for name, lower, count in zip(said, lowered, words)
                 if count == NAME_SAID_WORDS - 1 and name != lower and named[lower] == 1}
        self._cased = cased - {head for _, head in heads}  # said only as the title writes them, in prose (_cased_at)
        self.said_names = page_names_of(sorted([(page, name) for page, (name, count) in enumerate(zip(said, words))
                                                if count >= NAME_SAID_WORDS or name in cased] + heads),
                                        len(corpus), keywords)
        self.headings = cited_headings(corpus, keywords)
        # of the names asked of a pair, those that are a page's, not a heading (a head of one word names, but is no anchor)
        self._page_names = set(said) | {head for _, head in heads if len(compared_words(head)) >= MIN_WORDS}
        # the names names_said asks, by number: said_names' texts, then the headings' (_search_block), with the hashes
        # of their runs of word characters (words.run_hashes: a text that writes a name out holds them in a row), name
        # n's at name_hashes[name_runs[n]:name_runs[n + 1]]; hashed at once, not a few at a time in every block
        self._asked = self.said_names.texts + self.headings.texts
        self._name_hashes, self._name_runs = run_hashes([name.lower() for name in self._asked])
        self._names_made: dict[str, WrittenName] = {}  # of the names found maybe written out: each made once (_name)

    def anchors(self, source: int, target: int) -> list[Anchor]:
        """The best text anchors for one pair with their sentences, strongest first, then the title fallback."""
        found = self.search_all(np.array([source]), np.array([target]))
        text = self.corpus.texts[source]
        starts, ends, strengths = next(found.alternatives(np.zeros(1, dtype=np.int64)))
        return [with_context(anchor, text) for anchor in anchor_options(text, self.names[target], starts, ends, strengths)]

    def search_all(self, sources: np.ndarray, targets: np.ndarray) -> Found:
        """Anchors for many pairs (search_blocks, all kept)."""
        found = Found.empty(len(sources))
        for rows, part, _ in self.search_blocks(sources, targets):
            found[rows] = part
        return found

    def search_blocks(self, sources: np.ndarray, targets: np.ndarray,
                      select: Callable[[np.ndarray, Found], np.ndarray] | None = None
                      ) -> Iterator[tuple[np.ndarray, Found, np.ndarray]]:
        """Anchors for many pairs, a block of sources at a time, THREADS blocks at once: (rows, their Found, the places
        among them of the pairs whose anchors were chosen) of each block, by source.

        Every pair gets its best strength and name_said. select(rows, found holding those) gives the places of the
        pairs whose anchors are wanted too; without it, all. The queue takes a source's first few candidates of ~45
        (score.py): the others' windows are searched only as far as their best (strong_windows' best_only), and
        their anchors are not chosen."""
        names = self.target_terms(distinct(targets))
        return_freed_memory()  # its arrays for every target (~200 MB at 100,000 pages), before the threads' own heaps grow

        def search(block: tuple[list[int], np.ndarray]) -> tuple[np.ndarray, Found, np.ndarray]:
            pages, rows = block
            where, pair_targets = np.searchsorted(np.array(pages), sources[rows]), targets[rows]
            texts = self.corpus.texts.many(pages)
            found = Found.empty(len(rows))
            phrases = phrases_of(self.corpus, self.keywords, pages, texts)
            matches = self._matches(phrases, where, sources[rows], pair_targets, names)
            asked = self._search_block(phrases, texts, where, pair_targets, matches, found)
            found.name_said, leads, long_names = self.names_said(sources[rows], *asked, dict(zip(pages, texts)))
            if self.corpus.citations:
                leads = self._cited(pages, texts, where, pair_targets, found, leads) | leads
            found.anchorable[list(leads)] = True
            wanted = np.arange(len(rows)) if select is None else np.sort(select(rows, found))
            self._chosen(phrases, texts, where[wanted], pair_targets[wanted], matches.of(wanted), found, wanted)
            for row in wanted.tolist():
                if row in leads:
                    found.lead_with(row, *leads[row])
                elif row in long_names:
                    found.lead_within(row, *long_names[row])
            return rows, found, wanted

        with ThreadPoolExecutor(THREADS) as pool:
            yield from pool.map(search, self._blocks(sources))

    def names_said(self, sources: np.ndarray, rows: np.ndarray, names: np.ndarray, held: dict[int, str] | None = None
                   ) -> tuple[np.ndarray, dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
        """Which pairs' sources write out one of the names asked of them (rows[i] is asked name names[i], by its place
        in _asked: the target's name or one of its cited_headings, NAME_SAID_WORDS words or more, or its title's head)
        word for word (case, spacing and punctuation aside; a name of two words in its title's case, in prose:
        _cased_at): an editor citing the page by its name, or a part of it by its heading, the surest sign of a link.
        And, by pair, where the source writes out the target's own name, or a heading as a citation (in the heading's
        own capitals, _headed_at: the same words in prose are as often the source's own phrase), if that may be an
        anchor (at most MAX_WORDS words, in no existing link, code block or template line): the citation is the anchor
        (Found.lead_with). And, by pair, where it writes out a longer one so: an anchor inside it goes first
        (Found.lead_within), for the link belongs on the citation ("How To Write Unit Tests Like a Brood Parasite" in a
        list of posts), not on a phrase elsewhere.

        A pair is asked only the names whose every content word its source holds (names.PageNames.held): a few in a
        hundred candidates, and of a target with many headings the one or two its source may cite. held: the sources'
        texts by page, where the caller holds them (else read).
        """
        said, names_at, long_names_at = np.zeros(len(sources), dtype=bool), {}, {}
        if not len(names):
            return said, names_at, long_names_at
        pages, place = np.unique(sources[rows], return_inverse=True)
        read = self.corpus.texts.many(pages.tolist()) if held is None else [held[page] for page in pages.tolist()]
        texts = [text.lower() for text in read]
        may_be = runs_held(*run_hashes(texts), self._name_hashes, self._name_runs, place, names)
        for at in np.flatnonzero(may_be).tolist():  # by source; a pair's own name first (_search_block)
            row, written, text = int(rows[at]), self._asked[names[at]], texts[place[at]]
            if said[row]:
                continue
            source, name = int(sources[row]), self._name(written)
            if written in self._cased:
                found = self._cased_at(source, read[place[at]], text, name, written)
            else:
                found = next(said_spans(name.pattern, text), None)
            said[row] = found is not None
            if said[row] and len(text) == self.corpus.texts.length(source):  # lowering kept every offset
                if written not in self._page_names:  # a heading
                    found = self._headed_at(read[place[at]], text, name, written)
                span = None if found is None else balanced(text, *found)
                if span is not None and self._open(source, read[place[at]], *span):
                    (names_at if len(name.words) <= MAX_WORDS else long_names_at)[row] = span
        return said, names_at, long_names_at

    @staticmethod
    def _headed_at(text: str, lowered: str, name: WrittenName, heading: str) -> tuple[int, int] | None:
        """Where the source writes a heading of the target in the heading's own case: a citation of that part of it
        ("see Configuring a target", "the section “Custom derive Macros”"), not a phrase of the source's own prose
        ("if you want to learn more" beside the heading "Want to learn more?"). The case tells only by a capital that
        prose would not write: past the heading's first letter ("Visual Studio Code", "GATs"), or that first letter
        where no sentence starts ("In the future, ..." is prose; so is a heading of no capital, "in documentation
        tests", wherever it is written)."""
        words = WORD.findall(heading)
        capital_within = any(character.isupper() for character in "".join(words)[1:])
        capital_first = words[0][:1].isupper()
        return next((span for span in _in_its_case(text, lowered, name, heading)
                     if capital_within or capital_first and not starts_a_sentence(text, span[0])), None)

    def _cited(self, pages: list[int], texts: list[str], where: np.ndarray, targets: np.ndarray, found: Found,
               names_at: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
        """Pairs whose source cites the target by its number (citations.py; pair j: pages[where[j]], targets[j]): the
        target's name is said; returned by pair, the citation ("Section 8.16.6"), to be the anchor (Found.lead_with),
        where it may be one and no name written out leads already."""
        cited = [self.corpus.citations.first_spans(page, text) for page, text in zip(pages, texts)]
        leads = {}
        for row, (place, target) in enumerate(zip(where.tolist(), targets.tolist())):
            span = cited[place].get(target)
            if span is not None:
                found.name_said[row] = True
                if row not in names_at and self._open(pages[place], texts[place], *span):
                    leads[row] = span
        return leads

    def _cased_at(self, source: int, text: str, lowered: str, name: WrittenName, written: str) -> tuple[int, int] | None:
        """Where the source writes a two-word name as its title does ("Number Protocol"), in its prose: two words
        written in another case ("number protocol"), or in a heading, a link or a code block, are as often a phrase of
        the source's own ("Incremental Compilation" heading a release's notes) as a citation."""
        if len(lowered) != len(text):  # lowering moved the offsets
            return None
        return next((span for span in _in_its_case(text, lowered, name, written) if self._open(source, text, *span)), None)

    def _name(self, name: str) -> WrittenName:
        """The name as WrittenName, made once whichever block asks it first."""
        if name not in self._names_made:
            self._names_made[name] = WrittenName(tuple(compared_words(name)))
        return self._names_made[name]

    def _open(self, page: int, text: str, start: int, end: int) -> bool:
        """No existing link, code block, template line, heading or web address of the page (whose text the caller holds)
        overlaps text[start:end] (as phrases._blocked)."""
        corpus = self.corpus
        headings = heading_lines(text, corpus.headings[page]) if corpus.headings[page] else []
        return not any(first < end and start < last
                       for spans in (corpus.link_spans[page], corpus.code_spans[page], corpus.template_spans[page], headings,
                                     web_addresses(text))
                       for first, last in spans)

    def _blocks(self, sources: np.ndarray) -> Iterator[tuple[list[int], np.ndarray]]:
        """The pairs' sources in blocks of equal words, at most about BLOCK_WORDS, a multiple of THREADS of them so that
        no thread waits on another at the end: (pages, rows of the pairs from those pages)."""
        order = np.argsort(sources, kind="stable")
        pages, first_rows = np.unique(sources[order], return_index=True)
        if not len(pages):
            return
        bounds = np.append(first_rows, len(order))
        words = np.cumsum(self.corpus.texts.lengths()[pages] // 6)
        blocks = THREADS * max(1, math.ceil(words[-1] / (THREADS * BLOCK_WORDS)))
        cuts = np.searchsorted(words, words[-1] * np.arange(1, blocks) / blocks) + 1  # after the page reaching each share
        edges = [0, *distinct(np.minimum(cuts, len(pages))).tolist(), len(pages)]
        for start, end in zip(edges, edges[1:]):
            if start < end:
                yield pages[start:end].tolist(), order[bounds[start]:bounds[end]]

    def target_terms(self, targets: np.ndarray) -> TargetTerms:
        """What names each of these targets (sorted, distinct), laid end to end once for every block of sources: its
        title words (IDF-weighted, summing to 1), then its TOPIC_TERMS topic words (TF-IDF) and the words of the anchors
        that link it (_link_words): a topic word counts beside a title or link word, a link word that is a title word
        counts once, as the larger; and for each target whose title words are all common, how many they are (see
        whole_title). A plain number or a single character is a rare word (one a phrase must hold) only as a title word:
        a recipe's heaviest words may be "15", "250" and "g", which say what it measures, not what it is about ("16 to
        20 g" of another page names no "Understanding Coffee-to-Water Ratios"; "Rust 2018" names "What is Rust 2018?").

        A title word no page holds still counts in the sum (at the rarest IDF): it cannot be matched. All of it is
        arrays (dicts per target took 4 s at 100,000 targets).
        """
        idf, columns, pages = self.keywords.idf, len(self.keywords.idf), len(self.corpus)
        titles = [short_title(self.corpus.titles[target]) for target in targets.tolist()]
        tokens, terms = self.keywords.vocabulary.tokenize(titles), len(self.keywords.vocabulary)
        title_ids, title_counts, places = tokens.distinct(terms)
        in_number = tokens.only_in_dotted_words(places, terms)
        held = title_ids < columns
        title_weights = np.where(held, idf[np.where(held, title_ids, 0)].astype(np.float64), self.keywords.idf_of_share(0))
        title_owner = np.repeat(targets, title_counts)
        place = np.arange(len(title_ids)) - np.repeat(np.cumsum(title_counts) - title_counts, title_counts)
        total = np.zeros(pages)
        for word in range(int(title_counts.max(initial=0))):  # left to right, as sum() adds: the same float64 total
            total[title_owner[place == word]] += title_weights[place == word]
        total[total == 0] = 1.0
        title_ids, title_owner = title_ids[held], title_owner[held]
        title_weights = np.tile(title_weights[held] / total[title_owner], (2, 1))  # RANKS and CHOOSES alike
        in_number = in_number[held] & self._nameless[title_ids]  # a number's part: "1" of "1.26", not "js" of "Node.js"
        title_codes = title_owner * columns + title_ids
        by_code = np.argsort(title_codes)
        ordered = title_codes[by_code]
        link_codes, link_weights = self._link_words(targets)
        title_word = among(link_codes, ordered)  # an anchor word that is a title word counts once: as the title or the anchor
        link_weights[:, title_word] = np.maximum(0, link_weights[:, title_word]
                                                 - title_weights[:, by_code[np.searchsorted(ordered, link_codes[title_word])]])
        starts, topic_ids, topic_weights = self.topics
        topic, at = run_items(starts[targets], starts[targets + 1] - starts[targets])
        topic_codes = np.concatenate([targets[topic] * columns + topic_ids[at], link_codes])
        topic_weights = np.concatenate([np.tile(TOPIC_WEIGHT * topic_weights[at], (2, 1)), link_weights], axis=1)
        topic_codes, place = np.unique(topic_codes, return_inverse=True)  # a topic word said in anchors: both weights
        topic_weights = np.stack([np.bincount(place, weights=row, minlength=len(topic_codes)) for row in topic_weights])
        topic_owner, topic_ids = np.divmod(topic_codes, columns)
        both = among(topic_codes, ordered)  # a topic word that is a title word too: its weight adds to the title word's
        title_weights[:, by_code[np.searchsorted(ordered, topic_codes[both])]] += topic_weights[:, both]
        owner = np.concatenate([title_owner, topic_owner[~both]])
        titled = np.concatenate([np.ones(len(title_ids), dtype=bool), np.zeros(int((~both).sum()), dtype=bool)])
        order = np.lexsort((~titled, owner))  # stable: each target's title words in order, then its other topic words
        ids = np.concatenate([title_ids, topic_ids[~both]])[order]
        weights = np.concatenate([title_weights, topic_weights[:, ~both]], axis=1)[:, order].astype(np.float32)
        in_number = np.concatenate([in_number, np.zeros(int((~both).sum()), dtype=bool)])[order]
        titled, counts = titled[order], np.bincount(owner, minlength=pages)
        owner = owner[order]
        title_words = np.bincount(owner[titled], minlength=pages)
        rare = (idf[ids] >= self.common) & (titled | ~self._nameless[ids])
        rare_title_words = np.bincount(owner[titled & rare], minlength=pages)
        whole_title = np.where((rare_title_words == 0) & (title_words >= WHOLE_TITLE_WORDS), title_words, 0)
        return TargetTerms(np.concatenate([[0], np.cumsum(counts)]), ids, weights, titled, rare, in_number, whole_title)

    @cached_property
    def _naming_links(self) -> tuple[np.ndarray, np.ndarray]:
        """The places of the inbound anchors (Corpus.inbound_anchors) that may name their target, by target, and where
        each target's start: the queue's later rows are searched a few targets at a time, and a pass over every link
        for their anchors cost ~30 ms a search at 300,000 synthetic pages (1.6M links), most of the searches' time
        (BENCHMARKS.md).

        An anchor of a plain number or a mark names nothing: the "[15]" of a generated index's entries or a footnote's
        "(3)" (a third of CMake's content links, 8,304 of 22,772) would make every "15" and "3" of a source a word of
        the page's name. A dotted number does name one: "1.34" for "Announcing Rust 1.34.0" (_NAMING). Nor does a
        label, a text the site links more than LABEL_PAGES pages with: artsy's listings link 47 posts "Read on →",
        which made "read" a word of each one's name and "Thanks for reading" or "sure to read" an anchor of 57 of its
        suggestions (Milne and Witten weigh an anchor text by the share of its links that point at the page)."""
        links, pages = self.corpus.inbound_anchors, len(self.corpus)
        targets = np.frombuffer(links.targets, dtype=np.int64)
        naming = np.fromiter((_NAMING.search(text) is not None for text in links.texts), bool, len(links.texts))
        spellings = np.fromiter((hash(text.strip().lower()) for text in links.texts), np.int64, len(links.texts))
        text_ids = np.unique(spellings, return_inverse=True)[1]  # hashed: no lower-case copy of 5M texts held at once
        pages_linked = np.bincount(distinct(text_ids * pages + targets) // pages)
        kept = np.flatnonzero(naming & (pages_linked[text_ids] <= LABEL_PAGES))
        by_target = kept[np.argsort(targets[kept], kind="stable")]
        return by_target, np.searchsorted(targets[by_target], np.arange(pages + 1))

    def _link_words(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The words of the anchors other pages already link these targets with (what the site's editors call each
        one, _naming_links), as sorted codes target * columns + term id, and their weights, LINK_TEXT_WEIGHT times a
        share, in two rows (TargetTerms.weights).

        RANKS: the word's share of an anchor's IDF (as a title word's of the title, but over the anchor's words some
        page holds: an anchor from a page left out of the corpus may hold others), its largest over the target's
        anchors: one editor's link names the page.

        CHOOSES: the mean of that and how much of all the target's anchors the word makes up (its shares summed, as a
        share of the target's most used word's, times the target's largest RANKS share: no word weighs more than one
        did, and a target linked by one anchor keeps its weights): the anchor shown is the one most of the site's
        editors would write. Of the 24 links to rustblog's "Stability as a Deliverable", one reads "nightly" and one
        "channels", and 14 hold "stability": by the largest share alone the search showed "using Nightly" and "IRC
        channels" for it, where editors wrote "approach to stability" and "hassle-free updates" (BENCHMARKS.md,
        "Quality")."""
        columns, idf = len(self.keywords.idf), self.keywords.idf
        links, (by_target, starts) = self.corpus.inbound_anchors, self._naming_links
        link_targets = np.frombuffer(links.targets, dtype=np.int64)
        wanted = np.sort(by_target[run_items(starts[targets], starts[targets + 1] - starts[targets])[1]])
        tokens = self.keywords.vocabulary.tokenize([links.texts[row] for row in wanted.tolist()])
        words = tokens.ids.astype(np.int64)
        link = np.repeat(np.arange(len(wanted)), tokens.counts)
        known = (words >= 0) & (words < columns)
        link, words = np.divmod(distinct(link[known] * columns + words[known]), columns)  # each word once an anchor
        share = idf[words] / np.bincount(link, weights=idf[words], minlength=len(wanted))[link]
        codes, place = np.unique(link_targets[wanted][link] * columns + words, return_inverse=True)
        largest = np.zeros(len(codes))
        np.maximum.at(largest, place, share)
        used = np.bincount(place, weights=share, minlength=len(codes))
        owner = codes // columns
        most, top = np.zeros(len(self.corpus)), np.zeros(len(self.corpus))
        np.maximum.at(most, owner, used)
        np.maximum.at(top, owner, largest)
        return codes, LINK_TEXT_WEIGHT * np.stack([largest, (largest + used / most[owner] * top[owner]) / 2])

    def _search_block(self, phrases: Phrases, texts: list[str], pages: np.ndarray, targets: np.ndarray,
                      matches: Matches, found: Found) -> tuple[np.ndarray, np.ndarray]:
        """Fill found's best strengths of the pairs (pair j: pages[j] of the phrases and texts, targets[j]; their
        matches); return the names and headings to ask of them (names.PageNames.held), as (pairs, names, numbered as
        _asked holds them), by pair, each pair's own names first."""
        first, last, pair, strength, ending = self._windows(phrases, texts, pages, targets, matches, RANKS)
        found.anchorable[pair] = True  # best_only skips a window only where a stronger one of its pair is kept
        strongest(pair, strength, ending, found.best)
        (named, names), (headed, headings) = (self.said_names.held(phrases, pages, targets),
                                              self.headings.held(phrases, pages, targets))
        pairs, asked = np.concatenate([named, headed]), np.concatenate([names, headings + len(self.said_names.texts)])
        by_pair = np.argsort(pairs, kind="stable")
        return pairs[by_pair], asked[by_pair]

    def _chosen(self, phrases: Phrases, texts: list[str], pages: np.ndarray, targets: np.ndarray, matches: Matches,
                found: Found, rows: np.ndarray) -> None:
        """Choose the anchors of these rows of found (pair j: pages[j], targets[j]; their matches) by the terms' weights
        for the anchor shown (TargetTerms.weights[CHOOSES]); the pairs' best strengths, which rank them, stay as they
        are."""
        first, last, pair, strength, ending = self._windows(phrases, texts, pages, targets, matches, CHOOSES)
        part, scale = found[rows], np.zeros(len(rows), np.float32)
        strongest(pair, strength, ending, scale)  # a word shown costs SHORTER_ANCHOR of the strongest by these weights
        choose(pair, strength, first, last, ending, phrases.starts, phrases.ends, phrases.dotted_before, phrases.collocated,
               phrases.clause_before, SHORTER_ANCHOR, scale, part.starts, part.ends, part.strengths)
        unranked = ~part.anchorable  # no window of it reaches MIN_STRENGTH by the weights that rank it: no text anchor
        part.starts[unranked], part.ends[unranked], part.strengths[unranked] = -1, -1, 0
        found.starts[rows], found.ends[rows], found.strengths[rows] = part.starts, part.ends, part.strengths

    def _windows(self, phrases: Phrases, texts: list[str], pages: np.ndarray, targets: np.ndarray, matches: Matches,
                 weighed: int) -> tuple[np.ndarray, ...]:
        """(first word, last word, pair, strength, ending) of the pairs' strong windows (strong_windows) that may name
        their target, by the terms' weights of row `weighed` (RANKS: only as far as each pair's best, best_only)."""
        first, last, pair, strength, title_only, ending = strong_windows(
            matches.codes, matches.weights[weighed], matches.rare, matches.seeds, matches.titled, matches.partial, matches.own,
            matches.sets_apart, matches.whole_title, matches.sibling, matches.words, phrases.valid, phrases.content_before,
            phrases.article, phrases.when_before, phrases.own_title_before, phrases.previous_same, phrases.versioned_before,
            weighed == RANKS)
        keep = np.ones(len(first), dtype=bool)
        for window in np.flatnonzero(title_only).tolist():  # few: the title itself, word for word, or nothing
            target, text = targets[pair[window]], texts[pages[pair[window]]]
            phrase = text[phrases.starts[first[window]]:phrases.ends[last[window]]]
            keep[window] = same_words(phrase, self.names[target]) or same_words(phrase, self.corpus.titles[target])
        if phrases.versions:  # no evidence: no name is said by a window that no anchor may be
            version_ids = np.array([self._version_id(number) for number in phrases.versions], dtype=np.int64)
            qualified_ids = np.array([self._qualified_ids.get(version, -1)
                                      for version in zip(phrases.version_names, phrases.versions)], dtype=np.int64)
            keep &= ~other_versions(first, last, pair, targets, phrases.version_first, phrases.version_last, version_ids,
                                    *self._name_versions, qualified_ids, *self._name_qualified)
        if not keep.all():  # nearly always all: four copies of ~20 windows a pair saved
            first, last, pair, strength, ending = first[keep], last[keep], pair[keep], strength[keep], ending[keep]
        return first, last, pair, strength, ending

    def _version_id(self, number: str) -> int:
        """The id of a version number (other_versions): of a number some page's name writes; of a section, for a number
        that extends one ("8.16.6", a part of "8.16. Composite Types", is that page's: "see Section 8.16.6" cites it);
        else -1, no page's."""
        if number in self._version_ids:
            return self._version_ids[number]
        head = number
        while "." in head:
            head = head.rsplit(".", 1)[0]
            if head in self._sections:
                return self._version_ids[head]
        return -1

    def _matches(self, phrases: Phrases, pages: np.ndarray, sources: np.ndarray, targets: np.ndarray,
                 names: TargetTerms) -> Matches:
        """Every occurrence, in each pair's source (pages: its place among the phrases' pages; sources: its page), of
        a term of its target (windows.find_matches)."""
        found = find_matches(targets, pages, names.starts, names.ids, names.weights, names.titled, names.rare,
                             names.in_number, names.whole_title, phrases.run_keys, phrases.terms, phrases.runs, phrases.order,
                             phrases.own_title, phrases.dotted_before, phrases.content_before)
        sibling = self.series.siblings(sources, targets)
        return Matches(*found, self._sets_apart(phrases, found[0], found[4], found[6], sources, targets, sibling),
                       names.whole_title[targets], sibling, len(phrases.ids))

    def _sets_apart(self, phrases: Phrases, codes: np.ndarray, titled: np.ndarray, own: np.ndarray, sources: np.ndarray,
                    targets: np.ndarray, sibling: np.ndarray) -> np.ndarray:
        """Matches.sets_apart of these matches (codes, titled, own: as Matches holds them) of these pairs."""
        apart, words = np.zeros(len(codes), dtype=bool), len(phrases.ids)
        pairs = np.flatnonzero(sibling)  # few: most sites' series are few pages
        first = np.searchsorted(codes, pairs * words)
        owner, held = run_items(first, np.searchsorted(codes, (pairs + 1) * words) - first)
        new_title_word = titled[held] & ~own[held]
        owner, held = pairs[owner[new_title_word]], held[new_title_word]
        terms = self.keywords.vocabulary.terms
        relative = np.array([says_when_in_its_year(terms[term]) for term in phrases.ids[codes[held] % words].tolist()],
                            dtype=bool)
        apart[held] = ~(relative & self.series.far(sources[owner], targets[owner]))
        return apart


def _in_its_case(text: str, lowered: str, name: WrittenName, written: str) -> Iterator[tuple[int, int]]:
    """The spans where the text (lowered: the same, in lower case, at the same offsets) writes the name word for word
    in its own case, as `written` has it."""
    words = WORD.findall(written)
    return (span for span in said_spans(name.pattern, lowered) if WORD.findall(text[span[0]:span[1]]) == words)


@dataclass
class TargetTerms:
    """AnchorFinder.target_terms: many targets' terms end to end, target t's ids[starts[t]:starts[t + 1]]."""

    starts: np.ndarray  # (pages + 1,)
    ids: np.ndarray
    weights: np.ndarray  # (2, terms): row RANKS weighs a link word by its largest share, row CHOOSES by _link_words' blend
    titled: np.ndarray  # the term is one of the target's title words
    rare: np.ndarray  # the term is rare enough to name the target (see COMMON_SHARE)
    in_number: np.ndarray  # a number (or a character) the title writes only in a dotted word ("1" and "26" of "Rust 1.26")
    whole_title: np.ndarray  # (pages,): for a title of WHOLE_TITLE_WORDS or more words, none rare: their number; else 0


@dataclass
class Matches:
    """Where a pair's target terms occur in its source, as codes pair * words + word, sorted."""

    codes: np.ndarray
    weights: np.ndarray  # (2, matches): TargetTerms.weights' rows
    rare: np.ndarray  # the term is rare enough to name the target (see COMMON_SHARE)
    seeds: np.ndarray  # a window may be built around it: rare, or a title word of a whole_title target
    titled: np.ndarray  # the term is a title word of the pair's target
    partial: np.ndarray  # part of a dotted word the target's terms do not hold whole (windows.find_matches): weighs nothing
    own: np.ndarray  # a word of the source's own title (Phrases.own_title)
    # of a target of its source's series (sibling): a word of its title that its source's own title lacks ("1" of
    # "Traits working group 2020 sprint 1 summary", on sprint 2's page), but for a month or a weekday
    # (words.says_when_in_its_year) of a target dated far from its source (Series.far): that source means its own
    # year's ("the steering cycle in March and April", written in February 2023, is not 2021's April cycle)
    sets_apart: np.ndarray
    whole_title: np.ndarray  # per pair: TargetTerms.whole_title of its target
    sibling: np.ndarray  # per pair: the target is of the source's series (series.py)
    words: int

    def of(self, pairs: np.ndarray) -> Matches:
        """The matches of these pairs (sorted), as pairs 0, 1, ...: each pair's are a run of the codes, found by binary
        search (a membership test of every match's pair took 8% of the anchor search)."""
        first = np.searchsorted(self.codes, pairs * self.words)
        owner, kept = run_items(first, np.searchsorted(self.codes, (pairs + 1) * self.words) - first)
        return Matches(self.codes[kept] - (pairs[owner] - owner) * self.words, self.weights[:, kept], self.rare[kept],
                       self.seeds[kept], self.titled[kept], self.partial[kept], self.own[kept], self.sets_apart[kept],
                       self.whole_title[pairs], self.sibling[pairs], self.words)
