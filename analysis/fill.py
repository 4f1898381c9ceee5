"""The queue's fill, compiled: rows walked in queue order under both caps, each given the anchor left for it.

Ranked.fill (score.py) decides which rows enter the queue one at a time: the caps and the anchors already used make each
row depend on the rows before it. In Python that walk cost ~9 us a row, 3.6 s of 100,000 synthetic pages with the
second core idle (BENCHMARKS.md, "Analysis"). Here its state is arrays (the anchors used in a hash table of two, the
rows waiting their turn in a heap) and its loop is compiled; it stops for what only Python has: a title's key
(names.title_anchor), a phrase's completion (anchors.completion: found beforehand for each row's likeliest anchor) and
the anchors of a row waiting that were not searched yet (score.Ranked._search_waiting). The rules are Ranked.fill's;
phrases are compared by their keys (anchor_keys.py).
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
DONE, NEEDS_TITLE, NEEDS_COMPLETION, NEEDS_SEARCH, FULL, GROW, GROW_HEAP = range(7)  # why _walk stopped
OUT_ROWS = 65_536  # rows taken that _walk holds before they are added to the queue
USED_SLOTS = 1024  # QueueFill.used_keys' (and later_keys') at first, doubled before they would pass half full
HEAP_ROWS = 1024  # rows QueueFill's heap holds at first, doubled when full
_SPREAD, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)  # _used_slot's hash: Fibonacci's, as lookup.py's
Taken = Callable[[np.ndarray, np.ndarray, np.ndarray], None]  # adds rows taken to the queue: (rows, spans, strengths)
Search = Callable[[np.ndarray], "Rows"]  # the heap's entries (source, target, row, place) -> rows, their anchors searched


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

    def columns(self) -> tuple[np.ndarray, ...]:
        """The arrays, in the order of the fields (as the compiled walk takes them)."""
        return (self.rows, self.sources, self.targets, self.scores, self.starts, self.ends, self.strengths, self.keys,
                self.flags, self.longer, self.longer_keys)


class QueueFill:
    """One fill's walk: the rows each target has taken and has had walked, the anchors used (by key and target), each
    source's taken anchors (spans, keys and lengths), and the rows taken since they were last handed over (hand_over),
    in the order taken: (candidate row, the anchor's span, its strength). A source's row refused lets its next row
    (in its group of `grouped`, from `starts`) wait its turn in a heap, by (-score, source, target), as (source,
    target, candidate row, place in the source's group); the rows searched for them (remember) are held in `later`,
    found by candidate row in a hash table of two (later_keys: (1, row), later_at: its place)."""

    def __init__(self, texts: list[str], names: list[str], links: Spans, link_keys: np.ndarray, max_per_page: int,
                 max_per_target: int, grouped: np.ndarray, starts: np.ndarray, scores: np.ndarray,
                 targets: np.ndarray) -> None:
        pages = len(names)
        self.grouped, self.starts, self.scores, self.targets = grouped, starts, scores, targets
        self.texts, self.names, self.links, self.link_keys = texts, names, links, link_keys
        self.max_per_page, self.max_per_target = max_per_page, max_per_target
        self.named_keys, self.named_pages = _page_named(names)
        self.title_keys, self.title_lengths = np.zeros(pages, np.uint64), np.full(pages, UNKNOWN, np.int64)
        self.per_target, self.wanted, self.walk_order = (np.zeros(pages, np.int64) for _ in range(3))
        self.counts = np.zeros(5, np.int64)  # targets walked (walk_order's), rows taken not yet handed over, used_keys
        # held, rows waiting in the heap, rows held in later (and in later_keys)
        # the anchors used: (target + 1, phrase key) -> pages that point it at the target, a hash table (_used_slot); a
        # numba typed dict compiled its own functions anew in every process (BENCHMARKS.md, "Analysis")
        self.used_keys, self.used_pages = np.zeros((USED_SLOTS, 2), np.uint64), np.zeros(USED_SLOTS, np.int64)
        self.taken_spans = np.zeros((pages * max_per_page, 2), np.int64)  # source s's from s * max_per_page
        self.taken_keys = np.zeros(pages * max_per_page, np.uint64)
        self.taken_lengths, self.taken_count = np.zeros(pages * max_per_page, np.int64), np.zeros(pages, np.int64)
        self.out_rows, self.out_spans = np.zeros(OUT_ROWS, np.int64), np.zeros((OUT_ROWS, 2), np.int64)
        self.out_strengths = np.zeros(OUT_ROWS, np.float64)
        self.next_place = np.full(pages, max_per_page, np.int64)  # of each source: the place of its next row to wait
        self.heap_scores, self.heap_entries = np.zeros(HEAP_ROWS, np.float64), np.zeros((HEAP_ROWS, 4), np.int64)
        self.later_keys, self.later_at = np.zeros((USED_SLOTS, 2), np.uint64), np.zeros(USED_SLOTS, np.int64)
        self.later: Rows | None = None  # made like the first rows held (_hold_like), then grown as rows are remembered

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

    def walk(self, rows: Rows, taken: Taken, search: Search, drain: bool = False) -> None:
        """Walk rows (first rows, in queue order) and, each in its turn, the rows waiting that come before each; with
        drain, the rows are walked already and all rows waiting are walked. Hands the rows taken to taken (hand_over)
        when they fill their arrays, and the rows waiting whose anchors are not searched yet to search."""
        self._hold_like(rows)
        position = len(rows.rows) if drain else 0
        while True:
            why, position, detail, stored = _walk(
                *rows.columns(), position, drain, *self.later.columns(), self.later_keys, self.later_at,
                self.heap_scores, self.heap_entries, self.next_place, self.grouped, self.starts, self.scores,
                self.targets, self.max_per_page, self.max_per_target, self.named_keys, self.named_pages, self.title_keys,
                self.title_lengths, self.links.starts, self.links.spans, self.link_keys, self.per_target, self.wanted,
                self.walk_order, self.counts, self.used_keys, self.used_pages,
                self.taken_spans, self.taken_keys, self.taken_lengths, self.taken_count, self.out_rows, self.out_spans,
                self.out_strengths)
            if why == NEEDS_TITLE:
                title = title_anchor(self.names[detail]).lower()
                self.title_keys[detail], self.title_lengths[detail] = phrase_key(title), len(title)
            elif why == NEEDS_COMPLETION and stored < 0:
                self.complete(rows, position, detail)
            elif why == NEEDS_COMPLETION:
                self.complete(self.later, stored, detail)
            elif why == NEEDS_SEARCH:
                if not len((made := search(self.heap_entries[:self.counts[3]])).rows):  # rather than ask again forever
                    raise RuntimeError("the fill's first row waiting is neither held nor searched")
                self.remember(made)
            elif why == FULL:
                self.hand_over(taken)
            elif why == GROW:
                self.used_keys, self.used_pages = _grown(self.used_keys, self.used_pages)
            elif why == GROW_HEAP:
                self.heap_scores = np.concatenate([self.heap_scores, np.zeros_like(self.heap_scores)])
                self.heap_entries = np.concatenate([self.heap_entries, np.zeros_like(self.heap_entries)])
            else:
                return

    def remember(self, made: Rows) -> None:
        """Hold rows searched for the rows waiting, to be found by candidate row."""
        self._hold_like(made)
        count, added = int(self.counts[4]), len(made.rows)
        if count + added > len(self.later.rows):
            size = max(2 * len(self.later.rows), count + added)
            self.later = Rows(*(np.concatenate([column[:count], np.zeros((size - count, *column.shape[1:]), column.dtype)])
                                for column in self.later.columns()))
        for column, part in zip(self.later.columns(), made.columns()):
            column[count:count + added] = part
        while 2 * (self.counts[4] + added) > len(self.later_keys):
            self.later_keys, self.later_at = _grown(self.later_keys, self.later_at)
        _remember(self.later_keys, self.later_at, made.rows, count)
        self.counts[4] += added

    def _hold_like(self, rows: Rows) -> None:
        """Make later, to hold rows like these, if it is not made yet."""
        if self.later is None:
            self.later = Rows(*(np.zeros((HEAP_ROWS, *column.shape[1:]), column.dtype) for column in rows.columns()))

    def complete(self, rows: Rows, row: int, option: int) -> None:
        """Where one anchor ends when completed (anchors.completion), and the key of that longer phrase."""
        text, start, end = self.texts[rows.sources[row]], int(rows.starts[row, option]), int(rows.ends[row, option])
        rows.longer[row, option] = longer = completion(text, start, end)
        if longer != end:
            rows.longer_keys[row, option] = phrase_key(text[start:longer].lower())

    def hand_over(self, taken: Taken) -> None:
        """Hand the rows taken since the last call to taken(candidate rows, spans, strengths)."""
        count = int(self.counts[1])
        taken(self.out_rows[:count], self.out_spans[:count], self.out_strengths[:count])
        self.counts[1] = 0

    def walked(self) -> dict[int, int]:
        """The rows walked of each target, in the order the targets were first walked."""
        order = self.walk_order[:self.counts[0]]
        return dict(zip(order.tolist(), self.wanted[order].tolist()))


def _grown(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A hash table of two (the anchors used, the later rows) with twice the slots: asked for before it would pass
    half full."""
    more_keys, more_values = np.zeros((2 * len(keys), 2), np.uint64), np.zeros(2 * len(values), np.int64)
    _placed(keys, values, more_keys, more_values)
    return more_keys, more_values


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
def _walk(rows, sources, targets, scores, starts, ends, strengths, keys, flags, longer, longer_keys, position, drain,
          l_rows, l_sources, l_targets, l_scores, l_starts, l_ends, l_strengths, l_keys, l_flags, l_longer, l_longer_keys,
          later_keys, later_at, heap_scores, heap_entries, next_place, grouped, group_starts, all_scores, all_targets,
          max_per_page, max_per_target, named_keys, named_pages, title_keys, title_lengths, link_starts, link_spans,
          link_keys, per_target, wanted, walk_order, counts, used_keys, used_pages, taken_spans, taken_keys, taken_lengths,
          taken_count, out_rows, out_spans, out_strengths):
    """QueueFill.walk's loop: the next row walked is the first row at position or the heap's first, whichever comes
    first in queue order; a row refused puts its source's next row in the heap. Returns (why it stopped, the position
    reached, what Python is asked for: the target whose title key (NEEDS_TITLE) or the option whose completion
    (NEEDS_COMPLETION) it needs, else -1; and where that row is held in later, -1 for a first row)."""
    while True:
        if counts[1] == len(out_rows):
            return FULL, position, -1, -1
        if 2 * (counts[2] + 1) > len(used_keys):  # the anchors used would pass half the table's slots
            return GROW, position, -1, -1
        if counts[3] == len(heap_scores):
            return GROW_HEAP, position, -1, -1
        waiting, more = counts[3] > 0, position < len(rows)
        from_heap = waiting and (drain if not more else (heap_scores[0], heap_entries[0, 0], heap_entries[0, 1])
                                 < (-scores[position], sources[position], targets[position]))
        if from_heap:
            row = _later_index(later_keys, later_at, heap_entries[0, 2])
            if row < 0:
                return NEEDS_SEARCH, position, -1, -1
            r_rows, r_sources, r_targets, r_starts, r_ends, r_strengths, r_keys, r_flags, r_longer, r_longer_keys = (
                l_rows, l_sources, l_targets, l_starts, l_ends, l_strengths, l_keys, l_flags, l_longer, l_longer_keys)
        elif more:
            row = position
            r_rows, r_sources, r_targets, r_starts, r_ends, r_strengths, r_keys, r_flags, r_longer, r_longer_keys = (
                rows, sources, targets, starts, ends, strengths, keys, flags, longer, longer_keys)
        else:
            return DONE, position, -1, -1
        source, target = r_sources[row], r_targets[row]
        if per_target[target] >= max_per_target:
            _walked(target, wanted, walk_order, counts)
            refused = True
        else:
            base, held = source * max_per_page, taken_count[source]
            if held == max_per_page:  # never (a source's rows walked are its first max_per_page, and one a row refused)
                raise ValueError("a source has taken max_per_page rows already")  # rather than write past its places
            chosen = -1
            for option in range(r_starts.shape[1]):
                start, end, key = r_starts[row, option], r_ends[row, option], r_keys[row, option]
                if (r_flags[row, option] & SHOWN and not r_flags[row, option] & LINKED
                        and used_pages[_used_slot(used_keys, target, key)] < SAME_ANCHOR_PAGES
                        and _names(named_keys, named_pages, key, target)
                        and not _holds(taken_keys, taken_lengths, base, held, key, end - start)
                        and not _overlaps(taken_spans, base, held, start, end)):
                    chosen = option
                    break
            refused = False
            if chosen >= 0:
                start, end, key = r_starts[row, chosen], r_ends[row, chosen], r_keys[row, chosen]
                shown_end, shown_key = end, key
                if r_flags[row, chosen] & MAY_COMPLETE:
                    if r_longer[row, chosen] == UNKNOWN:
                        return NEEDS_COMPLETION, position, chosen, row if from_heap else -1
                    if _completes(r_longer[row, chosen], r_longer_keys[row, chosen], source, target, start, end,
                                  named_keys, named_pages, link_starts, link_spans, link_keys, taken_spans, taken_keys,
                                  taken_lengths, base, held):
                        shown_end, shown_key = r_longer[row, chosen], r_longer_keys[row, chosen]
                _walked(target, wanted, walk_order, counts)
                taken_spans[base + held, 0], taken_spans[base + held, 1] = start, shown_end
                taken_keys[base + held], taken_lengths[base + held] = shown_key, shown_end - start
                taken_count[source] += 1
                strength = np.float64(r_strengths[row, chosen])
            else:
                if title_lengths[target] == UNKNOWN:
                    return NEEDS_TITLE, position, target, row if from_heap else -1
                key, length = title_keys[target], title_lengths[target]
                _walked(target, wanted, walk_order, counts)
                refused = (used_pages[_used_slot(used_keys, target, key)] >= SAME_ANCHOR_PAGES
                           or _holds(taken_keys, taken_lengths, base, held, key, length)
                           or _links_have(link_starts, link_spans, link_keys, source, key, length))
                start = shown_end = -1
                strength = 0.0
            if not refused:
                slot = _used_slot(used_keys, target, key)
                if used_keys[slot, 0] == 0:
                    used_keys[slot, 0], used_keys[slot, 1] = target + 1, key
                    counts[2] += 1
                used_pages[slot] += 1
                per_target[target] += 1
                out = counts[1]
                out_rows[out], out_spans[out, 0], out_spans[out, 1] = r_rows[row], start, shown_end
                out_strengths[out] = strength
                counts[1] += 1
        if from_heap:
            _pop(heap_scores, heap_entries, counts)
        else:
            position += 1
        if refused:  # the source's next row waits its turn
            place = next_place[source]
            next_place[source] = place + 1
            at = group_starts[source] + place
            if at < group_starts[source + 1] and all_scores[grouped[at]] > -np.inf:
                waits = grouped[at]
                _push(heap_scores, heap_entries, counts, -all_scores[waits], source, all_targets[waits], waits, place)


@compiled
def _first(heap_scores, heap_entries, one, other) -> bool:
    """Heap entry one comes before entry other in queue order: (-score, source, target)."""
    return ((heap_scores[one], heap_entries[one, 0], heap_entries[one, 1])
            < (heap_scores[other], heap_entries[other, 0], heap_entries[other, 1]))


@compiled
def _swap(heap_scores, heap_entries, one, other) -> None:
    heap_scores[one], heap_scores[other] = heap_scores[other], heap_scores[one]
    for column in range(heap_entries.shape[1]):
        heap_entries[one, column], heap_entries[other, column] = heap_entries[other, column], heap_entries[one, column]


@compiled
def _push(heap_scores, heap_entries, counts, score, source, target, row, place) -> None:
    """Add a row waiting to the heap (counts[3] entries, with room for one more)."""
    at = counts[3]
    counts[3] += 1
    heap_scores[at] = score
    heap_entries[at, 0], heap_entries[at, 1], heap_entries[at, 2], heap_entries[at, 3] = source, target, row, place
    while at > 0 and _first(heap_scores, heap_entries, at, (at - 1) // 2):
        _swap(heap_scores, heap_entries, at, (at - 1) // 2)
        at = (at - 1) // 2


@compiled
def _pop(heap_scores, heap_entries, counts) -> None:
    """Drop the heap's first entry."""
    counts[3] -= 1
    size = counts[3]
    _swap(heap_scores, heap_entries, 0, size)
    at = 0
    while True:
        least, left, right = at, 2 * at + 1, 2 * at + 2
        if left < size and _first(heap_scores, heap_entries, left, least):
            least = left
        if right < size and _first(heap_scores, heap_entries, right, least):
            least = right
        if least == at:
            return
        _swap(heap_scores, heap_entries, at, least)
        at = least


@compiled
def _later_index(later_keys, later_at, row) -> int:
    """Where QueueFill.later holds this candidate row, else -1."""
    slot = _used_slot(later_keys, 0, np.uint64(row))
    return later_at[slot] if later_keys[slot, 0] != 0 else -1


@compiled
def _remember(later_keys, later_at, rows, first) -> None:
    """Note that later holds rows[i] at first + i (the table has room)."""
    for at in range(len(rows)):
        slot = _used_slot(later_keys, 0, np.uint64(rows[at]))
        later_keys[slot, 0], later_keys[slot, 1], later_at[slot] = 1, rows[at], first + at


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
