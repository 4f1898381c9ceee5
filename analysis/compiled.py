"""numba's compiler as the analysis uses it, for the few loops that numpy can only do as many whole-array passes.

Each such function is compiled once per machine and cached beside its module (~18 s in all, which `make install` spends
on a small synthetic analysis so that the first real one does not; ~0.4 s to import numba and load them after), and
releases the GIL, so the analysis's threads run it at once. No recursion: numba's cache loads a recursive function back
into a process that then crashes (tests/test_candidates.py).
Where the code is read from an archive (a Scrapyd egg) numba cannot cache beside it: there each process compiles
anew.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numba

_CACHEABLE = os.path.exists(__file__)  # False inside a zip or an egg


def compiled(function: Callable) -> Callable:
    return numba.njit(nogil=True, cache=_CACHEABLE)(function)
