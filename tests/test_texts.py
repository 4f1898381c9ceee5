"""analysis.texts: the pages' texts on disk, read back the same, whatever the temporary directory allows."""

from __future__ import annotations

import os
import random
import tempfile
import threading
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from analysis.texts import PageTexts, _Store

TEXTS = ["plain words", "", "café, naïve façade", "日本語のテキスト", "emoji \U0001F980 and a lone \ud800 surrogate",
         "line one\nline two\r\n", "x" * 5_000, *(f"page {n}: " + "word " * (n % 37) for n in range(300))]


def assert_same(texts: PageTexts, expected: list[str]) -> None:
    """Every way of reading gives the texts back: one at a time, many in any order, in order, and their lengths."""
    assert len(texts) == len(expected)
    assert [texts[page] for page in range(len(texts))] == expected
    assert list(texts) == expected
    order = random.Random(1).sample(range(len(expected)), len(expected))
    assert texts.many(order) == [expected[page] for page in order]
    assert texts.many([3, 3, 4, 5, 2]) == [expected[page] for page in (3, 3, 4, 5, 2)]
    assert texts.many([]) == []
    assert np.array_equal(texts.lengths(), [len(text) for text in expected])
    assert [texts.length(page) for page in range(len(texts))] == [len(text) for text in expected]


@pytest.fixture(autouse=True)
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads and writes of a few hundred bytes: the fixture's texts span many of each."""
    monkeypatch.setattr(_Store, "BUFFER_BYTES", 300)
    monkeypatch.setattr(PageTexts, "READ_BYTES", 500)


def test_page_texts_give_back_every_text_as_it_was_read_in_any_order() -> None:
    texts = PageTexts(TEXTS)
    assert_same(texts, TEXTS)
    chosen = [7, 0, 2, 3, 200, 199]
    assert_same(texts.subset(chosen), [TEXTS[page] for page in chosen])
    texts.append("one more")  # appended after reads
    assert texts[len(TEXTS)] == "one more" and texts[2] == TEXTS[2]


def test_a_read_that_the_system_answers_in_parts_gives_back_every_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """os.pread may return fewer bytes than asked (over ~2 GB on Linux): the rest is asked for until the span is read."""
    texts = PageTexts(TEXTS)
    real_pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, size, start: real_pread(fd, min(size, 7), start))
    assert_same(texts, TEXTS)


def test_page_texts_hold_no_text_in_memory() -> None:
    words = " ".join(f"word{n}" for n in range(1_000))  # ~7.9 KB a text, 16 MB in all
    tracemalloc.start()
    try:
        texts = PageTexts(f"{page} {words}" for page in range(2_000))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 1_000_000  # offsets and lengths: 24 bytes a text, and the write buffer
    assert texts[1_234] == f"1234 {words}"


def test_the_first_reads_from_several_threads_at_once_give_back_the_texts() -> None:
    """The anchor search's threads may be the first to read a corpus's texts, each flushing the bytes appended (an
    analysis whose vectors were all cached reads none before); one's flush must not clear the bytes another writes."""
    for _ in range(50):
        texts = PageTexts(TEXTS[:40])  # ~1,000 bytes: three writes' worth, the last not yet written
        start = threading.Barrier(4)

        def read() -> list[str]:
            start.wait()
            return texts.many(list(range(40)))

        with ThreadPoolExecutor(4) as pool:
            assert all(got == TEXTS[:40] for got in pool.map(lambda _: read(), range(4)))


REAL_TEMPORARY_FILE = tempfile.TemporaryFile


class FillingFile:
    """A real temporary file that takes `room` bytes, then fails as a full disk does (after a short write)."""

    def __init__(self, room: int) -> None:
        self.file, self.room = REAL_TEMPORARY_FILE(buffering=0), room

    def write(self, data: memoryview) -> int:
        if not self.room:
            raise OSError(28, "No space left on device")
        written = self.file.write(data[:self.room])
        self.room -= written
        return written

    def fileno(self) -> int:
        return self.file.fileno()

    def tell(self) -> int:
        return self.file.tell()

    def close(self) -> None:
        self.file.close()


def test_page_texts_stay_whole_in_memory_when_the_temporary_file_cannot_be_made_or_filled(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_temporary_directory(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No usable temporary directory found")

    for make in (no_temporary_directory, lambda **kwargs: FillingFile(room=6_000)):
        with monkeypatch.context() as patched:
            patched.setattr(tempfile, "TemporaryFile", make)
            texts = PageTexts(TEXTS)
        assert texts._store._file is None  # all in memory: the written part read back
        assert_same(texts, TEXTS)


def test_copy_sets_are_the_pages_of_one_text_character_for_character() -> None:
    """Pages share a set only with the same text; one changed in its middle (its length and ends the same) is no copy."""
    text = "word " * 100
    middle = text[:250] + "W" + text[251:]
    texts = PageTexts([text, "another text", text, middle, "another text", "alone"])
    assert texts.copy_sets().tolist() == [0, 1, 0, -1, 1, -1]
    assert texts.subset([2, 3, 0]).copy_sets().tolist() == [0, -1, 0]
    assert PageTexts([]).copy_sets().tolist() == []
