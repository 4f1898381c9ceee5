"""Numbered cross-references: a page cited by the number its title gives it ("see Section 8.16.6").

Manuals built with DocBook, LaTeX or numbered Sphinx put a section number at the head of each page's title ("8.16.
Composite Types", "Chapter 8. Data Types", "Part I. Tutorial", "E.17. Release 15.4") and cite one another by it. Such a
citation names its page as surely as the page's name written out (anchors.names_said), though it shares no word with
it: the words would never find it. A citation of a subsection ("Section 8.16.6") cites the page that holds it, the
one of the longest number that starts its own ("8.16"). A number that heads more than one title (two manuals on one
site, a translation) cites no page. Numbers are the site's convention only where a fifth of its titles or more carry
one (Python's docs number their tutorial's chapters only: 6 titles of 475, and "RFC 4648 (section 12)" is no citation of
its twelfth), and a section of another document is no citation: "Section 3 of RFC 2616", "RFC 4918, Section 11.1". A
site whose titles carry no numbers costs one pass over the titles.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import numpy as np

_NUMBER = r"(?:\d+|[A-Z]|[IVXLCDM]+)(?:\.\d+)*"  # 8, 8.16, E.17, I (a part), A (an appendix)
_TITLE_NUMBER = re.compile(rf"(?:(?:Part|Chapter|Appendix|Section)\s+)?({_NUMBER})\.\s")  # "8.16. Composite Types"
_CITATION = re.compile(rf"(?:\b(?i:section|chapter|part|appendix)\s+|\u00a7\s*)({_NUMBER})(?![.\w]*\w)")
_ANOTHER_DOCUMENT_AFTER = re.compile(r"\s+(?:of|in)\s+(?:the\s+)?[A-Z]")  # "Section 3 of RFC 2616", "of the HTTP spec"
_ANOTHER_DOCUMENT_BEFORE = re.compile(r"\b[A-Z]{2,}[ -]?\d+\W{0,3}\s*$")  # "RFC 4918, Section 11.1", "ISO 8601 section 5"
_CHAPTER_NUMBER = re.compile(r"\d+(?:\.\d+)*\.\s")  # "12. Virtual Environments and Packages"
MIN_NUMBERED_SHARE = 0.2  # of the titles, that carry a number: below it numbers are not the site's convention


def title_numbers(titles: list[str]) -> list[re.Match[str] | None]:
    """The section number at the head of each (stripped) title, where numbers are the site's convention; else None."""
    numbers = [_TITLE_NUMBER.match(title.strip()) for title in titles]
    return numbers if sum(number is not None for number in numbers) >= MIN_NUMBERED_SHARE * len(titles) else [None] * len(titles)


def numbered_by_convention(titles: list[str]) -> bool:
    """Whether numbers are the site's convention (title_numbers): its editors cite a page by its number and name."""
    return any(title_numbers(titles))


def unnumbered(titles: list[str]) -> list[str]:
    """The titles without the section number at their head: the page's name as a link's text gives it ("Composite
    Types", not "8.16. Composite Types"). Where numbers are not the site's convention (title_numbers), a chapter's
    number of digits alone: the few numbered chapters of a site ("12. Virtual Environments and Packages" of Python's
    tutorial) are cited by name ("see Virtual Environments and Packages"), never by number."""
    numbers = title_numbers(titles)
    if not any(numbers):
        numbers = [_CHAPTER_NUMBER.match(title.strip()) for title in titles]
    return [title.strip()[number.end():].strip() or title if number else title for title, number in zip(titles, numbers)]


class Citations:
    """Which page each title number names, and the citations of those numbers in a text."""

    def __init__(self, titles: list[str]) -> None:
        pages: dict[str, list[int]] = {}
        for page, number in enumerate(title_numbers(titles)):
            if number:
                pages.setdefault(number.group(1), []).append(page)
        self.page_of = {number: owners[0] for number, owners in pages.items() if len(owners) == 1}

    def __bool__(self) -> bool:
        return bool(self.page_of)

    def in_text(self, text: str) -> Iterator[tuple[int, int, int]]:
        """(cited page, start, end) of each citation in the text whose number, or a number it starts with, heads a
        title."""
        if not self.page_of:
            return
        for citation in _CITATION.finditer(text):
            if (_ANOTHER_DOCUMENT_AFTER.match(text, citation.end())
                    or _ANOTHER_DOCUMENT_BEFORE.search(text, max(0, citation.start() - 16), citation.start())):
                continue
            number = citation.group(1)
            while number not in self.page_of and "." in number:
                number = number.rsplit(".", 1)[0]
            if number in self.page_of:
                yield self.page_of[number], citation.start(), citation.end()

    def first_spans(self, source: int, text: str) -> dict[int, tuple[int, int]]:
        """Each page the text (page source's) cites, but itself, with the span of its first citation there."""
        spans: dict[int, tuple[int, int]] = {}
        for page, start, end in self.in_text(text):
            if page != source:
                spans.setdefault(page, (start, end))
        return spans

    def pair_codes(self, texts: Sequence[str], pages: int) -> np.ndarray:
        """Sorted pair codes source * pages + target of every citation in the pages' texts (none where no title
        carries a number: the texts are not read)."""
        if not self.page_of:
            return np.zeros(0, dtype=np.int64)
        codes = {source * pages + target for source, text in enumerate(texts) for target in self.first_spans(source, text)}
        return np.array(sorted(codes), dtype=np.int64)
