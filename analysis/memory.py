"""Memory that the analysis freed, handed back to the system between its stages."""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (macOS, musl)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (AttributeError, OSError):
        return None


_MALLOC_TRIM = _malloc_trim()


def return_freed_memory() -> None:
    """Give the pages of the C heap that hold only freed blocks back to the system (glibc's malloc_trim; elsewhere,
    nothing). glibc keeps them for reuse, but past its adaptive threshold (up to 32 MB) a later stage's arrays are
    mapped anew beside them, so what one stage freed stayed in every later stage's peak: after the TF-IDF fit at
    100,000 pages, RSS +384 MB for a 146 MB matrix, +188 MB trimmed (BENCHMARKS.md, "Analysis"). Called between stages."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
