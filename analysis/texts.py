"""The pages' main texts, kept in an unnamed temporary file and read back a few at a time.

Every stage reads the texts a block of pages at a time (the keyword fit in order, the anchor search a block of
sources, the export a suggestion's source), so none needs them all in memory: at 1,000,000 synthetic pages they are
3.1 GB of Python strings, a third of the analysis's peak (BENCHMARKS.md, "Analysis"). On disk they are UTF-8, and
the operating system's cache holds them where memory allows. Where no temporary file can be made or written (no
writable TMPDIR, a full disk), the same bytes are held in memory instead.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

_ENCODING, _ERRORS = "utf-8", "surrogatepass"  # any Python string, lone surrogates included, comes back the same
FINGERPRINT_BYTES = 64  # of each end of a text, with its length: copies share them, and few other texts do


def write_all(file: BinaryIO, data: bytes | bytearray | np.ndarray) -> None:
    """Write all of data to an unbuffered file, which may write less than it is given at a time."""
    with memoryview(data) as view:
        written = 0
        while written < view.nbytes:
            written += file.write(view[written:])


def read_all(file: BinaryIO, start: int, size: int) -> bytes:
    """size bytes of a file from start, by os.pread (from any thread), which may read less than it is asked at a time
    (at most ~2 GB on Linux)."""
    first = os.pread(file.fileno(), size, start)
    if len(first) == size:  # nearly always: one call (the fill reads a text per row of the queue, 400,000 at 100,000 pages)
        return first
    parts, start, size = [first], start + len(first), size - len(first)
    while size > 0:
        part = os.pread(file.fileno(), size, start)
        if not part:
            raise OSError(f"the temporary file ends at {start}")
        parts.append(part)
        start, size = start + len(part), size - len(part)
    return b"".join(parts) if len(parts) != 1 else parts[0]


class _Store:
    """Bytes appended end to end, read back by span: in a temporary file, else in memory."""

    BUFFER_BYTES = 8 << 20  # appended bytes gathered before a write

    def __init__(self) -> None:
        try:
            self._file = tempfile.TemporaryFile(buffering=0)  # unbuffered: what is written is there for os.pread
        except OSError:  # no writable temporary directory
            self._file = None
        self._held = bytearray()  # with a file, the bytes not yet written; without, all of them
        self.size = 0  # bytes appended
        self._flushing = threading.Lock()  # the first reads may come from several threads at once (the anchor search's)

    def append(self, data: bytes) -> int:
        """Append data; return where it starts."""
        start = self.size
        self._held += data
        self.size += len(data)
        if self._file is not None and len(self._held) >= self.BUFFER_BYTES:
            self.flush()
        return start

    def flush(self) -> None:
        """Write the bytes held to the file; if that fails (a full disk), keep all in memory, the file's read back. One
        thread at a time: another's clear() while one writes the bytes would fail (a view of them is held) or lose them."""
        with self._flushing:
            if self._file is None or not self._held:
                return
            before = self._file.tell()
            try:
                write_all(self._file, self._held)
            except OSError:  # what the file held before these bytes, read back, then all of these
                self._held = bytearray(read_all(self._file, 0, before)) + self._held  # anew: a view may hold the old
                self._file.close()
                self._file = None
                return
            self._held.clear()

    def read(self, start: int, end: int) -> bytes | memoryview:
        """The bytes from start to end (flushed first: call from one thread while appending, from any once done)."""
        if self._held and self._file is not None:  # else nothing to write: flush's lock was ~20% of a read
            self.flush()
        if self._file is None:
            return memoryview(self._held)[start:end]
        return read_all(self._file, start, end - start)


