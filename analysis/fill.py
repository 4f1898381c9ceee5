"""The queue's fill, compiled: rows walked in queue order under both caps, each given the anchor left for it.

Ranked.fill (score.py) decides which rows enter the queue one at a time: the caps and the anchors already used make each
row depend on the rows before it. In Python that walk cost ~9 us a row, 3.6 s of 100,000 synthetic pages with the
second core idle (BENCHMARKS.md, "Analysis"). Here its state is arrays (the anchors used in a hash table of two) and its
loop is compiled; it stops for what only Python has: a title's key (names.title_anchor), a phrase's completion
(anchors.completion: found beforehand for each row's likeliest anchor) and the next row of a source whose row it
refused (score.Ranked._row searches its anchors then). The rules are Ranked.fill's; phrases are compared by their keys
(anchor_keys.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from analysis.anchor_keys import LINKED, MAY_COMPLETE, SHOWN, phrase_key, phrase_keys
from analysis.anchors import completion
from analysis.compiled import compiled
from analysis.load import Spans
from analysis.names import title_anchor

SAME_ANCHOR_PAGES = 2  # pages that may point one anchor text at one target: editors repeat a name, not a dozen times
UNKNOWN = -2  # a completion (Rows.longer) or a title's length (QueueFill's) not found yet
DONE, REFUSED, WAITING, NEEDS_TITLE, NEEDS_COMPLETION, FULL, GROW = range(7)  # why _walk stopped
OUT_ROWS = 65_536  # rows taken that _walk holds before they are added to the queue
USED_SLOTS = 1024  # QueueFill.used_keys' at first, doubled before they would pass half full
_SPREAD, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)  # _used_slot's hash: Fibonacci's, as lookup.py's
Taken = Callable[[np.ndarray, np.ndarray, np.ndarray], None]  # adds rows taken to the queue: (rows, spans, strengths)


@dataclass
class Rows:
    """Rows to walk, in queue order: candidate row, source, target, score, and text anchors (option j of row i:
    starts[i, j]:ends[i, j], its strength, key and flags: anchor_keys.py; none: -1), with where each ends when completed
    by its next word (anchors.completion; UNKNOWN until found) and that longer phrase's key."""

    rows: np.ndarray
    sources: np.ndarray
    targets: np.ndarray
    scores: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    strengths: np.ndarray
    keys: np.ndarray
    flags: np.ndarray
    longer: np.ndarray
    longer_keys: np.ndarray

    def one(self, row: int) -> Rows:
        """That row alone, as views: a completion found for it (QueueFill.complete) is kept here too."""
        at = slice(row, row + 1)
        return Rows(self.rows[at], self.sources[at], self.targets[at], self.scores[at], self.starts[at], self.ends[at],
                    self.strengths[at], self.keys[at], self.flags[at], self.longer[at], self.longer_keys[at])


