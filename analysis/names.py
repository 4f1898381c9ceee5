"""What a page goes by: its name, the heads and headings a source may cite it by, and its title fallback anchor.

A page's name is its title without a series label ("Code Review: Emergence" is "Emergence"); a title that is a name, a
dash, then what the page is names its page by its head ("timeit - Measure execution time ..."); a heading of its own
that no other page has names a part of it. A source that writes one of these out word for word cites the page
(anchors.AnchorFinder.names_said finds where, with WrittenName and said_spans). Where no phrase of the source names the
target, the suggestion falls back to its name, cut where a phrase of it ends (title_anchor).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from analysis.index import Keywords
from analysis.load import Corpus, distinct
from analysis.phrases import MAX_WORDS, MIN_WORDS, Phrases
from analysis.windows import names_held
from analysis.words import PHRASE_BREAKS, WORD, stem

COMMON_SHARE = 0.3  # a word on more pages than this share names nothing by itself
SERIES_TITLES = 3  # a "Label: " that starts this many of the site's titles names a series, not the page
# a page name or heading of this many words or more, written out word for word in a source, cites the page (a title's
# head, title_heads, at any length; a name of one word fewer, in prose as its title writes it: anchors.AnchorFinder._cased_at)
NAME_SAID_WORDS = 3
WHOLE_NAME_WORDS = 7  # a name of up to this many words is its own title fallback, uncut (title_anchor)
LONGEST_TITLE_ANCHOR = 12  # a longer name is cut at MAX_WORDS words where no phrase of it ends before (title_anchor)
TRAILING = ",;:.-\u2013\u2014(["  # what a cut title anchor does not end on, nor on one of DANGLING
DANGLING = frozenset("a an the this that these those its our your their of for to in on at by with from into onto over "
                     "under about as via per than and or but nor if because while when where is are was were be been has "
                     "have had will would can could do does".split())  # words that lead into the rest of a title
_TITLE_BREAKS = frozenset(PHRASE_BREAKS) - {"to"}  # a title cut before one reads whole (_ends_a_phrase)
_TITLE_HEAD = re.compile(r" [-\u2013\u2014] ")  # between a title's head and the rest: "timeit - Measure execution time"


def short_title(title: str) -> str:
    """The page's title (already without its site name, see load.py), at most six words: its title words
    (AnchorFinder.target_terms)."""
    return " ".join(title.split()[:MAX_WORDS])


def title_anchor(name: str) -> str:
    """The fallback anchor: the page's name (page_names), whole up to WHOLE_NAME_WORDS words (cut at six, "Getting the
    Best from a Moka Pot" read "Getting the Best from a Moka", and "What to do if you are stuck" "What to do if you").
    A longer one is cut where a phrase of it ends (_ends_a_phrase), keeping at most MAX_WORDS words and at least half
    of them ("A call for contributors from the WG-prioritization team" -> "A call for contributors", "Rust 1.1 stable,
    the Community Subteam, and RustCamp" -> "Rust 1.1 stable, the Community Subteam"), less the words that lead into
    the rest of it (DANGLING) and the punctuation it would end on: a link's text that stops on "the", "for" or a comma
    reads as cut off, and so does one cut inside a phrase ("So you want to do a CSS3 3D transform?" read "So you
    want", "How to Start Small with Big Data and Google Analytics" "How to Start Small with Big"). A name with no such
    place is whole up to LONGEST_TITLE_ANCHOR words, else cut at MAX_WORDS all the same."""
    words = name.split()
    if len(words) <= WHOLE_NAME_WORDS:
        return " ".join(words)
    ends = [end for end in range(max(MIN_WORDS, (len(words) + 1) // 2), MAX_WORDS + 1) if _ends_a_phrase(words, end)]
    if not ends and len(words) <= LONGEST_TITLE_ANCHOR:
        return " ".join(words)
    kept = words[:ends[-1] if ends else MAX_WORDS]
    while len(kept) > 1 and (kept[-1].strip(TRAILING).lower() in DANGLING or not any(map(str.isalnum, kept[-1]))):
        kept.pop()
    return " ".join(kept).rstrip(TRAILING)


def _ends_a_phrase(words: list[str], end: int) -> bool:
    """Whether words[:end] of a title end where a phrase of it does: on a mark ("Subteam,", "Certificate?"; not the
    comma of a date, "October 15, 2018") or before a word that no noun phrase runs on through ("Program | at Artsy",
    "report | for 2021-04-27"), but "to", which as often leads a verb ("How to | Start", "want | to do")."""
    mark = words[end - 1][-1] in ",:;?!" and not (words[end - 1][-1] == "," and words[end][:1].isdigit())
    return mark or words[end].lower() in _TITLE_BREAKS


def page_names(titles: list[str]) -> list[str]:
    """What names each page in prose: its title without a series label ("Code Review: Emergence" -> "Emergence").

    A series label is a "Label: " that starts at least SERIES_TITLES of the site's titles ("Series:",
    "Code Review:", "Category:"); a label of fewer titles is the subject and stays ("Cargo: predictable
    dependency management"). Editors link a post of a series by what it is about, not by the series.
    """
    labels = Counter(title.partition(": ")[0] for title in titles if ": " in title)
    names = []
    for title in titles:
        label, _, rest = title.partition(": ")
        names.append(rest.strip() if rest.strip() and labels[label] >= SERIES_TITLES else title)
    return names


def title_heads(titles: list[str], keywords: Keywords) -> list[tuple[int, str]]:
    """(page, head) of each title that is a name, a dash, then what the page is ("timeit - Measure execution time of
    small code snippets", "argparse \u2014 Parser for command-line options"): the head is the page's name, as an editor
    writes it ("see timeit"), whatever its number of words. Only a head of one title, of more than one character (not
    an appendix's letter: "C - Derivable Traits"), and of rare words only (COMMON_SHARE: "Introduction - ..." names
    nothing)."""
    split = [(page, _TITLE_HEAD.split(title.strip(), 1)[0]) for page, title in enumerate(titles) if _TITLE_HEAD.search(title)]
    pages = Counter(head.lower() for _, head in split)
    named = [(page, head) for page, head in split if pages[head.lower()] == 1 and len(head) > 1]
    ids, counts = keywords.vocabulary.distinct_terms([head for _, head in named])
    held = ids < len(keywords.idf)
    rare = np.zeros(len(ids), dtype=bool)
    rare[held] = keywords.idf[ids[held]] >= keywords.idf_of_share(COMMON_SHARE)
    owner = np.repeat(np.arange(len(named)), counts)
    every_word_rare = (np.bincount(owner[rare], minlength=len(named)) == counts) & (counts > 0)
    return [named[at] for at in np.flatnonzero(every_word_rare).tolist()]


def cited_headings(corpus: Corpus, keywords: Keywords) -> PageNames:
    """The headings of each page (its main text's, one a line) that may cite it: NAME_SAID_WORDS words or more, some of
    them content words, and on no other page (a heading that several pages share, "What's in this release", is the
    site's template and names none of them)."""
    pages = Counter(heading for text in corpus.headings for heading in set(text.lower().splitlines()))
    return page_names_of([(page, heading) for page, text in enumerate(corpus.headings) for heading in dict.fromkeys(text.splitlines())
                          if pages[heading.lower()] == 1 and len(compared_words(heading)) >= NAME_SAID_WORDS], len(corpus), keywords)


def page_names_of(named: list[tuple[int, str]], pages: int, keywords: Keywords) -> PageNames:
    """PageNames of these (page, name) pairs, in page order, with the distinct terms of each; a name of stop words only
    names nothing and is left out."""
    ids, counts = keywords.vocabulary.distinct_terms([name for _, name in named])
    owner = np.repeat(np.arange(len(named)), counts)
    known = ids < len(keywords.idf)
    owner, ids = owner[known], ids[known]
    kept = distinct(owner)
    place = np.searchsorted(kept, owner)
    page = np.array([page for page, _ in named], dtype=np.int64)[kept]
    return PageNames(np.searchsorted(page, np.arange(pages + 1)), [named[row][1] for row in kept.tolist()],
                     np.searchsorted(place, np.arange(len(kept) + 1)), ids)


@dataclass
class PageNames:
    """Names of pages (a page's name, its cited headings): page p's are texts[starts[p]:starts[p + 1]], name n's terms
    are terms[term_starts[n]:term_starts[n + 1]]."""

    starts: np.ndarray  # (pages + 1,)
    texts: list[str]
    term_starts: np.ndarray  # (names + 1,)
    terms: np.ndarray

    def owners(self) -> np.ndarray:
        """The page of each name."""
        return np.repeat(np.arange(len(self.starts) - 1), np.diff(self.starts))

    def held(self, phrases: Phrases, pages: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The names whose every term the pair's source holds (pages[j] of the phrases, targets[j]): (j, the name's
        place in texts) of each, by j. Only these can be written out in the source (AnchorFinder.names_said)."""
        return names_held(targets, pages, self.starts, self.term_starts, self.terms, phrases.run_keys, phrases.terms)


_GOES_ON = re.compile(r"[.'\u2019-]?\w")  # after a match: the last word goes on ("1.26" in "1.26.1", "bug" in "bug-free")
_GOES_BACK = re.compile(r"\w[.'\u2019-]?$")  # before it: the first word started earlier


@dataclass
class WrittenName:
    """A page's name or heading, to look for written out word for word in lower-cased texts."""

    words: tuple[str, ...]  # compared_words of it

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """What matches the name's words in a lower-cased text, whatever spacing and punctuation part them. Compiled
        only for the texts whose runs may hold the name's (windows.runs_held): a compilation for every name asked was
        most of the rank stage on artsy and 18 s of 105 at 100,000 synthetic pages. A text the pattern matches always
        holds them: the match starts and ends beside no word character, and its runs are the name's."""
        return re.compile(r"\W+".join(re.escape(word).replace("'", "['\u2019]") for word in self.words))


def said_spans(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """The spans where the pattern (lower case, starting and ending with a word) matches whole words of the lower-cased
    text, in order. Searched without look-arounds, which would cost the regex engine its fast scan for the first word
    (8x slower here)."""
    for match in pattern.finditer(text):
        start, end = match.span()
        if not _GOES_BACK.search(text, max(0, start - 2), start) and not _GOES_ON.match(text, end):
            yield start, end


_BRACKETS = {"(": ")", "[": "]", "{": "}"}


def balanced(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of a name written out, with its brackets closed: a name is matched up to its last word ("WebAssembly
    System Interface (WASI"), so the anchor takes the brackets the text closes right after it, and ends before one it
    does not ("(WASI is not stable)"); None where fewer than MIN_WORDS words are left."""
    opened: list[tuple[int, str]] = []  # (where, its closing bracket), innermost last
    for at in range(start, end):
        if text[at] in _BRACKETS:
            opened.append((at, _BRACKETS[text[at]]))
        elif opened and text[at] == opened[-1][1]:
            opened.pop()
    while opened and text.startswith(opened[-1][1], end):
        end += 1
        opened.pop()
    if opened:
        end = start + len(text[start:opened[0][0]].rstrip())
    return (start, end) if len(compared_words(text[start:end])) >= MIN_WORDS else None


def compared_words(text: str) -> list[str]:
    """The text's words, lower case, a curly apostrophe as a straight one: what "word for word" compares."""
    return WORD.findall(text.lower().replace("\u2019", "'"))


def same_words(phrase: str, title: str) -> bool:
    """The phrase says the title, word for word (case, spacing, punctuation and endings aside: "Cargo target" says
    "Cargo Targets")."""
    return [stem(word) for word in compared_words(phrase)] == [stem(word) for word in compared_words(title)]
