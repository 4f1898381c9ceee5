"""Embedding backends and start-up: speed side by side, agreement with torch on real crawls, command start-up.

    .venv/bin/python bench/backend.py speed [--texts 256] [--batch-size 32] [--repeats 3] [--json PATH]
    .venv/bin/python bench/backend.py overlap DB [DB ...] [--json PATH]
    .venv/bin/python bench/backend.py startup [--runs 5] [--json PATH]
    python3 bench/backend.py cuda [--model NAME_OR_PATH] [--texts 4096] [--batch-sizes 32 128 512] [--json PATH]

`speed`: first, for each backend in a fresh interpreter, the seconds from nothing imported to the first
vector (imports, model load, one text), the ONNX export already in the cache. Then, in one process, every
backend loaded once and --repeats rounds that encode the same --texts page texts on each backend in turn
(the order rotating each round, so that a drift of the shared machine falls on all alike): wall and CPU
seconds, pages/s, and for the ONNX backends the share of the time spent outside onnxruntime's
`session.run` (tokenising, sorting, padding: the Python overhead). The texts are bench/analyze.py's: made as
analysis.embed.page_text makes them from the demo posts' prose.

`overlap`: for each crawl database (read from a copy), the analysis's own page texts embedded by every
backend; per ONNX backend, the share of each page's 5 nearest pages (by cosine, itself left out) that
torch's 5 nearest share, averaged over pages, and the cosine of each page's vector with torch's.

`cuda` (on a machine with a GPU): the torch backend on it, model load seconds, then --repeats encodes of --texts page
texts per batch size, in fp32 (what `--device cuda` runs) and then in fp16; fp16's cosine with fp32's vectors and
the share of each text's 5 nearest texts that both precisions share; the batch size `scrapy analyze` encodes with on
that device, and the least cosine between fp32's vectors at the first and the last batch size.

`startup`: --runs runs each of `scrapy --help`, `scrapy crawl --help`, `scrapy analyze --help`,
`python -m analysis --help`, `scrapy crawl site` (no url: start-up up to the argument check) and a whole
crawl of a one-page site served on 127.0.0.1; median and spread of the wall time, and which model
libraries (torch, sentence-transformers, transformers, onnxruntime, tokenizers) each had imported at exit.

The ONNX export is made into the usual cache ($LINKSPIDER_CACHE, else ~/.cache/linkspider) if it is not
there, before anything is timed. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402 (after the path is set, like every bench script)

from bench.analyze import cpu_seconds, demo_page_texts, machine, print_json  # noqa: E402

BACKENDS = ("torch", "onnx", "onnx-int8")
LIBRARIES = ("torch", "sentence_transformers", "transformers", "onnxruntime", "tokenizers")
FIRST_VECTOR = """
import json, sys, time
start = time.perf_counter()
from analysis.embed import load_encoder
encoder = load_encoder("all-MiniLM-L6-v2", "cpu", sys.argv[1])
loaded = time.perf_counter()
encoder.encode(["a kettle"], 32)
end = time.perf_counter()
print(json.dumps({"load_s": loaded - start, "first_vector_s": end - start}))
"""
MODULES_AT_EXIT = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print('MODULES', sorted({{m.split('.')[0] for m in sys.modules}} & {libraries!r}), file=sys.stderr))\n"
    "sys.argv = [{module!r}, *sys.argv[1:]]\n"
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
)


def ensure_exported() -> None:
    from analysis.embed import DEFAULT_MODEL, onnx_export

    onnx_export(DEFAULT_MODEL)


class TimedSession:
    """onnxruntime's session with the seconds spent in run() added up."""

    def __init__(self, session: Any) -> None:
        self.session, self.seconds = session, 0.0

    def run(self, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.session.run(*args)
        finally:
            self.seconds += time.perf_counter() - start


def bench_speed(args: argparse.Namespace) -> dict[str, Any]:
    from analysis.embed import DEFAULT_MODEL, load_encoder

    ensure_exported()
    before = machine()
    fresh = {}
    for backend in args.backends:
        done = subprocess.run([sys.executable, "-c", FIRST_VECTOR, backend], cwd=REPO, capture_output=True, text=True, check=True)
        fresh[backend] = {key: round(value, 2) for key, value in json.loads(done.stdout.strip().splitlines()[-1]).items()}
    texts = demo_page_texts(args.texts, args.seed)
    encoders = {backend: load_encoder(DEFAULT_MODEL, "cpu", backend) for backend in args.backends}
    for encoder in encoders.values():
        encoder.encode(texts[:args.batch_size], args.batch_size)  # warm-up
        if hasattr(encoder, "session"):
            encoder.session = TimedSession(encoder.session)
    runs: dict[str, list[dict[str, float]]] = {backend: [] for backend in args.backends}
    vectors = {}
    for number in range(args.repeats):
        order = list(args.backends[number % len(args.backends):]) + list(args.backends[:number % len(args.backends)])
        for backend in order:
            encoder = encoders[backend]
            if hasattr(encoder, "session"):
                encoder.session.seconds = 0.0
            start, cpu = time.perf_counter(), cpu_seconds()
            vectors[backend] = encoder.encode(texts, args.batch_size)
            seconds = time.perf_counter() - start
            run = {"encode_s": round(seconds, 3), "cpu_s": round(cpu_seconds() - cpu, 3), "pages_per_s": round(len(texts) / seconds, 1),
                   "load_average": round(os.getloadavg()[0], 2)}
            if hasattr(encoder, "session"):
                run["outside_session_share"] = round(1 - encoder.session.seconds / seconds, 4)
            runs[backend].append(run)
    import torch

    return {"machine": before, "texts": len(texts), "batch_size": args.batch_size, "torch_threads": torch.get_num_threads(),
            "fresh_interpreter": fresh, "runs": runs,
            "median_pages_per_s": {b: statistics.median(r["pages_per_s"] for r in runs[b]) for b in args.backends},
            "cosine_with_torch": {b: round(float((vectors[b] * vectors["torch"]).sum(axis=1).mean()), 4)
                                  for b in args.backends if "torch" in vectors},
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def bench_cuda(args: argparse.Namespace) -> dict[str, Any]:
    """The torch backend on a GPU: pages/s per batch size in fp32 (what `--device cuda` runs) and fp16, and how
    far fp16's vectors and 5 nearest texts stray from fp32's."""
    import torch

    from analysis.embed import TorchEncoder, load_model

    before = machine()
    start = time.perf_counter()
    encoder = TorchEncoder(load_model(args.model, "cuda"))
    loaded = time.perf_counter() - start
    texts = demo_page_texts(args.texts, args.seed)
    runs: dict[str, dict[str, Any]] = {}
    vectors, by_batch = {}, {}
    for precision in ("fp32", "fp16"):
        if precision == "fp16":
            encoder.model.half()
        encoder.encode(texts[:512], 128)  # warm-up: kernels chosen, memory pool grown
        for batch_size in args.batch_sizes:
            seconds = []
            for _ in range(args.repeats):
                torch.cuda.synchronize()
                start = time.perf_counter()
                vectors[precision] = encoder.encode(texts, batch_size)
                seconds.append(time.perf_counter() - start)
            by_batch.setdefault(precision, []).append(vectors[precision])
            runs[f"{precision}, batch {batch_size}"] = {"encode_s": [round(s, 3) for s in seconds],
                                                        "pages_per_s": round(len(texts) / statistics.median(seconds), 1)}
            print(json.dumps({f"{precision}, batch {batch_size}": runs[f"{precision}, batch {batch_size}"]}), file=sys.stderr, flush=True)
    cosine = (vectors["fp16"] * vectors["fp32"]).sum(axis=1)
    batches = (by_batch["fp32"][0] * by_batch["fp32"][-1]).sum(axis=1)
    nearest = top(vectors["fp32"], 5), top(vectors["fp16"], 5)
    return {"machine": before, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "model": args.model,
            "load_s": round(loaded, 2), "texts": len(texts), "runs": runs, "product_batch_size": encoder.batch_size,
            "fp32_first_against_last_batch_size_cosine_min": round(float(batches.min()), 6),
            "fp16_against_fp32": {"cosine_mean": round(float(cosine.mean()), 6), "cosine_min": round(float(cosine.min()), 6),
                                  "top5_overlap": round(float(np.mean([len(set(a) & set(b)) / 5 for a, b in zip(*nearest)])), 4)},
            "peak_gpu_memory_mib": round(torch.cuda.max_memory_allocated() / 2 ** 20)}


def top(vectors: np.ndarray, k: int) -> np.ndarray:
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    return np.argsort(-similarity, axis=1, kind="stable")[:, :k]


def bench_overlap(args: argparse.Namespace) -> dict[str, Any]:
    from analysis.embed import DEFAULT_MODEL, load_encoder, page_text
    from analysis.load import load_corpus
    from linkspider.db import open_existing

    ensure_exported()
    result: dict[str, Any] = {"machine": machine(), "k": args.k, "sites": {}}
    encoders = {backend: load_encoder(DEFAULT_MODEL, "cpu", backend) for backend in BACKENDS}
    for db_path in args.dbs:
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "copy.db"
            shutil.copyfile(db_path, copy)
            corpus = load_corpus(open_existing(copy))
        texts = [page_text(title, text) for title, text in zip(corpus.titles, corpus.texts)]
        vectors, seconds = {}, {}
        for backend, encoder in encoders.items():
            start = time.perf_counter()
            vectors[backend] = encoder.encode(texts, 32)
            seconds[backend] = round(time.perf_counter() - start, 2)
        reference = top(vectors["torch"], args.k)
        site: dict[str, Any] = {"pages": len(texts), "encode_s": seconds}
        for backend in BACKENDS[1:]:
            neighbours = top(vectors[backend], args.k)
            cosine = (vectors[backend] * vectors["torch"]).sum(axis=1)
            site[backend] = {
                f"top{args.k}_overlap": round(float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(reference, neighbours)])), 4),
                "cosine_mean": round(float(cosine.mean()), 5), "cosine_min": round(float(cosine.min()), 5)}
        result["sites"][str(db_path)] = site
        print(json.dumps({str(db_path): site}), file=sys.stderr, flush=True)
    return result


