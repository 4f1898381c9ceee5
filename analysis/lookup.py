"""A hash table in numpy arrays: many 128-bit keys (two uint64 columns) looked up at once, a probe or two each, in a
compiled loop.

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
HIGH_MULTIPLIER = np.uint64(0xC2B2AE3D27D4EB4F)  # the high column is mixed into the low one with this (odd) first


class HashTable:
    """Distinct keys (rows of two uint64, the low one never 0) -> integer values, by open addressing (linear probing),
    at most half full; a low 0 marks a free slot. Never changed once shared: with_added makes a new table, so threads
    may look up in one while another is made."""

    def __init__(self, dtype: type = np.int64, bits: int = 4) -> None:
        self.bits = bits
        self.keys = np.zeros((1 << bits, 2), dtype=np.uint64)
        self.values = np.zeros(1 << bits, dtype=dtype)
        self.held = 0

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values, known) of these keys ((n, 2), any uint64); values are 0 where not known."""
        return _get(self.keys, self.values, self.bits, keys.astype(np.uint64, copy=False))

    def with_added(self, keys: np.ndarray, values: np.ndarray) -> HashTable:
        """A new table holding these too (distinct keys, no low 0, none held yet): twice as large as needed when this
        one would pass half full, so that a table that grows is rebuilt a logarithmic number of times."""
        held = self.held + len(keys)
        grow = 2 * held > len(self.keys)
        table = HashTable(self.values.dtype.type, max(self.bits, (4 * held - 1).bit_length()) if grow else self.bits)
        if grow:
            used = self.keys[:, 0] != 0
            table._place(self.keys[used], self.values[used])
        else:
            table.keys, table.values, table.held = self.keys.copy(), self.values.copy(), self.held
        table._place(keys, values)
        return table

    def _place(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Put keys not held yet in free slots, each in the first free one from its home."""
        _place(self.keys, self.values, self.bits, keys.astype(np.uint64, copy=False), values)
        self.held += len(keys)


@compiled
def _home(low: np.uint64, high: np.uint64, shift: np.uint64) -> np.int64:
    """A key's first slot to try."""
    return np.int64(((low ^ (high * HIGH_MULTIPLIER)) * MULTIPLIER) >> shift)


@compiled
def _get(table_keys: np.ndarray, table_values: np.ndarray, bits: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, known = np.zeros(len(keys), table_values.dtype), np.zeros(len(keys), np.bool_)
    mask, shift = len(table_keys) - 1, np.uint64(64 - bits)
    for at in range(len(keys)):
        low, high = keys[at, 0], keys[at, 1]
        slot = _home(low, high, shift)
        while low != 0 and table_keys[slot, 0] != 0:  # a slot that holds another key: try the next
            if table_keys[slot, 0] == low and table_keys[slot, 1] == high:
                values[at], known[at] = table_values[slot], True
                break
            slot = (slot + 1) & mask
    return values, known


@compiled
def _place(table_keys: np.ndarray, table_values: np.ndarray, bits: int, keys: np.ndarray, values: np.ndarray) -> None:
    mask, shift = len(table_keys) - 1, np.uint64(64 - bits)
    for at in range(len(keys)):
        slot = _home(keys[at, 0], keys[at, 1], shift)
        while table_keys[slot, 0] != 0:
            slot = (slot + 1) & mask
        table_keys[slot, 0], table_keys[slot, 1], table_values[slot] = keys[at, 0], keys[at, 1], values[at]
