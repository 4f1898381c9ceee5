"""Pages of one series: titles that say the same thing but for when ("Lang team March update", "Lang team April
update", "2019-10-10 Compiler Team Triage Meeting").

Such pages share their template's words ("planning meeting", "steering cycle"), so each looks like the likeliest link
of every other, and a phrase of those words names the series, not the page: it would send the reader of the June update
to some other month's without saying which. So a phrase of a source names a page of its own series only if it holds a
word of that page's title that its own title lacks ("sprint 1 post" on sprint 2's page; a month or a weekday only of a
page dated near the source: anchors.Matches.sets_apart), and the pair is a suggestion only with such a phrase, where the
source writes out that page's name (anchors.AnchorFinder.names_said: "see the Lang team February update"), or where
the page comes just before or after it in the series, which editors link as "last time" or "part 2". rustblog's queue
held 164 such pairs (11%) where its editors linked 3 of their 199 editorial links so (BENCHMARKS.md, "Quality").
Releases are no such series: "1.26" of "Announcing Rust 1.26" names a version (words.Vocabulary.words_only_when)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from analysis.load import among
from analysis.words import Vocabulary


FAR_DAYS = 183  # half a year: "April", written in February, is the April before or after it, nearest first
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass
class Series:
    """Per page, order-free keys of its title's content words: those that say more than when, and those that say only
    when (a sum of the words' hashes; 0 for none); and its neighbours in its series, by date (then address): the
    previous and the next page (-1: none)."""

    what: np.ndarray  # uint64
    when: np.ndarray  # uint64
    serial: np.ndarray  # bool: another page's title has the same words that say what
    previous: np.ndarray  # int64
    next: np.ndarray  # int64
    days: np.ndarray  # float64: its date (load.Corpus.published) as days since 1970, NaN if unknown

    @classmethod
    def of(cls, titles: list[str], published: list[str | None], urls: list[str], vocabulary: Vocabulary) -> Series:
        tokens = vocabulary.tokenize(titles)
        ids, counts, first = tokens.distinct(len(vocabulary))  # each word of a title once
        when = vocabulary.words_only_when(tokens.ids, tokens.dotted)[first]  # "2018" says when; "26" of "1.26" more
        owner, hashes = np.repeat(np.arange(len(titles)), counts), _mixed(ids)
        what, when_key = np.zeros(len(titles), np.uint64), np.zeros(len(titles), np.uint64)
        np.add.at(what, owner[~when], hashes[~when])  # uint64: wraps around, as a hash should
        np.add.at(when_key, owner[when], hashes[when])
        previous, following = np.full(len(titles), -1, np.int64), np.full(len(titles), -1, np.int64)
        keys, counts = np.unique(what, return_counts=True)
        serial = among(what, keys[(counts > 1) & (keys != 0)])
        ordered = sorted(np.flatnonzero(serial).tolist(),  # few pages: sorted in Python
                         key=lambda page: (int(what[page]), published[page] or "", urls[page]))
        for before, after in zip(ordered, ordered[1:]):
            if what[before] == what[after]:
                previous[after], following[before] = before, after
        dates = [date[:10] if date and _DATE.match(date) else "NaT" for date in published]
        days = np.array(dates, dtype="datetime64[D]")
        days = np.where(np.isnat(days), np.nan, days.astype(np.float64))
        return cls(what, when_key, serial, previous, following, days)

    def siblings(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Per pair: the target is of the source's series (the same title words but for when, which differ); asked of
        the few pairs whose source has a series (score.py asks it of every candidate: 0.3 s at 100,000 pages, else)."""
        found = np.zeros(len(sources), dtype=bool)
        rows = np.flatnonzero(self.serial[sources])
        sources, targets = sources[rows], targets[rows]
        found[rows] = (self.what[sources] == self.what[targets]) & (self.when[sources] != self.when[targets])
        return found

    def apart(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Per pair: siblings, but not the page just before or after the source in its series."""
        found = self.siblings(sources, targets)
        rows = np.flatnonzero(found)
        sources, targets = sources[rows], targets[rows]
        found[rows] = (targets != self.previous[sources]) & (targets != self.next[sources])
        return found

    def far(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Per pair: both are dated, FAR_DAYS or more apart: a month or a weekday that the source names without its
        year is one near its own date, not the target's."""
        return np.abs(self.days[sources] - self.days[targets]) >= FAR_DAYS  # NaN: False


def _mixed(ids: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each term id (splitmix64's finaliser), so that sums of a few are distinct."""
    mixed = (ids.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(30)
    mixed *= np.uint64(0xBF58476D1CE4E5B9)
    mixed ^= mixed >> np.uint64(27)
    mixed *= np.uint64(0x94D049BB133111EB)
    return mixed ^ (mixed >> np.uint64(31))
