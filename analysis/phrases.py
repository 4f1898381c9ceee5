"""The word windows of source pages that may become anchors, whatever the target (anchors.py scores them).

A window is 2-6 words inside one sentence, joined only by spaces (or - . /), with no stop word at
either end, not splitting what a reader sees as one word ("1.32.0", "crates.io") or one name
("src/main.rs", "HTTP/2", "GROUP BY"), and holding two such words at least ("Rust 1.32.0", not "1.32.0"
alone: the issue's 2-6 words; words.Tokens), outside the
page's existing links, its code blocks (no link goes inside code) and the site's template lines
(the same line on three pages or more), outside its headings (a link belongs in the prose, not in
the page's outline; a heading that writes out another page's name still counts as its name said:
anchors.names_said), outside a web address written out in the text ("brew/water" in
"https://example.com/brew/water/" is part of the address, not a phrase), and outside a sentence that only repeats
the page's own title. A window that holds a word that makes it a clause, such as "had", "can", "we" or "is"
(words.CLAUSE_WORDS: "Compiler team had a planning meeting", "iOS software is weird"; but "how coffee is processed")
is evidence that the source speaks of the target, whose strength counts, but no name to show: "planning meeting" is
shown, else the title (windows.choose). Nor is a window that cuts one of the site's collocations at an end ("survey
working" of "survey working group") shown before a whole phrase (windows.choose).
Several pages are laid end to end as one set of arrays, so the anchor search works on many sources per numpy call; no
window crosses from one page into the next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from analysis.compiled import compiled
from analysis.index import Keywords
from analysis.load import Corpus, among, distinct
from analysis.words import STOP, Tokens, stem
from linkspider.sentences import sentence_at, sentence_spans

MIN_WORDS, MAX_WORDS = 2, 6
_VERSION = re.compile(r"(?<![\w.])\d+(?:\.\d+)+(?![.\d]*\w)")  # a version number: "1.45.2", not "3.18a" nor "v2.1.x"
_NAMED_VERSION = re.compile(r"(\w+) (\d+(?:\.\d+)+)(?![.\d]*\w)")  # "Rustup 1.24.0": a word, a space, a version
_PRE_RELEASE = re.compile(r"-[^\W\d_]")  # after a version: "-beta.4", "-rc1"
_WEB_ADDRESS = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_WEB_WORDS = ("http", "https", "www")  # the words _WEB_ADDRESS starts on


@dataclass
class Phrases:
    """The words of some pages end to end, and which windows of them may be anchors."""

    ids: np.ndarray  # term id per word (STOP for stop words)
    starts: np.ndarray  # character offsets in the word's own page
    ends: np.ndarray  # where an anchor that ends on the word ends: before a possessive's 's ("Rust 2018", not "Rust 2018's")
    order: np.ndarray  # the words sorted by their (page, term) key (run_keys): where each term occurs on each page
    runs: np.ndarray  # where the words of each distinct key start in that order, then the number of words
    run_keys: np.ndarray  # the distinct keys (page * (terms + 1) + term + 1: the page's place among these), sorted
    valid: np.ndarray  # (words, sizes): the window of this size starting at this word may be an anchor
    content_before: np.ndarray  # non-stop words before each word, a version's trailing ".0" aside (_zero_tails)
    article: np.ndarray  # per word: an article (words.ARTICLES), which may start a window and weighs as a word of it
    when_before: np.ndarray  # words before each word that say only when (Vocabulary.words_only_when: "3pm", "2018")
    own_title: np.ndarray  # per word: a content word of its own page's title (_own_title_words)
    own_title_before: np.ndarray  # such words before each word
    dotted_before: np.ndarray  # words before each word joined to their next by a dot ("1.32.0": 2 before "0")
    clause_before: np.ndarray  # words before each word that make a window a clause (words.Tokens.clause_word)
    collocated: np.ndarray  # per word: it and the next are a pair the site writes as one phrase (Keywords.collocations)
    version_first: np.ndarray  # the first word of each version number the pages write ("1.45.2": words 1, 45 and 2)
    version_last: np.ndarray  # its last word
    versions: list[str]  # what each says (version_numbers)
    version_names: list[str]  # the word written before each, lower-case ("rust" of "Rust 1.24.0"), or ""
    versioned_before: np.ndarray  # words of version numbers before each word
    previous_same: np.ndarray  # the previous word of the same page with the same term, -1 if none
    terms: int  # vocabulary size when made


def phrases_of(corpus: Corpus, keywords: Keywords, pages: list[int], texts: list[str] | None = None) -> Phrases:
    """The pages' words end to end (term ids of the keywords' vocabulary), with their valid windows; texts: the pages'
    own, where the caller holds them (else read)."""
    tokens = keywords.text_tokens(corpus.texts, pages)
    ids = tokens.ids.astype(np.int64)
    texts = corpus.texts.many(pages) if texts is None else texts
    blocked = _blocked(corpus, pages, tokens, texts, _with_web_words(keywords, tokens))
    stop = ids == STOP
    dotted = tokens.dotted | tokens.slashed & (stop | np.append(stop[1:], False))  # "I/O" is one word, as "1.32.0" is
    dotted_before = _before(dotted)
    terms = len(keywords.vocabulary)
    keys = np.repeat(np.arange(len(pages)), tokens.counts) * (terms + 1) + ids + 1
    valid = _valid_windows(stop, tokens.joined, dotted, tokens.slashed | tokens.capitals, tokens.article,
                           tokens.phrase_end, blocked)
    places, pairs = tokens.neighbours()
    collocated = np.zeros(len(ids), dtype=bool)
    collocated[places[among(pairs, keywords.collocations)]] = True
    version_first, version_last, versions, version_names = _version_runs(tokens, texts)
    count = len(ids)
    content_before = _before(~stop & ~_zero_tails(count, version_first, version_last, versions))
    versioned_before = _before(_covered(count, version_first, version_last + 1))
    order = _stable_order(keys)
    keys = keys[order]
    previous_same = np.full(count, -1, dtype=np.int64)
    repeated = np.flatnonzero(keys[1:] == keys[:-1]) + 1
    previous_same[order[repeated]] = order[repeated - 1]
    runs = np.append(np.flatnonzero(np.diff(keys, prepend=-1)), count)
    run_keys = keys[runs[:-1]]
    own_title = np.empty(count, dtype=bool)
    own_title[order] = np.repeat(_own_title_words(corpus, keywords, pages, run_keys, terms), np.diff(runs))
    return Phrases(ids, tokens.starts, tokens.ends - 2 * tokens.possessive, order, runs, run_keys, valid,
                   content_before, tokens.article, _before(keywords.vocabulary.words_only_when(ids, dotted)), own_title,
                   _before(own_title), dotted_before, _before(tokens.clause_word), collocated, version_first,
                   version_last, versions, version_names, versioned_before, previous_same, terms)


@compiled
def _valid_windows(stop: np.ndarray, joined: np.ndarray, dotted: np.ndarray, named: np.ndarray, article: np.ndarray,
                   phrase_end: np.ndarray, blocked: np.ndarray) -> np.ndarray:
    """(words, sizes): whether the window of MIN_WORDS + column words from each word may be an anchor. Its words
    are joined one to the next (one run), none blocked; it neither starts nor ends on a stop word (but for one named
    with a word that is none: joined to it by a slash or in capitals, "I/O", "NOT NULL", "GROUP BY"; not "and/or"; and
    an article before a word that is none starts one that ends a noun phrase (words.Tokens.phrase_end): "with the
    AeroPress in" makes "the AeroPress", "a great first brewer" no "a great"), nor
    between two words dotted ("1.32.0") or named, and holds MIN_WORDS words at least, counting those dotted as one."""
    count = len(stop)
    valid = np.zeros((count, MAX_WORDS - MIN_WORDS + 1), np.bool_)
    for first in range(count):
        opens = first + 1 < count and (named[first] or article[first]) and not stop[first + 1]
        if ((stop[first] and not opens) or blocked[first]
                or (first > 0 and (dotted[first - 1] or named[first - 1]))):
            continue
        dots = 0  # words of the window joined to their next by a dot
        for last in range(first + 1, min(count, first + MAX_WORDS)):
            if not joined[last - 1] or blocked[last]:
                break
            dots += dotted[last - 1]
            size = last - first + 1
            valid[first, size - MIN_WORDS] = ((not stop[last] or (named[last - 1] and not stop[last - 1])) and not dotted[last]
                                              and not named[last] and size - dots >= MIN_WORDS
                                              and (phrase_end[last] or not article[first]))
    return valid


def version_numbers(text: str) -> frozenset[str]:
    """The version numbers a text writes, a trailing ".0" aside ("1.31.0" is "1.31"); a pre-release's with a dash after
    it ("1.60.0-beta.4" is "1.60-"): it is not that release."""
    numbers = set()
    for written in _VERSION.finditer(text):
        number = written.group()
        while number.endswith(".0") and number.count(".") > 1:
            number = number[:-2]
        numbers.add(number + "-" if _PRE_RELEASE.match(text, written.end()) else number)
    return frozenset(numbers)


def named_versions(text: str) -> frozenset[tuple[str, str]]:
    """The version numbers a text writes a space after a word, with that word in lower case: ("rustup", "1.24") of
    "Announcing Rustup 1.24.0" (version_numbers)."""
    return frozenset((named.group(1).lower(), number) for named in _NAMED_VERSION.finditer(text)
                     for number in version_numbers(text[named.start(2):named.end() + 2]))


def _version_runs(tokens: Tokens, texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """(first word, last word, what it says, the word a space before it) of each version number the texts write: a run
    of words joined by dots (words.Tokens.dotted) that reads as one ("1.45.2", not "crates.io" nor "3.18a"), read
    with what follows it as far as a pre-release's tag (version_numbers)."""
    dotted = tokens.dotted
    first = np.flatnonzero(dotted & ~np.concatenate([[False], dotted[:-1]]))
    last = np.flatnonzero(~dotted)
    last = last[np.searchsorted(last, first)]  # the last word of a text is joined to nothing: every run ends
    text_of = np.searchsorted(np.cumsum(tokens.counts), first, "right")
    said = [version_numbers(texts[text][start:end + 2]) for text, start, end in  # one number or none; + 2: "-b" of "-beta"
            zip(text_of.tolist(), tokens.starts[first].tolist(), tokens.ends[last].tolist())]
    number = np.array([bool(numbers) for numbers in said], dtype=bool)
    first, last, text_of = first[number], last[number], text_of[number]
    before = np.maximum(first - 1, 0)
    joined = (first > 0) & tokens.joined[before]  # one character apart, in the same text (words.Tokens.joined)
    names = [texts[text][start:end].lower() if join and texts[text][end] == " " else ""
             for text, start, end, join in zip(text_of.tolist(), tokens.starts[before].tolist(),
                                               tokens.ends[before].tolist(), joined.tolist())]
    return first, last, [min(numbers) for numbers in said if numbers], names


def _zero_tails(count: int, first: np.ndarray, last: np.ndarray, versions: list[str]) -> np.ndarray:
    """Per word: a trailing "0" of a version number (_version_runs), which says nothing: "Rust 1.30.0" is the release
    of "Announcing Rust 1.30": it holds that title's words whole (windows.find_matches), and no other word that a
    window's strength would count against it."""
    parts = np.array([number.count(".") + 1 for number in versions], dtype=np.int64)
    return _covered(count, first + parts, last + 1)


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """np.argsort(keys, kind="stable") of non-negative int64 keys: each key with its place in the low bits, sorted by
    numpy's default sort (vectorised where the CPU allows), 3x faster than the stable argsort's merge sort on a block
    of the anchor search (60,000 words); that sort where a key would not fit beside its place."""
    shift = len(keys).bit_length()
    if len(keys) and int(keys.max()) >> (63 - shift):
        return np.argsort(keys, kind="stable")
    return np.sort(keys << shift | np.arange(len(keys))) & ((1 << shift) - 1)


def _covered(count: int, first: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per word of count: whether some span of words first[i] <= word < after[i] holds it (+1 where each starts, -1
    where it ends, summed)."""
    change = np.zeros(count + 1, dtype=np.int64)
    np.add.at(change, first, 1)
    np.add.at(change, after, -1)
    return np.cumsum(change[:-1]) > 0


def _before(flags: np.ndarray) -> np.ndarray:
    """How many of the flagged words come before each word, then in all: a window first..last holds
    before[last + 1] - before[first] of them."""
    return np.concatenate([[0], np.cumsum(flags)])


def _own_title_words(corpus: Corpus, keywords: Keywords, pages: list[int], keys: np.ndarray, terms: int) -> np.ndarray:
    """Per key (sorted: a page's term, as Phrases.run_keys): a content word of its own page's title. A window that names a target by
    such words only names the page it is on ("cargo doc" on the page of `cargo doc`), unless the target's title holds
    them all too (anchors.py)."""
    ids, counts = keywords.vocabulary.distinct_terms([corpus.titles[page] for page in pages])
    place = np.repeat(np.arange(len(pages)), counts)
    held = ids < len(keywords.idf)  # a word no page holds is no word of a text
    return among(keys, distinct(place[held] * (terms + 1) + ids[held] + 1))


def _blocked(corpus: Corpus, pages: list[int], tokens: Tokens, texts: list[str], addressed: np.ndarray) -> np.ndarray:
    """Words no anchor may hold: overlapping an existing link, a code block or a line of the site's template
    (load.template_lines), on a heading line (heading_lines), in a web address (web_addresses, on the pages that
    `addressed` says may hold one), or inside a sentence that only repeats the page's own title. Each such span covers
    a run of its page's words, found by binary search on keys (page, offset) for all the pages' spans at once."""
    apart = [(place, start, end) for place, (page, text) in enumerate(zip(pages, texts))
             for start, end in [*_title_sentences(text, corpus.titles[page].strip().lower()),
                                *heading_lines(text, corpus.headings[page]), *(web_addresses(text) if addressed[place] else ())]]
    apart = np.array(apart, dtype=np.int64).reshape(-1, 3)
    places, spans = zip(*(kind.in_pages(pages) for kind in (corpus.link_spans, corpus.code_spans, corpus.template_spans)))
    linked = np.column_stack([np.concatenate(places), np.concatenate(spans)])
    place = np.repeat(np.arange(len(pages), dtype=np.int64), tokens.counts)
    starts, ends = _keys(place, tokens.starts), _keys(place, tokens.ends)
    first = np.concatenate([np.searchsorted(ends, _keys(linked[:, 0], linked[:, 1]), "right"),  # words ending after the start
                            np.searchsorted(starts, _keys(apart[:, 0], apart[:, 1]), "left")])
    after = np.concatenate([np.searchsorted(starts, _keys(linked[:, 0], linked[:, 2]), "left"),  # and starting before the end
                            np.searchsorted(ends, _keys(apart[:, 0], apart[:, 2]), "right")])
    spanned = first < after
    return _covered(len(place), first[spanned], after[spanned])


def heading_lines(text: str, headings: str) -> list[tuple[int, int]]:
    """(start, end) of each line of a page's text that is one of its headings (Corpus.headings, one a line)."""
    wanted = {line.strip() for line in headings.split("\n")} - {""}
    spans, start = [], 0
    for line in text.split("\n") if wanted else ():
        if line.strip() in wanted:
            spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def _with_web_words(keywords: Keywords, tokens: Tokens) -> np.ndarray:
    """Per text of the tokens, whether it holds a word every web address starts with ("http", "https", "www"): only
    those are searched for one. A look-up of the words' ids (0.02 CPU-s at 100,000 synthetic pages), where the substring
    searches of every text took 0.69 (BENCHMARKS.md, "Quality")."""
    known = keywords.vocabulary.ids
    words = [known[term] for term in dict.fromkeys(stem(word) for word in _WEB_WORDS) if term in known]
    owner = np.repeat(np.arange(len(tokens.counts)), tokens.counts)
    return np.bincount(owner[np.isin(tokens.ids, words)], minlength=len(tokens.counts)) > 0


def web_addresses(text: str) -> list[tuple[int, int]]:
    """(start, end) of each web address written out in the text (from "http://", "https://" or "www." to the next white
    space). Most texts hold none, which substring tests ("://", "www.", "WWW.") tell at C speed, before any regex scan."""
    if "://" not in text and "www." not in text and "WWW." not in text:
        return []
    return [match.span() for match in _WEB_ADDRESS.finditer(text)]


def _title_sentences(text: str, title: str) -> list[tuple[int, int]]:
    """The sentences of text that say nothing but title (lower case), found from where the title occurs."""
    lower = text.lower()
    if not title or title not in lower:
        return []
    if len(lower) != len(text):  # lowering changed some lengths, so offsets in lower are not offsets in text
        return [(start, end) for start, end in sentence_spans(text) if text[start:end].strip().lower() == title]
    sentences = []
    at = lower.find(title)
    while at >= 0:
        start, end = sentence_at(text, at)
        if lower[start:end].strip() == title and (start, end) not in sentences[-1:]:
            sentences.append((start, end))
        at = lower.find(title, at + 1)
    return sentences


def _keys(place: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """(page, character offset) as one sortable number; an offset outside the page's text is brought to its edge."""
    return place << 32 | np.clip(offset, 0, (1 << 32) - 1)
