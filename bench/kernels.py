"""The anchor search's two heaviest compiled loops alone, on the calls a synthetic analysis makes of them.

    .venv/bin/python bench/kernels.py capture --pages 20000 [--calls 24] [--out FILE]
    .venv/bin/python bench/kernels.py time [FILE] [--code DIR] [--repeats 3]

`capture` runs the stages after embedding on bench/analyze.py's synthetic site and keeps the arguments of the first
--calls calls of windows.find_matches and of windows.strong_windows (both modes: each pair's best only, and the
chosen pairs' every window) in a pickle. `time` runs those calls with the analysis/ of --code (this checkout by
default, or another copy of the project) and prints each loop's best time over --repeats and a digest of everything
it returned: a change that speeds a loop up must leave its digest as it was (BENCHMARKS.md, "Analysis").
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import pickle
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
KERNELS = ("find_matches", "strong_windows")
DEFAULT_FILE = Path(tempfile.gettempdir()) / "linkspider-kernel-calls.pkl"


def capture(pages: int, calls: int, out: Path) -> None:
    sys.path.insert(0, str(REPO))
    import analysis.anchors as anchors
    from bench.analyze import InstrumentedPropose, SyntheticSite

    kept: dict[str, list[tuple]] = {name: [] for name in KERNELS}
    lock = threading.Lock()  # the search's threads call them at once

    def keeping(name: str):
        loop = getattr(anchors, name)

        def call(*args):
            with lock:
                if len(kept[name]) < calls:
                    kept[name].append(args)
            return loop(*args)
        return call

    for name in KERNELS:
        setattr(anchors, name, keeping(name))
    site = SyntheticSite(pages, seed=1)
    vectors = site.vectors()
    InstrumentedPropose(lambda: vectors, 1.0).run(site.corpus())
    with open(out, "wb") as file:
        pickle.dump(kept, file)
    print(f"{', '.join(f'{len(found)} calls of {name}' for name, found in kept.items())} -> {out}")


def time_calls(file: Path, code: Path, repeats: int) -> None:
    sys.path.insert(0, str(code))
    windows = importlib.import_module("analysis.windows")
    with open(file, "rb") as opened:
        kept = pickle.load(opened)
    for name in KERNELS:
        loop, calls = getattr(windows, name), kept[name]
        loop(*calls[0])  # compiled, or loaded from numba's cache, before the clock starts
        best, outputs = float("inf"), []
        for _ in range(repeats):
            start = time.perf_counter()
            outputs = [loop(*args) for args in calls]
            best = min(best, time.perf_counter() - start)
        digest = hashlib.sha1()
        for output in outputs:
            for array in output:
                digest.update(np.ascontiguousarray(array).tobytes())
        print(f"{name:15} {len(calls)} calls  best of {repeats}: {best:.3f} s  digest {digest.hexdigest()[:12]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    taking = commands.add_parser("capture", help="keep the loops' arguments from a synthetic analysis")
    taking.add_argument("--pages", type=int, default=20_000, help="synthetic pages (default: 20000)")
    taking.add_argument("--calls", type=int, default=24, help="calls kept of each loop (default: 24)")
    taking.add_argument("--out", type=Path, default=DEFAULT_FILE, help=f"pickle to write (default: {DEFAULT_FILE})")
    timing = commands.add_parser("time", help="time the kept calls, and digest what they return")
    timing.add_argument("file", type=Path, nargs="?", default=DEFAULT_FILE, help="a capture's pickle")
    timing.add_argument("--code", type=Path, default=REPO, help="the project whose analysis/ runs them (default: this)")
    timing.add_argument("--repeats", type=int, default=3, help="runs of all the calls; the best is reported (default: 3)")
    args = parser.parse_args()
    if args.command == "capture":
        capture(args.pages, args.calls, args.out)
    else:
        time_calls(args.file, args.code.resolve(), args.repeats)


if __name__ == "__main__":
    main()