class QueueFill:
    """One fill's walk: the rows each target has taken and has had walked, the anchors used (by key and target), each
    source's taken anchors (spans, keys and lengths), and the rows taken since they were last handed over (hand_over),
    in the order taken: (candidate row, the anchor's span, its strength)."""

    def __init__(self, texts: list[str], names: list[str], links: Spans, link_keys: np.ndarray, max_per_page: int,
                 max_per_target: int) -> None:
        pages = len(names)
        self.texts, self.names, self.links, self.link_keys = texts, names, links, link_keys
        self.max_per_page, self.max_per_target = max_per_page, max_per_target
        self.named_keys, self.named_pages = _page_named(names)
        self.title_keys, self.title_lengths = np.zeros(pages, np.uint64), np.full(pages, UNKNOWN, np.int64)
        self.per_target, self.wanted, self.walk_order = (np.zeros(pages, np.int64) for _ in range(3))
        self.counts = np.zeros(3, np.int64)  # targets walked (walk_order's), rows taken not yet handed over, used_keys held
        # the anchors used: (target + 1, phrase key) -> pages that point it at the target, a hash table (_used_slot); a
        # numba typed dict compiled its own functions anew in every process (BENCHMARKS.md, "Analysis")
        self.used_keys, self.used_pages = np.zeros((USED_SLOTS, 2), np.uint64), np.zeros(USED_SLOTS, np.int64)
        self.taken_spans = np.zeros((pages * max_per_page, 2), np.int64)  # source s's from s * max_per_page
        self.taken_keys = np.zeros(pages * max_per_page, np.uint64)
        self.taken_lengths, self.taken_count = np.zeros(pages * max_per_page, np.int64), np.zeros(pages, np.int64)
        self.out_rows, self.out_spans = np.zeros(OUT_ROWS, np.int64), np.zeros((OUT_ROWS, 2), np.int64)
        self.out_strengths = np.zeros(OUT_ROWS, np.float64)

    def rows(self, rows: np.ndarray, sources: np.ndarray, targets: np.ndarray, scores: np.ndarray, starts: np.ndarray,
             ends: np.ndarray, strengths: np.ndarray, keys: np.ndarray, flags: np.ndarray) -> Rows:
        """Rows to walk, each row's likeliest anchor completed: its first that no row before can refuse it (shown,
        not a link's text, not another page's name). Most rows take it; the walk stops for the others' completions."""
        made = Rows(rows, sources, targets, scores, starts, ends, strengths, keys, flags,
                    np.full(starts.shape, UNKNOWN, np.int64), np.zeros(starts.shape, np.uint64))
        free = (flags & SHOWN > 0) & (flags & LINKED == 0)
        if len(self.named_keys):
            at = np.searchsorted(self.named_keys, keys).clip(max=len(self.named_keys) - 1)
            free &= (self.named_keys[at] != keys) | (self.named_pages[at] == targets[:, None])
        likeliest = np.argmax(free, axis=1)
        every = np.arange(len(free))
        completing = np.flatnonzero(free[every, likeliest] & (flags[every, likeliest] & MAY_COMPLETE > 0))
        for row, option in zip(completing.tolist(), likeliest[completing].tolist()):
            self.complete(made, row, option)
        return made

    def walk(self, rows: Rows, position: int, top: tuple | None, taken: Taken) -> tuple[int, int, int]:
        """Walk rows from position on until they end (DONE), one is refused (REFUSED, with its source), or the next
        comes after top (WAITING): the first row waiting its turn, (-score, source, target, ...) as Ranked.fill heaps
        them. Returns (why, the next position, the source refused); hands the rows taken to taken (hand_over) when
        they fill their arrays."""
        while True:
            why, position, detail = _walk(
                rows.rows, rows.sources, rows.targets, rows.scores, rows.starts, rows.ends, rows.strengths, rows.keys,
                rows.flags, rows.longer, rows.longer_keys, position, top is not None, *(top[:3] if top else (0.0, 0, 0)),
                self.max_per_page, self.max_per_target, self.named_keys, self.named_pages, self.title_keys,
                self.title_lengths, self.links.starts, self.links.spans, self.link_keys, self.per_target, self.wanted,
                self.walk_order, self.counts, self.used_keys, self.used_pages,
                self.taken_spans, self.taken_keys, self.taken_lengths, self.taken_count, self.out_rows, self.out_spans,
                self.out_strengths)
            if why == NEEDS_TITLE:
                title = title_anchor(self.names[detail]).lower()
                self.title_keys[detail], self.title_lengths[detail] = phrase_key(title), len(title)
            elif why == NEEDS_COMPLETION:
                self.complete(rows, position, detail)
            elif why == FULL:
                self.hand_over(taken)
            elif why == GROW:
                self.grow_used()
            else:
                return why, position, detail

    def complete(self, rows: Rows, row: int, option: int) -> None:
        """Where one anchor ends when completed (anchors.completion), and the key of that longer phrase."""
        text, start, end = self.texts[rows.sources[row]], int(rows.starts[row, option]), int(rows.ends[row, option])
        rows.longer[row, option] = longer = completion(text, start, end)
        if longer != end:
            rows.longer_keys[row, option] = phrase_key(text[start:longer].lower())

    def grow_used(self) -> None:
        """Twice the slots for the anchors used, which _walk asks for before they would pass half full."""
        keys, pages = np.zeros((2 * len(self.used_keys), 2), np.uint64), np.zeros(2 * len(self.used_pages), np.int64)
        _placed(self.used_keys, self.used_pages, keys, pages)
        self.used_keys, self.used_pages = keys, pages

    def hand_over(self, taken: Taken) -> None:
        """Hand the rows taken since the last call to taken(candidate rows, spans, strengths)."""
        count = int(self.counts[1])
        taken(self.out_rows[:count], self.out_spans[:count], self.out_strengths[:count])
        self.counts[1] = 0

    def walked(self) -> dict[int, int]:
        """The rows walked of each target, in the order the targets were first walked."""
        order = self.walk_order[:self.counts[0]]
        return dict(zip(order.tolist(), self.wanted[order].tolist()))


