"""A hash table in numpy arrays: many integer keys looked up at once, a probe or two each, in a compiled loop.

numpy has no hash look-up; a binary search in sorted keys (np.searchsorted) is its usual stand-in
and takes ~17 dependent steps a key where this takes one or two: 2.2x faster on 5M words' packed
spellings when it was numpy passes over all keys; it is now a compiled loop that probes key by key
(BENCHMARKS.md, "Analysis"). (The anchor search's (page, term) look-ups used it too; they now mark
one page's terms at a time in a dense array, windows.py.)
"""

from __future__ import annotations

import numpy as np

from analysis.compiled import compiled

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
        return _get(self.keys, self.values, self.bits, keys.astype(np.uint64, copy=False))

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

    def _place(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Put keys not held yet in free slots, each in the first free one from its home."""
        _place(self.keys, self.values, self.bits, keys.astype(np.uint64, copy=False), values)
        self.held += len(keys)


@compiled
def _get(table_keys: np.ndarray, table_values: np.ndarray, bits: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, known = np.zeros(len(keys), table_values.dtype), np.zeros(len(keys), np.bool_)
    mask, shift = len(table_keys) - 1, np.uint64(64 - bits)
    for at in range(len(keys)):
        key = keys[at]
        slot = np.int64((key * MULTIPLIER) >> shift)
        while key != 0 and table_keys[slot] != 0:  # a slot that holds another key: try the next
            if table_keys[slot] == key:
                values[at], known[at] = table_values[slot], True
                break
            slot = (slot + 1) & mask
    return values, known


@compiled
def _place(table_keys: np.ndarray, table_values: np.ndarray, bits: int, keys: np.ndarray, values: np.ndarray) -> None:
    mask, shift = len(table_keys) - 1, np.uint64(64 - bits)
    for at in range(len(keys)):
        slot = np.int64((keys[at] * MULTIPLIER) >> shift)
        while table_keys[slot] != 0:
            slot = (slot + 1) & mask
        table_keys[slot], table_values[slot] = keys[at], values[at]