class PageTexts(Sequence[str]):
    """The main text of each page, by page number, held in a _Store: texts[page], texts.many(pages), or in order."""

    READ_BYTES = 16 << 20  # read at once when texts are read in order

    def __init__(self, texts: Iterable[str] = (), store: _Store | None = None) -> None:
        self._store = store or _Store()
        self._starts, self._ends, self._lengths = array("q"), array("q"), array("q")  # bytes in the store; characters
        self._fingerprints = array("q")  # of each text's length and ends: pages with the same text have the same (copy_sets)
        self.extend(texts)

    def append(self, text: str) -> None:
        data = text.encode(_ENCODING, _ERRORS)
        start = self._store.append(data)
        self._starts.append(start)
        self._ends.append(start + len(data))
        self._lengths.append(len(text))
        self._fingerprints.append(hash((len(data), data[:FINGERPRINT_BYTES], data[-FINGERPRINT_BYTES:])))

    def extend(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.append(text)

    def subset(self, pages: Iterable[int]) -> PageTexts:
        """These pages' texts, in this order, as pages 0, 1, ...: the same store, nothing copied."""
        chosen = PageTexts(store=self._store)
        for page in pages:
            chosen._starts.append(self._starts[page])
            chosen._ends.append(self._ends[page])
            chosen._lengths.append(self._lengths[page])
            chosen._fingerprints.append(self._fingerprints[page])
        return chosen

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, page: int) -> str:  # type: ignore[override]
        return str(self._store.read(self._starts[page], self._ends[page]), _ENCODING, _ERRORS)

    def many(self, pages: Sequence[int]) -> list[str]:
        """The texts of these pages, in this order: one read for each run of them that lies end to end in the store."""
        texts, at = [], 0
        starts, ends = self._starts, self._ends
        while at < len(pages):
            last = at
            while (last + 1 < len(pages) and starts[pages[last + 1]] == ends[pages[last]]
                   and ends[pages[last + 1]] - starts[pages[at]] <= self.READ_BYTES):
                last += 1
            first = starts[pages[at]]
            data = memoryview(self._store.read(first, ends[pages[last]]))
            texts.extend(str(data[starts[page] - first:ends[page] - first], _ENCODING, _ERRORS)
                         for page in pages[at:last + 1])
            at = last + 1
        return texts

    def __iter__(self) -> Iterator[str]:
        step = 1024
        for first in range(0, len(self), step):
            yield from self.many(range(first, min(first + step, len(self))))

    def length(self, page: int) -> int:
        """Characters of a page's text, without reading it."""
        return self._lengths[page]

    def lengths(self) -> np.ndarray:
        """Characters of each page's text (int64), without reading them."""
        return np.array(self._lengths, dtype=np.int64)

    def copy_sets(self) -> np.ndarray:
        """Per page, a number that the pages whose texts are the same, character for character, share; -1 where no
        other page has its text. Only the texts of pages whose length and ends match another's are read and compared
        (a re-exported type, a print version, a product in two colours: few), so that finding none costs no reading."""
        fingerprints = np.frombuffer(self._fingerprints, dtype=np.int64) if len(self) else np.zeros(0, np.int64)
        order = np.argsort(fingerprints, kind="stable")
        ordered = fingerprints[order]
        twin = np.concatenate([[False], ordered[1:] == ordered[:-1], [False]])
        shared = np.flatnonzero(twin[1:] | twin[:-1])  # places in the order whose fingerprint another page has
        copies = []
        for run in np.split(order[shared], np.flatnonzero(np.diff(ordered[shared])) + 1):
            by_text: dict[str, list[int]] = {}
            for page, text in zip(run.tolist(), self.many(run.tolist())):
                by_text.setdefault(text, []).append(page)
            copies += [same for same in by_text.values() if len(same) > 1]
        sets = np.full(len(self), -1, dtype=np.int64)
        for number, same in enumerate(sorted(copies)):  # numbered by their first page, whatever the hashes
            sets[same] = number
        return sets


@dataclass
class SourceBlock:
    """Some rows' source texts, as code points: what a compiled pass over a block of sources reads (by_source_blocks)."""

    pages: np.ndarray  # the sources, sorted
    texts: list[str]
    codes: np.ndarray  # the texts' code points, end to end (uint32)
    starts: np.ndarray  # text t is codes[starts[t]:starts[t + 1]]
    rows: np.ndarray  # the rows whose source is one of pages
    text_of: np.ndarray  # each of those rows' text, by its place in pages


def by_source_blocks(texts: Sequence[str], sources: np.ndarray, rows: np.ndarray, pages_at_once: int, threads: int,
                     work: Callable[[SourceBlock], None]) -> None:
    """work(block) for these rows (row i's text: texts[sources[i]]), pages_at_once sources a block, threads blocks at
    once: each text is read once, and a block's code points stay few (4 bytes each)."""
    rows = rows[np.argsort(sources[rows], kind="stable")]
    pages, first_row = np.unique(sources[rows], return_index=True)
    first_row = np.append(first_row, len(rows))

    def block(first: int) -> None:
        these_pages = pages[first:first + pages_at_once]
        listed = these_pages.tolist()
        held = texts.many(listed) if isinstance(texts, PageTexts) else [texts[page] for page in listed]
        these = rows[first_row[first]:first_row[first + len(these_pages)]]
        work(SourceBlock(these_pages, held, np.frombuffer("".join(held).encode("utf-32-le", _ERRORS), dtype=np.uint32),
                         np.concatenate([[0], np.cumsum([len(text) for text in held])]).astype(np.int64), these,
                         np.searchsorted(these_pages, sources[these])))

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(block, range(0, len(pages), pages_at_once)))
