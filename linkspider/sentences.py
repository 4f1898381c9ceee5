"""Sentence boundaries in extracted text: the context of a link and of a suggested anchor."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

# A sentence ends at . ! or ? (and any closing quotes or brackets) followed by white space, or at a
# line break: the extractor puts every paragraph, heading and list item on a line of its own, a list item
# after a marker ("- ", indented as deep as the list) that belongs to no sentence.
CLOSERS = "\"'\u201d\u2019)]"
_LIST_MARKER = r"[ \t]*- "
# Written to start with one character class, so that the regex engine scans for it at C speed (6x faster than
# a look-behind first): a match at . ! or ? is the boundary after it, a match at a line break is the boundary;
# either takes the list marker that starts the next line.
_BOUNDARY = re.compile(rf"[.!?\n](?:(?<=[.!?])(?P<closers>[{re.escape(CLOSERS)}]*)(?:\s*\n{_LIST_MARKER}|\s+)"
                       rf"|(?<=\n)\n*(?:{_LIST_MARKER})?)")
_FIRST_MARKER = re.compile(_LIST_MARKER)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every non-empty sentence in text, in order."""
    return list(_spans(text, _first_line_start(text)))


def _spans(text: str, start: int) -> Iterator[tuple[int, int]]:
    """The sentences from start on, as a scan of the whole text finds them once it has reached start."""
    for match in _boundaries(text, start):
        end = _sentence_end(match)
        if text[start:end].strip():
            yield _trimmed(text, start, end)
        start = match.end()
    if text[start:].strip():
        yield _trimmed(text, start, len(text))


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the white space at its edges: a line may start with some (an indented paragraph of the HTML
    source), and a sentence shown as a link's context or an anchor's does not."""
    part = text[start:end]
    return start + len(part) - len(part.lstrip()), start + len(part.rstrip())


def _boundaries(text: str, start: int) -> Iterator[re.Match[str]]:
    """The sentence boundaries from start on (one may begin at a . ! or ? just before start)."""
    return _BOUNDARY.finditer(text, start - (start > 0 and text[start - 1] in ".!?"))


def _sentence_end(boundary: re.Match[str]) -> int:
    """Where the sentence that a boundary closes ends: after its . ! or ? and closing marks, before the white space;
    at a line break."""
    return boundary.start() if boundary.group("closers") is None else boundary.end("closers")


def _first_line_start(text: str) -> int:
    """Where the text's first sentence may start: after a list marker that starts the text."""
    marker = _FIRST_MARKER.match(text)
    return marker.end() if marker else 0


def sentence_at(text: str, offset: int, spans: list[tuple[int, int]] | None = None) -> tuple[int, int]:
    """(start, end) of the sentence that holds the character at offset, or (offset, offset) between sentences.

    With spans (sentence_spans of text, for many offsets of one text), a binary search. Without, a scan
    from the line before offset's line: a boundary is made of closing marks and white space, ending with
    the list marker of the line it leads to if any, so a scan that starts just after any other character
    (a marker's dash included) is where a scan from the start would be, and the
    last such character before the line break that precedes offset is one (the sentence holding
    offset starts after that break).
    """
    if spans is not None:
        index = bisect_right([start for start, _ in spans], offset) - 1
        return spans[index] if index >= 0 and offset < spans[index][1] else (offset, offset)
    start = text.rfind("\n", 0, offset)
    while start > 0 and (text[start - 1].isspace() or text[start - 1] in CLOSERS):
        start -= 1
    start = max(start, 0) or _first_line_start(text)
    for boundary in _boundaries(text, start):  # _spans, but a sentence is made only once its boundary ends past offset
        if boundary.end() > offset:  # (the sentences before are not needed: a sentence ends before its boundary does)
            end = _sentence_end(boundary)
            if end > offset and text[start:end].strip():
                return _holding(*_trimmed(text, start, end), offset)
        start = boundary.end()
    return _holding(*_trimmed(text, start, len(text)), offset) if text[start:].strip() else (offset, offset)


def _holding(start: int, end: int, offset: int) -> tuple[int, int]:
    """The sentence, if it holds the character at offset; else (offset, offset): between sentences."""
    return (start, end) if start <= offset < end else (offset, offset)
