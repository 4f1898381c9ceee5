"""End to end: a site crawled and analysed from cold, then again with nothing changed, per embedding backend.

    .venv/bin/python bench/endtoend.py [--pages 300] [--backends torch onnx onnx-int8] [--out DIR] [--json PATH]

bench/crawl.py's generator writes a --pages site (posts of 600-1,000 words), linkspider.localserver.serve
serves it on 127.0.0.1, and for each backend, in fresh processes, exactly as a user types them:

1. cold: `scrapy crawl site -a url=URL -a db=DB -s AUTOTHROTTLE_ENABLED=False` into a new database, then
   `scrapy analyze DB --backend B --no-progress` (imports, model load and every page embedded);
2. again, nothing changed: the same crawl into the same database, then the same analysis (every vector
   cached: no model is loaded);
3. the analysis alone once more.

Each command's wall time, the crawl's and the analysis's, and the load average are recorded. The ONNX
export is made into the cache ($LINKSPIDER_CACHE, else ~/.cache/linkspider) before anything is timed,
as it is on a machine that has analysed once; with --export-fresh each ONNX backend's cold run starts
from an empty cache of its own, so its export is timed as part of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.analyze import machine, print_json  # noqa: E402 (after the path is set, like every bench script)

BACKENDS = ("torch", "onnx", "onnx-int8")
SCRAPY = [sys.executable, "-m", "scrapy.cmdline"]


def timed(command: list[str], log: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    with open(log, "a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        subprocess.run(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, check=True, env=env)
    return round(time.perf_counter() - start, 2)


def one_pass(url: str, db: Path, backend: str, log: Path, env: dict[str, str], crawl: bool = True) -> dict[str, Any]:
    result: dict[str, Any] = {"load_average_before": round(os.getloadavg()[0], 2)}
    if crawl:
        result["crawl_s"] = timed([*SCRAPY, "crawl", "site", "-a", f"url={url}", "-a", f"db={db}",
                                   "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=WARNING"], log, env)
    result["analyze_s"] = timed([*SCRAPY, "analyze", str(db), "--backend", backend, "--no-progress"], log, env)
    result["total_s"] = round(result.get("crawl_s", 0) + result["analyze_s"], 2)
    return result


def measure(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    from bench.crawl import generate_site
    from linkspider.localserver import serve

    before = machine()
    site = out / "site"
    if site.exists():
        shutil.rmtree(site)
    generate_site(site, args.pages, args.seed)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if not args.export_fresh:
        from analysis.embed import DEFAULT_MODEL, onnx_export

        onnx_export(DEFAULT_MODEL)
    results: dict[str, Any] = {}
    with serve(site) as url:
        for backend in args.backends:
            db, log = out / f"{backend}.db", out / f"{backend}.log"
            for stale in out.glob(f"{backend}.*"):
                stale.unlink()
            shutil.rmtree(out / f"cache-{backend}", ignore_errors=True)
            cold_env = {**env, "LINKSPIDER_CACHE": str(out / f"cache-{backend}")} if args.export_fresh else env
            runs = {"cold": one_pass(url, db, backend, log, cold_env),
                    "again": one_pass(url, db, backend, log, cold_env),
                    "analyze_again": one_pass(url, db, backend, log, cold_env, crawl=False)}
            results[backend] = {**runs, "log": str(log)}
            print(f"{backend}: cold {runs['cold']['total_s']} s (crawl {runs['cold']['crawl_s']}, analyze "
                  f"{runs['cold']['analyze_s']}); again {runs['again']['total_s']} s (crawl {runs['again']['crawl_s']}, "
                  f"analyze {runs['again']['analyze_s']}); analyze alone {runs['analyze_again']['analyze_s']} s",
                  file=sys.stderr, flush=True)
    return {"machine": before, "pages": args.pages, "site_pages": sum(1 for _ in site.rglob("index.html")),
            "export_fresh": args.export_fresh, "results": results, "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--export-fresh", action="store_true", help="time each ONNX backend's export in its cold run")
    parser.add_argument("--out", type=Path, help="keep the site, databases and logs here (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        result = measure(args, args.out.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="linkspider-endtoend-") as folder:
            result = measure(args, Path(folder))
    print_json(result, args.json)


if __name__ == "__main__":
    main()
