"""Nearest pages by meaning: exact against approximate FAISS indexes, side by side, from 10k to 1M pages.

For each size, one process makes clustered synthetic vectors (as bench/analyze.py's SyntheticSite.vectors
makes them: 384-d float32, normalise(cluster centre + noise), centres normalise(0.35 common + 0.9
super-topic + own direction), clusters of log-normal sizes; max(100, pages // 100) clusters, so 100 at
1k-10k, 1,000 at 100k, 10,000 at 1M), then builds each index over all pages and searches every page's
k = 31 nearest (Options.neighbours 30 + the page itself), as analysis.index.nearest does. Recorded per
index: build (train + add) and search wall time, CPU time (all threads), the process's peak RSS while
the index was built and searched (high-water mark reset through /proc/self/clear_refs) and its growth
over the RSS before it (vectors and reference lists), recall@10 and recall@30 against exact search.

Exact reference: up to --exact-max pages, the exact lists of every page (IndexFlatIP, itself measured);
above it, exact search of --queries sampled pages only (faiss.knn over the vectors, no copy), and the
recall is that sample's. recall@10 = |approx top 10 & exact top 10| / 10 per page, both lists with the
page itself (as nearest() returns them); recall@30 the same on the 30 first of the 31.

Index specs (--methods, comma-free, space separated; defaults depend on the size):
  flat                              faiss.IndexFlatIP
  hnsw:M=32,efc=80,efs=128/64       IndexHNSWFlat, inner product; several efSearch values share one build
  hnswsq:M=32,efc=80,efs=128        IndexHNSWSQ QT_8bit
  ivf:c=4,train=40,iter=10,nprobe=8/16   IndexIVFFlat, nlist = c * sqrt(pages), k-means trained on a
                                    sample of train * nlist pages (seeded), iter iterations
  ivfsq:c=4,nprobe=8/16             IndexIVFScalarQuantizer QT_8bit, same quantizer training
  lib:limit=0,c=2,nprobe=4/8         analysis.index.nearest itself (build and search in one call, so
                                    all its time is under search), its constants set from the spec:
                                    limit EXACT_LIMIT, c IVF_LISTS_PER_ROOT, nprobe IVF_PROBES,
                                    train IVF_TRAIN_PER_LIST, iter IVF_ITERATIONS

    .venv/bin/python bench/neighbours.py --sizes 10000,20000,50000,100000 --json /tmp/nb.json
    .venv/bin/python bench/neighbours.py --sizes 1000000 --methods "ivf:c=4,nprobe=8/16" --json /tmp/nb1m.json
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DIM = 384
K = 31


def clustered_vectors(pages: int, seed: int, clusters: int | None = None) -> np.ndarray:
    """SyntheticSite.vectors (bench/analyze.py) without its 1,000-cluster cap: max(100, pages // 100) clusters."""
    rng = np.random.default_rng(seed)
    clusters = clusters or max(100, pages // 100)
    supers = max(10, clusters // 10)
    sizes = rng.lognormal(0.0, 0.7, clusters)
    cluster_of = rng.choice(clusters, size=pages, p=sizes / sizes.sum())
    super_of = rng.integers(0, supers, clusters)

    def unit(m: np.ndarray) -> np.ndarray:
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    common = unit(rng.standard_normal((1, DIM)))
    super_vectors = unit(rng.standard_normal((supers, DIM)))
    centres = unit(0.35 * common + 0.9 * super_vectors[super_of] + unit(rng.standard_normal((clusters, DIM))))
    out = np.empty((pages, DIM), dtype=np.float32)
    block = 100_000  # in blocks: float64 noise for 1M pages would be 3 GB
    for start in range(0, pages, block):
        end = min(pages, start + block)
        noise = rng.uniform(0.75, 1.15, (end - start, 1)) * unit(rng.standard_normal((end - start, DIM)))
        out[start:end] = unit(centres[cluster_of[start:end]] + noise)
    return out


# ---------------------------------------------------------------------------- measuring


def trim() -> None:
    """Hand freed heap memory back to the system (glibc), so that the next index's RSS growth is its own."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


class Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), cpu_s()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), cpu_s()
        out = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return out


def recall(found: np.ndarray, truth: np.ndarray, depth: int) -> tuple[float, float]:
    """Mean and minimum share of each exact top `depth` found in the approximate top `depth`."""
    shares = np.array([len(set(a[:depth].tolist()) & set(b[:depth].tolist())) / depth for a, b in zip(found, truth)])
    return float(shares.mean()), float(shares.min())


def parse(spec: str) -> tuple[str, dict[str, str]]:
    kind, _, rest = spec.partition(":")
    params = dict(item.split("=", 1) for item in rest.split(",") if item)
    return kind, params


def build(kind: str, params: dict[str, str], vectors: np.ndarray, seed: int) -> tuple[Any, dict[str, Any]]:
    import faiss

    pages = len(vectors)
    info: dict[str, Any] = {}
    if kind == "flat":
        index = faiss.IndexFlatIP(DIM)
    elif kind in ("hnsw", "hnswsq"):
        m = int(params.get("M", 32))
        if kind == "hnsw":
            index = faiss.IndexHNSWFlat(DIM, m, faiss.METRIC_INNER_PRODUCT)
        else:
            index = faiss.IndexHNSWSQ(DIM, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)
            index.train(vectors)
        index.hnsw.efConstruction = int(params.get("efc", 80))
    elif kind in ("ivf", "ivfsq"):
        nlist = max(1, int(round(float(params.get("c", 4)) * pages ** 0.5)))
        quantizer = faiss.IndexFlatIP(DIM)
        if kind == "ivf":
            index = faiss.IndexIVFFlat(quantizer, DIM, nlist, faiss.METRIC_INNER_PRODUCT)
        else:
            index = faiss.IndexIVFScalarQuantizer(quantizer, DIM, nlist, faiss.ScalarQuantizer.QT_8bit,
                                                  faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        index.cp.niter = int(params.get("iter", 10))
        index.cp.max_points_per_centroid = 10**9  # we sample ourselves
        index.cp.min_points_per_centroid = 1
        sample_size = min(pages, int(float(params.get("train", 40)) * nlist))
        sample = np.sort(np.random.default_rng(seed).choice(pages, sample_size, replace=False))
        index.train(vectors[sample])
        info.update(nlist=nlist, train_pages=sample_size)
    else:
        raise SystemExit(f"unknown index kind {kind!r}")
    index.add(vectors)
    return index, info


def search_settings(kind: str, params: dict[str, str]) -> list[tuple[str, int]]:
    if kind in ("hnsw", "hnswsq"):
        return [("efs", int(v)) for v in params.get("efs", "128").split("/")]
    if kind in ("ivf", "ivfsq"):
        return [("nprobe", int(v)) for v in params.get("nprobe", "8/16").split("/")]
    if kind == "lib" and "nprobe" in params:
        return [("nprobe", int(v)) for v in params["nprobe"].split("/")]
    return [("", 0)]


def apply(index: Any, kind: str, name: str, value: int) -> None:
    if name == "efs":
        index.hnsw.efSearch = value
    elif name == "nprobe":
        index.nprobe = value


def default_methods(pages: int, exact_max: int) -> list[str]:
    methods = ["flat"] if pages <= exact_max else []
    return methods + ["hnsw:M=32,efc=80,efs=128", "hnsw:M=16,efc=40,efs=64/128",
                      "ivf:c=1,train=40,iter=10,nprobe=2/4/8", "ivf:c=2,train=40,iter=10,nprobe=4/8/16",
                      "ivf:c=4,train=40,iter=10,nprobe=4/8/16/32", "ivfsq:c=2,train=40,iter=10,nprobe=8/16"]


def run_size(pages: int, args: argparse.Namespace) -> dict[str, Any]:
    import faiss

    faiss.omp_set_num_threads(args.threads)
    clock = Clock()
    vectors = clustered_vectors(pages, args.seed)
    made_s = clock.lap()[0]
    result: dict[str, Any] = {"pages": pages, "clusters": max(100, pages // 100), "k": K, "threads": args.threads,
                              "vectors_s": round(made_s, 1), "rows": []}
    methods = args.methods.split() if args.methods else default_methods(pages, args.exact_max)
    truth = None
    sample = np.arange(pages)
    if pages > args.exact_max:
        sample = np.sort(np.random.default_rng(args.seed + 1).choice(pages, min(args.queries, pages), replace=False))
        clock.lap()
        _, truth = faiss.knn(vectors[sample], vectors, K, metric=faiss.METRIC_INNER_PRODUCT)
        result["reference"] = {"queries": len(sample), "exact_s": round(clock.lap()[0], 1)}
    elif "flat" not in methods:
        methods.insert(0, "flat")
    for spec in methods:
        kind, params = parse(spec)
        if kind == "flat" and pages > args.exact_max:
            continue
        trim()
        base_rss = rss_mb()
        reset_peak()
        clock.lap()
        load_before = load()
        if kind == "lib":
            from analysis import index as library

            names = {"limit": "EXACT_LIMIT", "c": "IVF_LISTS_PER_ROOT", "train": "IVF_TRAIN_PER_LIST", "iter": "IVF_ITERATIONS"}
            for short, constant in names.items():
                if short in params:
                    setattr(library, constant, type(getattr(library, constant))(float(params[short])))
            info = {name: getattr(library, name) for name in names.values()}
            build_s, build_cpu, index = 0.0, 0.0, None
        else:
            index, info = build(kind, params, vectors, args.seed)
            build_s, build_cpu = clock.lap()
        for name, value in search_settings(kind, params):
            clock.lap()
            if kind == "lib":
                if name:
                    library.IVF_PROBES = value
                scores, found = library.nearest(vectors, K - 1)
            else:
                apply(index, kind, name, value)
                scores, found = index.search(vectors, K)
            search_s, search_cpu = clock.lap()
            if kind == "flat" and truth is None:
                truth = found
            r10, min10 = recall(found[sample], truth, 10)
            r30, _ = recall(found[sample], truth, 30)
            row = {"method": spec.split(":")[0] + (f" {', '.join(f'{a}={b}' for a, b in params.items() if a not in ('efs', 'nprobe'))}" if params else ""),
                   "search": f"{name}={value}" if name else "", **info,
                   "build_s": round(build_s, 2), "build_cpu_s": round(build_cpu, 2),
                   "search_s": round(search_s, 2), "search_cpu_s": round(search_cpu, 2),
                   "total_s": round(build_s + search_s, 2), "total_cpu_s": round(build_cpu + search_cpu, 2),
                   "peak_rss_mb": round(peak_mb()), "rss_before_mb": round(base_rss),
                   "peak_growth_mb": round(peak_mb() - base_rss),
                   "recall_at_10": round(r10, 4), "min_recall_at_10": round(min10, 3), "recall_at_30": round(r30, 4),
                   "missing": int((found < 0).sum()), "self_first": round(float((found[sample, 0] == sample).mean()), 4),
                   "load_before": load_before, "load_after": load()}
            result["rows"].append(row)
            print(json.dumps({"pages": pages, **row}), file=sys.stderr, flush=True)
            del scores, found
        del index
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| pages | index | search | build s | search s | total s (CPU s) | peak RSS (growth) | recall@10 (min) | recall@30 | load avg |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for result in results:
        for row in result["rows"]:
            lines.append(f"| {result['pages']:,} | {row['method']} | {row['search']} | {row['build_s']} | {row['search_s']} | "
                         f"{row['total_s']} ({row['total_cpu_s']}) | {row['peak_rss_mb']} MB (+{row['peak_growth_mb']}) | "
                         f"{row['recall_at_10']} ({row['min_recall_at_10']}) | {row['recall_at_30']} | {row['load_before']} / {row['load_after']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,20000,50000,100000", help="comma-separated page counts")
    parser.add_argument("--methods", default="", help="space-separated index specs (see the docstring); default by size")
    parser.add_argument("--exact-max", type=int, default=100_000, help="largest size with exact lists of every page")
    parser.add_argument("--queries", type=int, default=1000, help="sampled pages for recall above --exact-max")
    parser.add_argument("--threads", type=int, default=2, help="faiss.omp_set_num_threads")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_size(args.child, args)))
        return
    results = []
    for pages in (int(size) for size in args.sizes.split(",")):
        # one process per size: the peak RSS of one size does not carry into the next
        command = [sys.executable, os.path.abspath(__file__), "--child", str(pages), "--exact-max", str(args.exact_max),
                   "--queries", str(args.queries), "--threads", str(args.threads), "--seed", str(args.seed),
                   "--methods", args.methods]
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    import faiss

    report = {"date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "faiss": faiss.__version__,
              "nproc": os.cpu_count(), "argv": sys.argv[1:], "results": results}
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=1)
    print(table(results))


if __name__ == "__main__":
    main()