def _page_named(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(keys, pages) of the names (lower case) that one page has, by key: a phrase that is another page's name names that
    page ("DROP TRIGGER" is no anchor for DROP EVENT TRIGGER, "Ninja Multi-Config" none for a variable that mentions it).
    A name several pages have ("Examples") names none of them."""
    pages: dict[str, int] = {}
    for page, name in enumerate(names):
        key = name.lower()
        pages[key] = -1 if key in pages else page
    named = {name: page for name, page in pages.items() if page >= 0}
    keys, owners = phrase_keys(list(named)), np.array(list(named.values()), dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    return keys[order], owners[order]


@compiled
def _walk(rows, sources, targets, scores, starts, ends, strengths, keys, flags, longer, longer_keys, position, waiting,
          top_score, top_source, top_target, max_per_page, max_per_target, named_keys, named_pages, title_keys,
          title_lengths, link_starts, link_spans, link_keys, per_target, wanted, walk_order, counts, used_keys, used_pages,
          taken_spans, taken_keys, taken_lengths, taken_count, out_rows, out_spans, out_strengths):
    """QueueFill.walk's loop: returns (why it stopped, the next position, what Python is asked for): the source refused
    (REFUSED), the target whose title key (NEEDS_TITLE) or the option whose completion (NEEDS_COMPLETION) it needs;
    else -1."""
    for row in range(position, len(rows)):
        source, target = sources[row], targets[row]
        if waiting and (top_score, top_source, top_target) < (-scores[row], source, target):
            return WAITING, row, -1
        if counts[1] == len(out_rows):
            return FULL, row, -1
        if 2 * (counts[2] + 1) > len(used_keys):  # the anchors used would pass half the table's slots
            return GROW, row, -1
        if per_target[target] >= max_per_target:
            _walked(target, wanted, walk_order, counts)
            return REFUSED, row + 1, source
        base, held = source * max_per_page, taken_count[source]
        if held == max_per_page:  # never (a source's rows walked are its first max_per_page, and one a row refused)
            raise ValueError("a source has taken max_per_page rows already")  # rather than write past its places
        chosen = -1
        for option in range(starts.shape[1]):
            start, end, key = starts[row, option], ends[row, option], keys[row, option]
            if (flags[row, option] & SHOWN and not flags[row, option] & LINKED
                    and used_pages[_used_slot(used_keys, target, key)] < SAME_ANCHOR_PAGES
                    and _names(named_keys, named_pages, key, target)
                    and not _holds(taken_keys, taken_lengths, base, held, key, end - start)
                    and not _overlaps(taken_spans, base, held, start, end)):
                chosen = option
                break
        if chosen >= 0:
            start, end, key = starts[row, chosen], ends[row, chosen], keys[row, chosen]
            shown_end, shown_key = end, key
            if flags[row, chosen] & MAY_COMPLETE:
                if longer[row, chosen] == UNKNOWN:
                    return NEEDS_COMPLETION, row, chosen
                if _completes(longer[row, chosen], longer_keys[row, chosen], source, target, start, end, named_keys,
                              named_pages, link_starts, link_spans, link_keys, taken_spans, taken_keys, taken_lengths,
                              base, held):
                    shown_end, shown_key = longer[row, chosen], longer_keys[row, chosen]
            _walked(target, wanted, walk_order, counts)
            taken_spans[base + held, 0], taken_spans[base + held, 1] = start, shown_end
            taken_keys[base + held], taken_lengths[base + held] = shown_key, shown_end - start
            taken_count[source] += 1
            strength = np.float64(strengths[row, chosen])
        else:
            if title_lengths[target] == UNKNOWN:
                return NEEDS_TITLE, row, target
            key, length = title_keys[target], title_lengths[target]
            _walked(target, wanted, walk_order, counts)
            if (used_pages[_used_slot(used_keys, target, key)] >= SAME_ANCHOR_PAGES
                    or _holds(taken_keys, taken_lengths, base, held, key, length)
                    or _links_have(link_starts, link_spans, link_keys, source, key, length)):
                return REFUSED, row + 1, source
            start = shown_end = -1
            strength = 0.0
        slot = _used_slot(used_keys, target, key)
        if used_keys[slot, 0] == 0:
            used_keys[slot, 0], used_keys[slot, 1] = target + 1, key
            counts[2] += 1
        used_pages[slot] += 1
        per_target[target] += 1
        out = counts[1]
        out_rows[out], out_spans[out, 0], out_spans[out, 1], out_strengths[out] = rows[row], start, shown_end, strength
        counts[1] += 1
    return DONE, len(rows), -1


@compiled
def _used_slot(used_keys, target, key) -> int:
    """The slot of QueueFill.used_keys (a power of two of them) that holds (target + 1, key), else the free slot where
    it would go (a free one holds 0 and counts no pages): open addressing, the next slot tried after a taken one."""
    mask, low = len(used_keys) - 1, np.uint64(target + 1)
    slot = np.int64((((key ^ (low * _MIX)) * _SPREAD) >> np.uint64(32)) & np.uint64(mask))  # the product's middle bits
    while used_keys[slot, 0] != 0 and (used_keys[slot, 0] != low or used_keys[slot, 1] != key):
        slot = (slot + 1) & mask
    return slot


@compiled
def _placed(used_keys, used_pages, keys, pages) -> None:
    """Put the anchors used of one table (used_keys, used_pages) in a larger one (keys, pages)."""
    for at in range(len(used_keys)):
        if used_keys[at, 0] != 0:
            slot = _used_slot(keys, np.int64(used_keys[at, 0]) - 1, used_keys[at, 1])
            keys[slot, 0], keys[slot, 1], pages[slot] = used_keys[at, 0], used_keys[at, 1], used_pages[at]


@compiled
def _walked(target, wanted, walk_order, counts) -> None:
    if wanted[target] == 0:
        walk_order[counts[0]] = target
        counts[0] += 1
    wanted[target] += 1


@compiled
def _names(named_keys, named_pages, key, target) -> bool:
    """The phrase of this key is no other page's name (QueueFill's named_*)."""
    at = np.searchsorted(named_keys, key)
    return at == len(named_keys) or named_keys[at] != key or named_pages[at] == target


@compiled
def _holds(taken_keys, taken_lengths, base, held, key, length) -> bool:
    """One of the source's taken anchors has this phrase (its key), as long."""
    for at in range(base, base + held):
        if taken_keys[at] == key and taken_lengths[at] == length:
            return True
    return False


