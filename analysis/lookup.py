"""A hash table in numpy arrays: many integer keys looked up at once, a gather or two each.

numpy has no hash look-up; a binary search in sorted keys (np.searchsorted) is its usual stand-in
and takes ~17 dependent steps a key where this takes one or two: 2.2x faster on 5M words' packed
spellings, 2.5x on the anchor search's (page, term) look-ups (BENCHMARKS.md, "Analysis").
"""

from __future__ import annotations

import numpy as np

MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of key x this spread any keys well


class HashTable:
    """Distinct non-zero uint64 keys -> integer values, by open addressing (linear probing), at most half full; a key
    0 marks a free slot. Never changed once shared: with_added makes a new table, so threads may look up in one
    while another is made."""

    def __init__(self, dtype: type = np.int64, bits: int = 4) -> None:
        self.bits = bits
        self.keys = np.zeros(1 << bits, dtype=np.uint64)
        self.values = np.zeros(1 << bits, dtype=dtype)
        self.held = 0

    @classmethod
    def of(cls, keys: np.ndarray, values: np.ndarray) -> HashTable:
        return cls(values.dtype.type).with_added(keys, values)

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values, known) of these keys (any uint64); values are 0 where not known."""
        mask = len(self.keys) - 1
        slot = self._home(keys)
        stored = self.keys[slot]
        known = (stored == keys) & (keys != 0)
        values = np.where(known, self.values[slot], 0).astype(self.values.dtype)
        probing = np.flatnonzero(~known & (stored != 0) & (keys != 0))  # its slot holds another key: try the next
        slot = (slot[probing] + 1) & mask
        while len(probing):
            stored = self.keys[slot]
            hit = stored == keys[probing]
            values[probing[hit]], known[probing[hit]] = self.values[slot[hit]], True
            going = ~hit & (stored != 0)
            probing, slot = probing[going], (slot[going] + 1) & mask
        return values, known

    def with_added(self, keys: np.ndarray, values: np.ndarray) -> HashTable:
        """A new table holding these too (distinct keys, none 0, none held yet): twice as large as needed when this
        one would pass half full, so that a table that grows is rebuilt a logarithmic number of times."""
        held = self.held + len(keys)
        grow = 2 * held > len(self.keys)
        table = HashTable(self.values.dtype.type, max(self.bits, (4 * held - 1).bit_length()) if grow else self.bits)
        if grow:
            table._place(self.keys[self.keys != 0], self.values[self.keys != 0])
        else:
            table.keys, table.values, table.held = self.keys.copy(), self.values.copy(), self.held
        table._place(keys, values)
        return table

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return ((keys * MULTIPLIER) >> np.uint64(64 - self.bits)).astype(np.int64)

    def _place(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Put keys not held yet in free slots, each in the first free one from its home: a round places one key in
        each free slot that some are waiting at (whichever numpy writes last), the others move on a slot."""
        mask = len(self.keys) - 1
        slot, waiting = self._home(keys), np.arange(len(keys))
        claim = np.full(len(self.keys), -1, dtype=np.int64)
        while len(waiting):
            free = np.flatnonzero(self.keys[slot] == 0)
            claim[slot[free]] = free
            placed = free[claim[slot[free]] == free]
            self.keys[slot[placed]], self.values[slot[placed]] = keys[waiting[placed]], values[waiting[placed]]
            left = np.ones(len(waiting), dtype=bool)
            left[placed] = False
            waiting, slot = waiting[left], slot[left]
            taken = self.keys[slot] != 0
            slot[taken] = (slot[taken] + 1) & mask
        self.held += len(keys)
