"""Words as the analysis compares them: lower-cased, lightly stemmed, without stop words.

The keyword index and the anchor search share one :class:`Vocabulary`, so a term has the same id
in both. It splits a block of texts into words with a compiled pass over the code points (the
words' offsets), finds most words' ids by packing their spellings into numbers (looked up in a hash
table of numpy arrays, no Python per word), and stems each distinct spelling once. Splitting is safe in
any thread, so the keyword fit splits the next blocks in threads (tokenize_all) while ids are given
block after block.
"""

from __future__ import annotations

import re
import tempfile
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from analysis.compiled import compiled
from analysis.lookup import HashTable
from analysis.stop_words import ENGLISH_STOP_WORDS
from analysis.texts import read_all, write_all

WORD_JOINERS = "'\u2019-"  # what joins two runs of letters into one word ("don't", "well-known")
WORD = re.compile(rf"\w+(?:[{WORD_JOINERS}]\w+)*")
STOP = -1  # the term id of a stop word
PHRASE_JOINERS = " -./"  # what may stand alone between two words of a phrase ("Rust 1.51", "CI/CD")
PACKED_LENGTH = 18  # characters of a word packed into two exact numbers, 9 characters of 7 bits each
_PACKED_PER_NUMBER = 9
_CURLY_APOSTROPHE, _PACKED_CURLY_APOSTROPHE = 0x2019, 1  # packed as a code no word holds
_WORD_CHARACTER = re.compile(r"\w")
_ASCII_WORD_CHARACTERS = np.array([_WORD_CHARACTER.match(chr(code)) is not None for code in range(128)])
_JOINER_CODES = np.array([ord(character) for character in WORD_JOINERS], dtype=np.uint32)
_CAPITAL_A, _CAPITAL_Z, _DIGIT_0, _DIGIT_9, _UNDERSCORE, _DASH = (ord(character) for character in "AZ09_-")
_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


ARTICLES = ("a", "an", "the")  # may start an anchor: "with the AeroPress in the morning" (phrases._valid_windows)
PHRASE_BREAKS = (  # words no noun phrase runs on through: "a kettle with", "the Chemex and", not "a blade mill"
    "about above across after against along among and around as at because before behind below beside between beyond "
    "but by down during for from if in into nor of off on onto or out over since so than that through to toward "
    "towards under until up upon via when where whether which while who whom whose with within without").split()
CLAUSE_WORDS = (  # phrase breaks too; a window that holds one is a clause, not a name: "Compiler team had a meeting",
    # "kettle you can pour", "Brennan did", "treatment and be read", "library we use" ("I" is also a numeral: "Part I")
    "am be been being has have had will would shall should can could may might must do does did hasn't haven't hadn't "
    "won't wouldn't shouldn't can't couldn't mustn't don't doesn't didn't i'm i've i'll i'd we're we've we'll we'd "
    "you're you've you'll you'd they're they've they'll they'd he's she's it's that's there's let's we you they he she"
).split()
COPULAS = ("is", "are", "was", "were")  # clause words too, but before a participle in "-ed": "how coffee is processed"
ARTICLE, PHRASE_BREAK, CLAUSE_WORD, COPULA = 1, 2, 3, 4  # _function_words' values
ADVERBS = frozenset("today tomorrow yesterday tonight soon later instead ago nowadays upfront anymore".split())
SUBORDINATORS = frozenset("after although as because before if once since though unless until when whenever where whereas "
                          "whether while".split())  # what a clause, subject then verb, follows: "once cargo doc finishes"
DETERMINERS = frozenset((*ARTICLES, *"this that these those my your his her its our their".split()))
WHEN_WORDS = frozenset((  # words that say when, not what ("may" is a stop word already)
    "january february march april june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday "
    "today tomorrow yesterday day week weekend month year decade am pm gmt utc est edt cst cdt pst pdt cet cest bst"
).split())
_NUMBER_OR_TIME = re.compile(r"\d+(?:st|nd|rd|th|am|pm)?")  # "2018", "17th", "3pm": a year, a day, a time, a count