def one_page_site(folder: Path) -> Path:
    (folder / "index.html").write_text("<html><head><title>One page</title></head><body><main><p>"
                                       + "A page about kettles and coffee. " * 30 + "</p></main></body></html>")
    return folder


def timed_command(command: list[str], module: str) -> tuple[float, int, list[str]]:
    """Wall seconds, exit status, and the model libraries imported by `python -m module args` (listed at exit)."""
    probe = [sys.executable, "-c", MODULES_AT_EXIT.format(libraries=set(LIBRARIES), module=module), *command]
    start = time.perf_counter()
    done = subprocess.run(probe, cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    seconds = time.perf_counter() - start
    [line] = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    return seconds, done.returncode, ast.literal_eval(line.removeprefix("MODULES "))


def bench_startup(args: argparse.Namespace) -> dict[str, Any]:
    from linkspider.localserver import serve

    before = machine()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, serve(one_page_site(Path(folder))) as url:
        commands = {
            "scrapy --help": (["--help"], "scrapy.cmdline"),
            "scrapy crawl --help": (["crawl", "--help"], "scrapy.cmdline"),
            "scrapy analyze --help": (["analyze", "--help"], "scrapy.cmdline"),
            "python -m analysis --help": (["--help"], "analysis"),
            "scrapy crawl site (no url)": (["crawl", "site"], "scrapy.cmdline"),
            "scrapy crawl site, one-page site": (["crawl", "site", "-a", f"url={url}", "-a", f"db={folder}/one.db",
                                                  "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=WARNING"], "scrapy.cmdline"),
        }
        for name, (command, module) in commands.items():
            times, imported, codes = [], set(), set()
            for _ in range(args.runs):
                seconds, code, libraries = timed_command(command, module)
                times.append(seconds)
                imported.update(libraries)
                codes.add(code)
            results[name] = {"median_s": round(statistics.median(times), 2), "min_s": round(min(times), 2),
                             "max_s": round(max(times), 2), "exit": sorted(codes), "model_libraries": sorted(imported)}
            print(f"{name}: median {results[name]['median_s']} s ({results[name]['min_s']}-{results[name]['max_s']}), "
                  f"model libraries {results[name]['model_libraries']}", file=sys.stderr, flush=True)
    return {"machine": before, "runs": args.runs, "commands": results, "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    speed = commands.add_parser("speed", help="pages/s of each backend, side by side")
    speed.add_argument("--texts", type=int, default=256)
    speed.add_argument("--batch-size", type=int, default=32)
    speed.add_argument("--repeats", type=int, default=3)
    speed.add_argument("--seed", type=int, default=1)
    speed.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    overlap = commands.add_parser("overlap", help="agreement of the ONNX backends with torch on crawl databases")
    overlap.add_argument("dbs", nargs="+", type=Path)
    overlap.add_argument("--k", type=int, default=5)
    startup = commands.add_parser("startup", help="start-up time of the commands")
    startup.add_argument("--runs", type=int, default=5)
    cuda = commands.add_parser("cuda", help="pages/s of the torch backend on a GPU, fp32 and fp16")
    cuda.add_argument("--model", default="all-MiniLM-L6-v2", help="name or path (default: all-MiniLM-L6-v2)")
    cuda.add_argument("--texts", type=int, default=4096)
    cuda.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 128, 512])
    cuda.add_argument("--repeats", type=int, default=3)
    cuda.add_argument("--seed", type=int, default=1)
    for sub in (speed, overlap, startup, cuda):
        sub.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    result = {"speed": bench_speed, "overlap": bench_overlap, "startup": bench_startup, "cuda": bench_cuda}[args.command](args)
    print_json(result, args.json)


if __name__ == "__main__":
    main()
