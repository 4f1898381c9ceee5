"""numba's compiler as the analysis uses it, for the few loops that numpy can only do as many whole-array passes.

Each such function is compiled once per machine and cached beside its module (~18 s in all, which `make install` spends
on a small synthetic analysis so that the first real one does not; ~0.4 s to import numba and load them after), and
releases the GIL, so the analysis's threads run it at once. No recursion: numba's cache loads a recursive function back
into a process that then crashes (test_analysis_stages).
Where the code is read from an archive (a Scrapyd egg) numba cannot cache beside it: there each process compiles
anew.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numba
import numpy as np

_CACHEABLE = os.path.exists(__file__)  # False inside a zip or an egg


def compiled(function: Callable) -> Callable:
    return numba.njit(nogil=True, cache=_CACHEABLE)(function)


@compiled
def one_of(code: int, codes: np.ndarray) -> bool:
    """The code point is one of these few (a scan: no sort, no search). Compiled into its callers' caches, which numba
    keys by their own files: a change here needs analysis/__pycache__ deleted with it."""
    for other in codes:
        if code == other:
            return True
    return False