@lru_cache(maxsize=1)
def _function_words() -> HashTable:
    """The packed spellings (_pack's rows) of ARTICLES, PHRASE_BREAKS, CLAUSE_WORDS and COPULAS (with a straight or a
    curly apostrophe), lower-case, capitalised and in capitals, to their kinds (ARTICLE ...): one probe a word, where
    np.isin sorted every word of the texts (2.5 s more of the keyword fit at 100,000 synthetic pages; BENCHMARKS.md,
    "Quality")."""
    kinds = {spelling: kind for words, kind in ((PHRASE_BREAKS, PHRASE_BREAK), (CLAUSE_WORDS, CLAUSE_WORD),
                                                (COPULAS, COPULA), (ARTICLES, ARTICLE))
             for word in words for curled in {word, word.replace("'", "\u2019")}
             for spelling in (curled, curled.capitalize(), curled.upper())}
    spellings = list(kinds)
    starts = _text_starts(spellings)
    keys = _pack(_code_points(spellings)[1], starts, starts + np.array([len(spelling) for spelling in spellings]))
    return HashTable(np.int8).with_added(keys, np.array(list(kinds.values()), dtype=np.int8))


_VOWEL = re.compile("[aeiouy]")
_NOT_PLURAL = frozenset({"news"})  # Porter2's one such word that names pages: "News" is no plural of "new"


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A light English stemmer: enough to match "grinders" with "grinder" and "brewing" with "brew".

    "-ing" and "-ed" go only where a vowel is left (Porter's rule): "string" stays, so that it matches "strings"
    and not Rust's `str`. Snowball's full Porter2 was measured and not used: it conflates by derivation too
    ("experience" and "experiment"), and lost recall (BENCHMARKS.md, "Quality").
    """
    word = word.lower().replace("\u2019", "'").removesuffix("'s")
    if word in _NOT_PLURAL:
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        rest = word[: -len(suffix)]
        if (word.endswith(suffix) and len(rest) >= 3 and not word.endswith("ss")
                and (suffix not in ("ing", "ed") or _VOWEL.search(rest))):
            return rest + keep
    return word


def is_stop_word(word: str) -> bool:
    return word.lower() in ENGLISH_STOP_WORDS


SENTENCE_STARTS_AFTER = ".!?:\n"  # a word after one of these (and spaces) starts a sentence, a line or an item


def starts_a_sentence(text: str, at: int) -> bool:
    """Whether the word at text[at] starts the text, a sentence, a line or an item: where any word takes a capital."""
    while at and text[at - 1] in " \t":
        at -= 1
    return not at or text[at - 1] in SENTENCE_STARTS_AFTER


@lru_cache(maxsize=1)
def _when_terms() -> frozenset[str]:
    return frozenset(stem(word) for word in WHEN_WORDS)


def says_when_in_its_year(term: str) -> bool:
    """Whether a term (stemmed) is one of WHEN_WORDS, a month, a weekday, "week" or a time zone, as against a year or
    a number: a time that a page places relative to its own date ("the cycle in March and April")."""
    return term in _when_terms()


def says_only_when(term: str) -> bool:
    """Whether a term (stemmed) is a date, a time or a number and nothing else, each part of it ("1pm-2pm", "march's"):
    a phrase of such words ("3pm GMT", "25 February", "September of 2016") places something in time and names no page,
    whatever title words it matches ("Rust Compiler February 2022 Steering Cycle")."""
    return all(part in _when_terms() or _NUMBER_OR_TIME.fullmatch(part) for part in re.split(r"[-'\u2019]", term))


def reads_as_adverb_or_past(word: str) -> bool:
    """One of ADVERBS, or a word ending in "-ly", or in "-ed" but not "-eed" (a noun so spelled, "assembly", "embed", is
    taken for one too): what may end a clause after a noun phrase without being part of it ("1.4 beta today",
    "discussing Danger internally", "the snapshot test failed")."""
    word = word.lower()
    return word.endswith("ly") or (word.endswith("ed") and not word.endswith("eed")) or word in ADVERBS


def terms(text: str) -> list[str]:
    """The stemmed content words of a text, in order: what TF-IDF counts and anchors match."""
    return [stem(word) for word in WORD.findall(text.lower()) if word not in ENGLISH_STOP_WORDS]


@dataclass
class Tokens:
    """The words of some texts end to end as arrays: term id (STOP for stop words), character span in its
    own text, and whether the characters between a word and the next may stand inside a phrase
    (PHRASE_JOINERS; never across texts), and whether that is a dot, or a colon between digits: then the two are
    one word to a reader ("1.32.0", "crates.io", "Node.js", "1:16", "10:30"), which no anchor splits. Nor does an
    anchor split words joined by a slash ("src/main.rs", "HTTP/2", "I/O": an anchor "2 session" or "O error" cuts a
    name in two) or a run of words in capitals ("GROUP BY", "NOT NULL": "ordering by GROUP" is no phrase of the text),
    though a reader counts their words apart ("TypeScript/Flow" is two; phrases.py counts a stop word joined by a slash
    as part of its neighbour: "I/O" is one)."""

    ids: np.ndarray  # int32, one per word
    starts: np.ndarray  # int32
    ends: np.ndarray  # int32
    joined: np.ndarray  # bool: to the next word
    dotted: np.ndarray  # bool: joined to the next word by a dot (or a colon between digits)
    slashed: np.ndarray  # bool: joined to the next word by a slash
    capitals: np.ndarray  # bool: this word and the next are in capitals, a space apart
    possessive: np.ndarray  # bool: the word ends in 's ("Rust's", "team's"): an anchor that ends on it ends before that
    article: np.ndarray  # bool: the word is an article (ARTICLES), which may start an anchor
    phrase_end: np.ndarray  # bool: no noun phrase runs on past the word: a break or a word of PHRASE_BREAKS comes next
    clause_word: np.ndarray  # bool: one of CLAUSE_WORDS, or of COPULAS not before a participle ("-ed"): in no anchor
    counts: np.ndarray  # words per text

    def select(self, texts: np.ndarray | list[int]) -> Tokens:
        """The words of these texts (by place), in this order."""
        counts = self.counts[texts]
        first = (np.cumsum(self.counts) - self.counts)[texts]
        words = np.arange(counts.sum()) + np.repeat(first - (np.cumsum(counts) - counts), counts)
        return Tokens(self.ids[words], self.starts[words], self.ends[words], self.joined[words], self.dotted[words],
                      self.slashed[words], self.capitals[words], self.possessive[words], self.article[words],
                      self.phrase_end[words], self.clause_word[words], counts)

    def distinct(self, terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The term ids of each text's content words, each once, in the order they first come, end to end (int64); how
        many each text has; and the place of each among these words (its first). terms: the vocabulary's size."""
        codes = self._codes(terms)
        content = np.flatnonzero(self.ids != STOP)
        first = content[np.sort(np.unique(codes[content], return_index=True)[1])]
        return codes[first] % terms, np.bincount(codes[first] // terms, minlength=len(self.counts)), first

    def only_in_dotted_words(self, places: np.ndarray, terms: int) -> np.ndarray:
        """Of the words at these places, whether their text writes their term only as a part of a dotted word ("1" and
        "26" of "Rust 1.26"). terms: the vocabulary's size."""
        codes = self._codes(terms)
        return ~np.isin(codes[places], codes[(self.ids != STOP) & ~in_dotted_words(self.dotted)])

    def _codes(self, terms: int) -> np.ndarray:
        """Each word as text * terms + term id (content words: ids >= 0): its term in its text."""
        return np.repeat(np.arange(len(self.counts), dtype=np.int64), self.counts) * terms + self.ids.astype(np.int64)

    def neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """(places, keys) of each content word followed in the same phrase by another content word (a space or a hyphen
        apart: a dotted or slashed name is one word already), keyed first term << 32 | second term: the pairs of
        words Keywords.collocations counts."""
        ids = self.ids.astype(np.int64)
        content = ids != STOP
        places = np.flatnonzero(self.joined[:-1] & ~self.dotted[:-1] & ~self.slashed[:-1] & content[:-1] & content[1:])
        return places, ids[places] << 32 | ids[places + 1]


def in_dotted_words(dotted: np.ndarray) -> np.ndarray:
    """Per word (Tokens.dotted: joined to the next by a dot), whether it is a part of a dotted word ("1.26")."""
    return dotted | np.concatenate([[False], dotted[:-1]])


class TokenFile:
    """Tokens of many texts, written once in text order to an unnamed temporary file and read back a few texts at a
    time: the anchor search takes the words the keyword fit split (splitting them again was 15% of its threads' time)
    at 13 bytes a word on disk, none in memory (5.9 GB at 1,000,000 synthetic pages; BENCHMARKS.md, "Analysis")."""

    RECORD = np.dtype([("id", "<i4"), ("start", "<i4"), ("end", "<i4"), ("flags", "u1")])  # flags: FLAGS' bits in turn
    FLAGS = ("joined", "dotted", "slashed", "capitals", "possessive", "article", "phrase_end", "clause_word")

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)  # unbuffered: what is written is there for os.pread
        self._counts: list[np.ndarray] = []  # words per text, a block of texts each
        self._word_starts = np.zeros(1, dtype=np.int64)  # of each text, once every block is written

    def write(self, tokens: Tokens, texts: np.ndarray) -> None:
        """Add the tokens of these texts (by place) after those written so far."""
        tokens = tokens.select(texts)
        records = np.empty(len(tokens.ids), self.RECORD)
        records["id"], records["start"], records["end"] = tokens.ids, tokens.starts, tokens.ends
        records["flags"] = sum(getattr(tokens, flag).astype(np.uint8) << bit for bit, flag in enumerate(self.FLAGS))
        write_all(self._file, records.view(np.uint8))
        self._counts.append(tokens.counts)

    def close_writing(self) -> None:
        """Every block is written: texts may be read (from any thread)."""
        self._word_starts = np.concatenate([[0], np.cumsum(np.concatenate([np.zeros(0, dtype=np.int64), *self._counts]))])
        self._counts = []

    def read(self, texts: list[int]) -> Tokens:
        """The tokens of these texts, in this order: one read for each run of consecutive texts."""
        asked = np.asarray(texts, dtype=np.int64)
        texts = np.unique(asked)
        runs = np.flatnonzero(np.diff(texts, prepend=-2) != 1)
        bounds = zip(texts[runs].tolist(), np.append(texts[runs[1:] - 1], texts[-1:]).tolist()) if len(texts) else []
        size = self.RECORD.itemsize
        parts = [read_all(self._file, int(self._word_starts[first]) * size,
                          int(self._word_starts[last + 1] - self._word_starts[first]) * size) for first, last in bounds]
        records = np.frombuffer(b"".join(parts), self.RECORD)
        flags = {flag: (records["flags"] & (1 << bit)) > 0 for bit, flag in enumerate(self.FLAGS)}
        tokens = Tokens(records["id"].copy(), records["start"].copy(), records["end"].copy(), **flags,
                        counts=np.diff(self._word_starts)[texts])
        return tokens if np.array_equal(texts, asked) else tokens.select(np.searchsorted(texts, asked))


@dataclass
class Split:
    """Vocabulary.split of some texts: their tokens, with the ids of the words it could not look up still to find."""

    tokens: Tokens
    text: str  # the texts end to end
    starts: np.ndarray  # of each word in text
    ends: np.ndarray
    keys: np.ndarray  # the packed spelling of each word (_pack)
    unknown: np.ndarray  # the words whose ids are still to find


class Vocabulary:
    """Term ids for the stemmed content words of a corpus, assigned as words are first seen."""

    def __init__(self) -> None:
        self.terms: list[str] = []  # id -> stemmed term
        self.ids: dict[str, int] = {}  # stemmed term -> id
        self._spelling = _Spellings(self)
        self._packed = HashTable(np.int32)  # the packed spellings seen -> their term ids
        self._lock = threading.Lock()
        self._only_when = np.zeros(1, dtype=bool)  # says_only_when of each term so far, then False for STOP (-1)

    def __len__(self) -> int:
        return len(self.terms)

    def term_id(self, term: str) -> int:
        if term not in self.ids:
            self.ids[term] = len(self.terms)
            self.terms.append(term)
        return self.ids[term]

    def only_when(self, ids: np.ndarray) -> np.ndarray:
        """Per term id (STOP: False), whether the term says only when (says_only_when); each term tested once."""
        with self._lock:
            tested = len(self._only_when) - 1
            if tested < len(self.terms):
                new = np.fromiter(map(says_only_when, self.terms[tested:]), dtype=bool)
                self._only_when = np.concatenate([self._only_when[:-1], new, [False]])
            flags = self._only_when
        return flags[ids]

    def words_only_when(self, ids: np.ndarray, dotted: np.ndarray) -> np.ndarray:
        """Per word (its term id, and whether it is joined to the next by a dot: Tokens.dotted), whether it says only
        when and is no part of a dotted number: "31" of "Mar 31" and "2018" of "August 2018" say when, "31" of "Rust
        1.31" names a release."""
        return self.only_when(ids) & ~in_dotted_words(dotted)

    def tokenize(self, texts: list[str]) -> Tokens:
        """The words of the texts with their offsets and term ids."""
        return self.identify(self.split(texts))

    def distinct_terms(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The term ids of each text's content words, each once, in the order they first come, end to end (int64), and
        how many each text has: terms() of each, without a Python call a text (a million titles take ~1 s, not 10)."""
        tokens = self.tokenize(texts)
        return tokens.distinct(len(self))[:2]

    def tokenize_all(self, blocks: Iterable[list[str]], threads: int) -> Iterator[Tokens]:
        """tokenize() of each block of texts, in order, the next blocks split (and looked up among the spellings
        known so far) in `threads` threads meanwhile: ids are still given in text order, block after block."""
        with ThreadPoolExecutor(threads) as pool:
            ahead: deque[Future[Split]] = deque()
            for block in blocks:
                ahead.append(pool.submit(self.split, block))
                if len(ahead) > threads:
                    yield self.identify(ahead.popleft().result())
            while ahead:
                yield self.identify(ahead.popleft().result())

    def split(self, texts: list[str]) -> Split:
        """The words of the texts, and their ids where the spellings known now give them (safe in any thread).

        The texts are laid end to end on separate lines, and a compiled pass over the code points finds
        the words (_word_spans): runs of the regex's word characters, with single WORD_JOINERS inside
        (what WORD finds). A word of at most PACKED_LENGTH characters is packed into two numbers (_pack) and
        looked up among the packed spellings seen."""
        text, codes, in_word = _code_points(texts)
        starts, ends = _word_spans(codes, in_word)
        text_starts = _text_starts(texts)
        text_of = np.searchsorted(text_starts, starts, "right") - 1
        between, next_to = codes[ends[:-1]], starts[1:] - ends[:-1] == 1
        ratio = next_to & (between == ord(":")) & _is_digit(codes[ends[:-1] - 1]) & _is_digit(codes[starts[1:]])  # "1:16"
        joined = next_to & _among(between, PHRASE_JOINERS) | ratio
        dotted = joined & (between == ord(".")) | ratio
        slashed = joined & (between == ord("/"))
        in_capitals = _in_capitals(codes, starts, ends)
        capitals = next_to & (between == ord(" ")) & in_capitals[:-1] & in_capitals[1:]
        possessive = (ends - starts > 2) & _among(codes[ends - 2], "'\u2019") & ((codes[ends - 1] | 0x20) == ord("s"))
        keys = _pack(codes, starts, ends)
        kind = _function_words().get(keys)[0]
        article, breaks = kind == ARTICLE, kind >= PHRASE_BREAK
        clause_word = kind == CLAUSE_WORD
        copulas = np.flatnonzero(kind[:-1] == COPULA)  # but the last word's: it has no next word
        clause_word[copulas] = ~(joined[copulas] & _ends_in_ed(codes, ends[copulas + 1]))  # "is processed": a name
        clause_word[-1:] |= kind[-1:] == COPULA
        ids, unknown = self._known(keys, np.arange(len(keys)))
        tokens = Tokens(ids=ids, starts=(starts - text_starts[text_of]).astype(np.int32),
                        ends=(ends - text_starts[text_of]).astype(np.int32), joined=np.append(joined, False),
                        dotted=np.append(dotted, False), slashed=np.append(slashed, False),
                        capitals=np.append(capitals, False), possessive=possessive, article=article,
                        phrase_end=~np.append(joined, False) | np.append(breaks[1:], True), clause_word=clause_word,
                        counts=np.bincount(text_of, minlength=len(texts)))
        return Split(tokens, text, starts, ends, keys, unknown)

    def identify(self, split: Split) -> Tokens:
        """The split's tokens with every id: the words its look-up left unknown are looked up again (other blocks
        may have been identified since), then the spelling dict answers the rest, each new packed spelling once
        and every word that cannot be packed, in text order, so that ids are given in the order words are first
        seen. Blocks are identified one at a time, in text order."""
        ids, keys = split.tokens.ids, split.keys
        found, unknown = self._known(keys[split.unknown], split.unknown)
        ids[split.unknown] = found
        if len(unknown):
            new, first, inverse = _distinct_rows(keys[unknown])
            packable, known = keys[unknown, 0] > 0, new[:, 0] > 0
            asked = np.sort(np.concatenate([first[known], np.flatnonzero(~packable)]))
            found = np.zeros(len(unknown), dtype=np.int32)
            spans = zip(split.starts[unknown[asked]].tolist(), split.ends[unknown[asked]].tolist())
            found[asked] = np.fromiter((self._spelling[split.text[start:end]] for start, end in spans), dtype=np.int32,
                                       count=len(asked))
            found[packable] = found[first[inverse[packable]]]  # the id of the first word packed the same
            ids[unknown] = found
            self._remember(new[known], found[first[known]])
        return split.tokens

    def _known(self, keys: np.ndarray, places: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids of these packed words among the spellings known now, the places of those not known, or not packed)."""
        ids, known = self._packed.get(keys)
        return ids, places[~known]

    def _remember(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Add these packed spellings (distinct, none (0, 0)) and their ids to the table; threads tokenise at once."""
        with self._lock:
            new = ~self._packed.get(keys)[1]  # another thread may have added some meanwhile
            if new.any():  # else a copy of the whole table for nothing (nearly every block of the anchor search)
                self._packed = self._packed.with_added(keys[new], ids[new])


@compiled
def _pack(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each word as two numbers (a row) that are its spelling exactly, 7 bits a character (its ASCII code; a curly
    apostrophe 1, a code no word holds), if it is at most PACKED_LENGTH characters, all ASCII or curly apostrophes;
    (0, 0) for any other word. Numbers compare where strings would cost a dict look-up: 98-100% of the words of the
    crawls and of the synthetic site pack (BENCHMARKS.md, "Analysis")."""
    keys = np.zeros((len(starts), 2), np.uint64)
    for word in range(len(starts)):
        if ends[word] - starts[word] > PACKED_LENGTH:
            continue
        packed = True
        for place in range(ends[word] - starts[word]):
            code = codes[starts[word] + place]
            if code == _CURLY_APOSTROPHE:
                code = _PACKED_CURLY_APOSTROPHE
            elif code >= 128:
                packed = False
                break
            keys[word, place // _PACKED_PER_NUMBER] |= np.uint64(code) << np.uint64(7 * (place % _PACKED_PER_NUMBER))
        if not packed:
            keys[word, 0] = keys[word, 1] = 0
    return keys


def _distinct_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(keys, axis=0, return_index=True, return_inverse=True) of (n, 2) packed spellings, by a stable two-key
    sort: np.unique sorts rows as structured values, 4x slower here."""
    order = np.lexsort((keys[:, 1], keys[:, 0]))
    ordered = keys[order]
    starts = np.flatnonzero(np.append(True, (ordered[1:] != ordered[:-1]).any(axis=1)))
    opens = np.zeros(len(keys), dtype=np.int64)
    opens[starts] = 1
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(opens) - 1
    return ordered[starts], order[starts], inverse


@compiled
def _in_capitals(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per word: written in capitals ("GROUP", "EC2", "SQLITE_OK"): two characters or more, the first a capital, every
    one an ASCII capital, a digit, _ or -."""
    capitals = np.zeros(len(starts), np.bool_)
    for word in range(len(starts)):
        if ends[word] - starts[word] < 2 or not _CAPITAL_A <= codes[starts[word]] <= _CAPITAL_Z:
            continue
        capitals[word] = True
        for at in range(starts[word] + 1, ends[word]):
            code = codes[at]
            if not (_CAPITAL_A <= code <= _CAPITAL_Z or _DIGIT_0 <= code <= _DIGIT_9 or code == _UNDERSCORE or code == _DASH):
                capitals[word] = False
                break
    return capitals


def _is_digit(codes: np.ndarray) -> np.ndarray:
    return (codes >= ord("0")) & (codes <= ord("9"))


def _ends_in_ed(codes: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each word (ending at these offsets) ends in "ed", in any case: "processed", "STABILIZED"."""
    return ((codes[ends - 2] | 0x20) == ord("e")) & ((codes[ends - 1] | 0x20) == ord("d"))


def _among(codes: np.ndarray, characters: str) -> np.ndarray:
    """Which code points are one of these few characters (np.isin sorts; this compares)."""
    return np.logical_or.reduce([codes == ord(character) for character in characters])


def _code_points(texts: list[str]) -> tuple[str, np.ndarray, np.ndarray]:
    """The texts laid end to end on separate lines (a line break is neither in a word nor in a phrase), its code
    points, and which of them are the regex's word characters (\\w: ASCII from a table, each other code point asked
    of the regex once)."""
    text = "\n".join(texts)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    others = np.unique(codes[codes > 127])
    others_in_words = np.array([_WORD_CHARACTER.match(chr(code)) is not None for code in others.tolist()], dtype=bool)
    return text, codes, _word_characters(codes, others, others_in_words)


def _text_starts(texts: list[str]) -> np.ndarray:
    """Where each text starts among _code_points."""
    return np.cumsum([0, *(len(text) + 1 for text in texts[:-1])])


def word_counts(texts: list[str]) -> np.ndarray:
    """len(WORD.findall(text)) of each text, found at once (_word_spans): a regular expression's search a text cost 0.5 s
    of the anchor finder's making, on one core, at 100,000 synthetic pages."""
    _, codes, in_word = _code_points(texts)
    starts, _ = _word_spans(codes, in_word)
    return np.bincount(np.searchsorted(_text_starts(texts), starts, "right") - 1, minlength=len(texts))


def run_hashes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each text's runs of word characters (what the regex \\w+ finds), in order, as 64-bit hashes of their code
    points (FNV-1a), end to end: text i's are hashes[starts[i]:starts[i + 1]]. Equal runs have equal hashes, so a text
    whose hashes do not hold another's in a row does not hold its runs; the converse is only likely (a filter)."""
    _, codes, in_word = _code_points(texts)
    hashes, run_starts = _run_hashes(codes, in_word)
    return hashes, np.append(np.searchsorted(run_starts, _text_starts(texts)), len(hashes))


@compiled
def _word_characters(codes: np.ndarray, others: np.ndarray, others_in_words: np.ndarray) -> np.ndarray:
    """Which code points are word characters: ASCII from a table, the others (sorted) as others_in_words says."""
    in_word = np.empty(len(codes), np.bool_)
    for at in range(len(codes)):
        code = codes[at]
        in_word[at] = _ASCII_WORD_CHARACTERS[code] if code < 128 else others_in_words[np.searchsorted(others, code)]
    return in_word


@compiled
def _run_hashes(codes: np.ndarray, in_word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FNV-1a hash, first code point) of each run of word characters."""
    hashes, starts, runs = np.empty(len(codes) // 2 + 1, np.uint64), np.empty(len(codes) // 2 + 1, np.int64), 0
    value = _FNV_OFFSET
    for at in range(len(codes)):
        if not in_word[at]:
            continue
        if at == 0 or not in_word[at - 1]:
            value, starts[runs] = _FNV_OFFSET, at
        value = (value ^ np.uint64(codes[at])) * _FNV_PRIME
        if at + 1 == len(codes) or not in_word[at + 1]:
            hashes[runs] = value
            runs += 1
    return hashes[:runs].copy(), starts[:runs].copy()


@compiled
def _word_spans(codes: np.ndarray, in_word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the words in the code points: runs of the regex's word characters (in_word, where this
    marks a joiner between two word characters as one), with single WORD_JOINERS inside (what WORD finds)."""
    for at in range(1, len(codes) - 1):  # a joiner is no word character: those it joins are as the regex saw them
        if not in_word[at] and in_word[at - 1] and in_word[at + 1]:
            for joiner in _JOINER_CODES:
                in_word[at] |= codes[at] == joiner
    starts, ends, words = np.empty(len(codes) // 2 + 1, np.int64), np.empty(len(codes) // 2 + 1, np.int64), 0
    for at in range(len(codes) + 1):
        inside = at < len(codes) and in_word[at]
        before = at > 0 and in_word[at - 1]
        if inside and not before:
            starts[words] = at
        elif before and not inside:
            ends[words] = at
            words += 1
    return starts[:words].copy(), ends[:words].copy()


class _Spellings(dict):
    """Spelling -> term id, filled on first sight: each distinct spelling is stemmed once."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        super().__init__()
        self.vocabulary = vocabulary
        self.lock = threading.Lock()

    def __missing__(self, word: str) -> int:
        with self.lock:  # the anchor search tokenises in threads; a new term must get one id
            term_id = STOP if is_stop_word(word) else self.vocabulary.term_id(stem(word))
            self[word] = term_id
        return term_id
