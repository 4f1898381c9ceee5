"""Sentence boundaries in extracted text: the context of a link and of a suggested anchor."""

from __future__ import annotations

import re

# A sentence ends at . ! or ? (and any closing quotes or brackets) followed by white space, or at a
# line break: the extractor puts every paragraph, heading and list item on a line of its own.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|\n+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every non-empty sentence in text, in order."""
    spans, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.start() + len(match.group(0).rstrip()) if match.group(0).strip() else match.start()
        if text[start:end].strip():
            spans.append((start, end))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def sentence_at(text: str, offset: int) -> tuple[int, int]:
    """(start, end) of the sentence that holds the character at offset."""
    for start, end in sentence_spans(text):
        if start <= offset < end:
            return start, end
    return offset, offset
