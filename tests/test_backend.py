"""The embedding backends: the ONNX export made once into the cache, its vectors against torch's, the vector cache
kept apart per backend, --device cuda without CUDA, and no model library on the help and crawl paths."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import sqlite_utils

from analysis import embed
from analysis.embed import DEFAULT_MODEL, ModelError, choose_backend, embed_pages, gpu_likely, load_encoder
from conftest import ROOT, SCRAPY, libraries_imported, two_page_database

MODEL_LIBRARIES = ("torch", "sentence_transformers", "transformers", "onnxruntime", "onnx", "tokenizers")
TEXTS = [
    "Kettles",  # one token or so: padded to the longest of its batch
    "Pour-over coffee, step by step: rinse the filter, bloom the grounds for thirty seconds, then pour slowly. " * 3,
    "A much longer text than the model reads, so that the tokenizer truncates it at 256 tokens. " * 40,
    "Espresso needs finely ground beans, nine bars of pressure and twenty-five seconds.",
    "Tea is not coffee.",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache folder of the module's own, the default model exported into it once."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(embed.CACHE_ENV, str(folder))
        load_encoder(DEFAULT_MODEL, "cpu", "onnx")
        yield folder


def run(*command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_the_export_agrees_with_torch_in_any_batch(cache: Path) -> None:
    [folder] = (cache / "onnx").iterdir()
    assert {path.name for path in folder.iterdir()} == {"model.onnx", "model-int8.onnx", "tokenizer.json", "meta.json"}
    reference = load_encoder(DEFAULT_MODEL, "cpu", "torch").encode(TEXTS, 32)
    onnx = load_encoder(DEFAULT_MODEL, "cpu", "onnx")
    for batch_size in (1, 2, 32):  # sorted by length, padded per batch, put back in order
        vectors = onnx.encode(TEXTS, batch_size)
        assert vectors.dtype == np.float32 and vectors.shape == reference.shape
        assert np.abs(vectors - reference).max() < 1e-4
    int8 = load_encoder(DEFAULT_MODEL, "cpu", "onnx-int8").encode(TEXTS, 2)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1, atol=1e-5)
    assert (int8 * reference).sum(axis=1).min() > 0.8  # close to, not equal to, the fp32 vectors
    assert np.abs(int8 - reference).max() > 1e-3


def test_an_exported_model_runs_without_torch_and_is_not_exported_again(cache: Path) -> None:
    probe = ("import sys\nfrom analysis.embed import load_encoder\n"
             "vectors = load_encoder('all-MiniLM-L6-v2', 'auto', sys.argv[1]).encode(['a kettle', 'coffee beans'], 32)\n"
             "print(vectors.shape, sorted({name.split('.')[0] for name in sys.modules} & {'torch', 'sentence_transformers', 'transformers'}))")
    for backend in ("onnx", "onnx-int8"):
        done = run(sys.executable, "-c", probe, backend, env={embed.CACHE_ENV: str(cache)})
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split("\n")[0] == "(2, 384) []"
        assert "exporting" not in done.stderr


def test_the_vector_cache_is_kept_apart_per_backend(cache: Path, tmp_path: Path) -> None:
    db = sqlite_utils.Database(tmp_path / "vectors.db")
    urls, hashes = [f"http://127.0.0.1:1/{n}" for n in range(len(TEXTS))], [str(n) for n in range(len(TEXTS))]
    embedded = [embed_pages(db, urls, TEXTS, hashes, DEFAULT_MODEL, "cpu", progress=False, backend=backend)
                for backend in ("torch", "onnx-int8", "onnx", "onnx-int8", "torch")]
    assert [(done.computed, done.encoder) for done in embedded] == [
        (5, "torch on cpu"), (5, "onnx-int8 on cpu"), (5, "onnx on cpu"), (0, None), (0, None)]  # None: no model loaded
    keys = {row[0] for row in db.execute("SELECT DISTINCT model FROM embeddings")}
    assert keys == {f"{DEFAULT_MODEL}#{embed.RECIPE}", f"{DEFAULT_MODEL}#{embed.RECIPE}#onnx",
                    f"{DEFAULT_MODEL}#{embed.RECIPE}#onnx-int8"}  # torch keeps the key caches already hold


def test_device_cuda_without_cuda_is_one_clear_error(tmp_path: Path) -> None:
    import onnxruntime
    import torch

    if torch.cuda.is_available() or "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ModelError, match="--device cuda: torch .* sees no CUDA device"):
        load_encoder(DEFAULT_MODEL, "cuda", "torch")
    with pytest.raises(ModelError, match="--device cuda: onnxruntime .* has no CUDA provider"):
        load_encoder(DEFAULT_MODEL, "cuda", "onnx-int8")
    two_page_database(tmp_path / "two.db")
    for backend, library in (("torch", "torch"), ("onnx", "onnxruntime"), ("auto", "torch")):  # auto: torch on cuda
        done = run(*SCRAPY, "analyze", str(tmp_path / "two.db"), "--device", "cuda", "--backend", backend,
                   env={embed.CACHE_ENV: str(tmp_path / "cache")})
        assert done.returncode == 1
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(f"error: --device cuda: {library} ") and "use --device cpu or auto" in line
    assert not (tmp_path / "cache").exists()  # said before any export


def test_the_auto_backend_is_torch_on_a_gpu_and_int8_elsewhere() -> None:
    on_auto = "torch" if gpu_likely() else "onnx-int8"
    assert [choose_backend("auto", device) for device in ("cuda", "auto", "cpu")] == ["torch", on_auto, "onnx-int8"]
    assert choose_backend("onnx", "cuda") == "onnx"  # a backend named is kept


def test_whether_a_gpu_is_likely_is_told_without_importing_torch() -> None:
    """`--device auto` looks for a GPU before the backend is chosen, so on a CPU machine the default int8 backend still
    starts without torch; a CPU build of torch (this project's pin) never counts as one."""
    done = run(sys.executable, "-c", "import sys; from analysis.embed import gpu_likely; likely = gpu_likely(); "
                                     "print(likely, 'torch' in sys.modules)")
    likely, imported = done.stdout.split()
    assert imported == "False"
    if importlib.metadata.version("torch").endswith("+cpu"):
        assert likely == "False"


def test_an_unknown_backend_is_an_argument_error() -> None:
    done = run(sys.executable, "-m", "analysis", "some.db", "--backend", "tensorflow")
    assert done.returncode == 2 and "invalid choice: 'tensorflow'" in done.stderr


def model_libraries_imported(*args: str) -> tuple[int, list[str]]:
    """The exit status of `scrapy args` and the model libraries it imported."""
    done, libraries = libraries_imported("scrapy.cmdline", *args)
    return done.returncode, sorted(libraries & set(MODEL_LIBRARIES))


@pytest.mark.parametrize("args", [["--help"], ["analyze", "--help"], ["crawl", "--help"], ["crawl", "site"]],
                         ids=["scrapy --help", "analyze --help", "crawl --help", "crawl site (no url)"])
def test_help_imports_no_model_library(args: list[str]) -> None:
    returncode, imported = model_libraries_imported(*args)
    assert returncode in (0, 2) and imported == []


def test_a_whole_crawl_imports_no_model_library(demo_url: str, tmp_path: Path) -> None:
    returncode, imported = model_libraries_imported("crawl", "site", "-a", f"url={demo_url}", "-a", f"db={tmp_path / 'demo.db'}",
                                                    "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=WARNING")
    assert returncode == 0 and imported == []
    assert sqlite_utils.Database(tmp_path / "demo.db").execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0] > 40