@compiled
def _overlaps(spans, base, held, start, end) -> bool:
    """One of spans[base:base + held] overlaps start:end."""
    for at in range(base, base + held):
        if start < spans[at, 1] and spans[at, 0] < end:
            return True
    return False


@compiled
def _links_have(link_starts, link_spans, link_keys, source, key, length) -> bool:
    """A link of the source has this text (its key), as long: it points elsewhere."""
    for link in range(link_starts[source], link_starts[source + 1]):
        if link_keys[link] == key and link_spans[link, 1] - link_spans[link, 0] == length:
            return True
    return False


@compiled
def _completes(longer, longer_key, source, target, start, end, named_keys, named_pages, link_starts, link_spans,
               link_keys, taken_spans, taken_keys, taken_lengths, base, held) -> bool:
    """The anchor start:end is shown to longer, the word that completes its phrase (anchors.completion) included: that
    word runs into none of the source's links and taken anchors (anchors.completion_clear_of), and the longer phrase is
    no other page's name and points nowhere else (the text of one of those)."""
    links = link_starts[source + 1] - link_starts[source]
    if (longer == end or _overlaps(taken_spans, base, held, end, longer)
            or _overlaps(link_spans, link_starts[source], links, end, longer)):
        return False
    return (_names(named_keys, named_pages, longer_key, target)
            and not _holds(taken_keys, taken_lengths, base, held, longer_key, longer - start)
            and not _links_have(link_starts, link_spans, link_keys, source, longer_key, longer - start))
