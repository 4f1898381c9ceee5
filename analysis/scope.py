"""Which pages a suggestion may come from and point to: `--exclude` and `--targets`, as URL patterns.

A site has sections no editor links from or to (tag archives, paginated lists, a legal section), and
an agency often works for a few pages (products, services, a pillar article): the queue should hold
only links to those. Excluded pages stay in the analysis as what they are, pages that link and are
linked (their links count towards every target's inbound links and the impact), but no suggestion
starts or ends on one; with target patterns, only the pages they match are targets.

A pattern is shell-style (`fnmatch`: `*` also crosses `/`), case-sensitive, and matches a page
whose path (with its query) or whole URL it matches: `/tag/*` and `https://example.com/tag/*` both
name the tag pages. The crawl's `-a exclude` takes the same patterns (linkspider.urls.matches).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linkspider.urls import matches


class ScopeError(ValueError):
    """The patterns leave no page to suggest a link from, or none to link to."""


@dataclass(frozen=True)
class Scope:
    exclude: tuple[str, ...] = ()  # pages neither source nor target
    targets: tuple[str, ...] = ()  # if any: the only pages that may be targets

    def __bool__(self) -> bool:
        return bool(self.exclude or self.targets)

    def of(self, urls: list[str]) -> InScope:
        """What the patterns allow of these pages; a ScopeError where no page may be a source, or none a target."""
        matched = {pattern: matching(urls, pattern) for pattern in (*self.exclude, *self.targets)}
        excluded, targets = np.zeros(len(urls), dtype=bool), np.full(len(urls), not self.targets)
        for pattern in self.exclude:
            excluded |= matched[pattern]
        for pattern in self.targets:
            targets |= matched[pattern]
        targets &= ~excluded
        if excluded.all():
            raise ScopeError(f"--exclude {_quoted(self.exclude)} leaves none of the {len(urls)} analysed pages; "
                             "a pattern matches a URL's path (/tag/*) or the whole URL")
        if not targets.any():
            raise ScopeError(f"no analysed page outside --exclude matches --targets {_quoted(self.targets)}; "
                             "a pattern matches a URL's path (/products/*) or the whole URL")
        unmatched = tuple(pattern for pattern, pages in matched.items() if not pages.any())
        line = (f"pages excluded (neither source nor target): {int(excluded.sum())}, pages that may be targets: "
                f"{int(targets.sum())}" + (f"; matching no page: {_quoted(unmatched)}" if unmatched else ""))
        return InScope(~excluded, targets, line)


@dataclass(frozen=True)
class InScope:
    """Per page: whether it may be a source, whether it may be a target; and the summary's line on them."""

    sources: np.ndarray
    targets: np.ndarray
    line: str


def matching(urls: list[str], pattern: str) -> np.ndarray:
    """Per URL: whether the pattern matches its path (with its query) or the whole URL (linkspider.urls.matches)."""
    return np.fromiter((matches(url, pattern) for url in urls), dtype=bool, count=len(urls))


def _quoted(patterns: tuple[str, ...]) -> str:
    return ", ".join(repr(pattern) for pattern in patterns)
