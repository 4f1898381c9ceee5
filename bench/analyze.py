"""Analysis benchmark: embedding throughput, the stages after embedding at scale, and a whole 1,000-page run.

    .venv/bin/python bench/analyze.py embed [--texts 256] [--batch-size 32] [--repeats 3]
    .venv/bin/python bench/analyze.py scale [--sizes 1000 10000 100000] [--source-share F --share-from PAGES]
    .venv/bin/python bench/analyze.py real DB [DB ...]
    .venv/bin/python bench/analyze.py site [--pages 1000] [--repeats 3] [--out DIR]

`embed`: the import time of torch and sentence-transformers (each in a fresh interpreter), the load
time of the default model (analysis.embed.load_model), and pages/s of model.encode on --texts page
texts made as analysis.embed.page_text makes them (title + the first 2,000 characters), from the
demo site's post prose (demo/content/posts/*.html, tags stripped), paragraphs shuffled per copy.

`scale`: for each size, in its own subprocess (`stages`, below), a synthetic corpus of clustered
unit vectors and matching page texts (SyntheticSite), then analysis.pipeline.propose itself
(default Options) with its embed step answered by those vectors and each later call timed
(nearest_within, Keywords, Keywords.nearest and Keywords.mentions where propose calls them,
find_candidates, rank with an AnchorFinder), each with its own peak RSS (resource.getrusage, the
high-water mark reset before each stage). With --source-share F, find_candidates and rank run for
the first F of the pages as sources only (pages are in random order) and are also shown scaled to
all; the pairs and TF-IDF non-zeros find_candidates would gather for every source are counted
either way. That applies to sizes of --share-from pages and more. Above
analysis.index.EXACT_LIMIT pages it also measures the recall of the IVF neighbours against exact
search (faiss.IndexFlatIP) on 1,000 sampled pages. The parent kills a child whose RSS passes
--memory-cap-gb or that runs past --timeout-s, and reports the stage it was in.

`stages`: one size of `scale`, in this process; prints one JSON line per event on stdout.

`real`: the same stages and figures on real crawl databases (copies): their own texts and links,
vectors from the default model (loaded in the process, so in its RSS); to check that the synthetic
corpus costs per page what real sites cost.

`site`: a --pages synthetic site from bench/crawl.py's generator, served on 127.0.0.1 with
linkspider.localserver.serve, crawled with the real `scrapy crawl site`; then, in one process with
the default backend's encoder loaded once (its load time reported apart, and `run` given the same
one), --repeats rounds of (a) its encode of the analysis's own page texts and (b)
analysis.pipeline.run on a fresh copy of the crawl database (its embedding cache dropped, so it
embeds every page), alternating which goes first, then (c) run again
on that copy, every vector now cached: the work besides encoding, alone. On a shared machine the
two encodings of (a) and (b) vary more than the rest costs, so 1 + (c) / (a) is the steadier ratio.

The issue's targets: 100k pages through the stages after embedding in under 30 s and 2 GB; on a
1,000-page site the whole analysis under 1.1 x pure encoding. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import inspect
import json
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402 (after the path is set, like every bench script)

POSTS_DIR = REPO / "demo" / "content" / "posts"
DIM = 384  # all-MiniLM-L6-v2
RECALL_QUERIES = 1000
# English function words by frequency (all in scikit-learn's stop list); the rest of that list follows in seeded order.
FREQUENT_STOP_WORDS = """the of and to a in is it that for on with as was be by this are or from at an not but we have
can which you they all has will their more one there if so when about what would been some these out its into than then
only also other up our how most may after each many should could very""".split()
IMPORT_PROBE = """
import json, time
start = time.perf_counter()
import torch
middle = time.perf_counter()
import sentence_transformers
end = time.perf_counter()
print(json.dumps({"torch_s": middle - start, "sentence_transformers_s": end - middle, "total_s": end - start}))
"""


# ---------------------------------------------------------------------------- measuring helpers


def peak_rss_mb() -> float:
    """This process's peak resident set size so far (getrusage; kB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def cpu_seconds() -> float:
    """CPU time of this process so far, user + system, all threads: steadier than wall time on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rss_mb(pid: int | str = "self") -> float | None:
    """Current resident set size of a process (Linux /proc), None where unavailable or gone."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, IndexError, ValueError):
        return None


def print_json(result: Any, path: Path | None) -> None:
    """A bench script's result on stdout, and in path too when --json gave one."""
    text = json.dumps(result, indent=1)
    print(text)
    if path:
        path.write_text(text + "\n")


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout: how a `stages` child reports to `scale`."""
    print(json.dumps({"event": event, **fields}), flush=True)


class Peaks:
    """Peak RSS per stage and for the process, with resource.getrusage.

    Linux lets a process reset its RSS high-water mark (write 5 to /proc/self/clear_refs), which is what
    getrusage's ru_maxrss reports: reset before a stage, read after it, and a stage's own peak shows even
    when an earlier stage peaked higher. The process peak is the largest value read at any point.
    """

    def __init__(self) -> None:
        self.process = peak_rss_mb()
        self.resettable = os.path.exists("/proc/self/clear_refs")

    def reset(self) -> None:
        self.read()
        if self.resettable:
            try:
                with open("/proc/self/clear_refs", "w") as handle:
                    handle.write("5")
            except OSError:
                self.resettable = False

    def read(self) -> float:
        peak = peak_rss_mb()
        self.process = max(self.process, peak)
        return peak

    def restart(self) -> None:
        """Forget the process peak so far: from here on, the largest value read."""
        self.reset()
        self.process = peak_rss_mb() if self.resettable else 0.0


PEAKS = Peaks()


@contextmanager
def stage(report: dict[str, dict[str, float]], name: str) -> Iterator[None]:
    """Time a stage (wall and CPU) and record the RSS before it, its own peak RSS and the RSS after it."""
    emit("start", stage=name, rss_mb=rss_mb())
    PEAKS.reset()
    before = rss_mb()
    cpu = cpu_seconds()
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    report[name] = {"seconds": round(seconds, 3), "cpu_s": round(cpu_seconds() - cpu, 3), "rss_before_mb": round(before or 0, 1),
                    "peak_rss_mb": round(PEAKS.read(), 1), "rss_after_mb": round(rss_mb() or 0, 1)}
    emit("done", stage=name, **report[name])


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = "unknown"
    try:
        model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory_kb = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0) \
        if os.path.exists("/proc/meminfo") else 0
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_gib": round(memory_kb / 1024 ** 2, 1),
            "python": sys.version.split()[0], "load_average": [round(x, 2) for x in os.getloadavg()],
            "date_utc": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "code": code_state()}


def code_state() -> dict[str, Any]:
    """The commit, whether analysis/ differs from it, and a digest of analysis/*.py as measured."""
    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        except FileNotFoundError:  # a machine without git (the device tool's GPU machine)
            return ""
        return done.stdout.strip()

    digest = hashlib.sha1(b"".join(path.read_bytes() for path in sorted((REPO / "analysis").glob("*.py"))))
    return {"commit": git("rev-parse", "--short", "HEAD"), "analysis_modified": bool(git("status", "--porcelain", "analysis")),
            "analysis_sha1": digest.hexdigest()[:12]}


# ---------------------------------------------------------------------------- 1. embedding throughput


def demo_posts() -> list[tuple[str, list[str]]]:
    """(title, paragraphs) of every demo post: front matter title, body with tags stripped, one block a line."""
    posts = []
    for path in sorted(POSTS_DIR.glob("*.html")):
        source = path.read_text(encoding="utf-8")
        title = re.search(r"^title:\s*(.+)$", source, re.M).group(1).strip()
        body = source.split("---", 2)[2]
        blocks = re.split(r"</(?:p|li|h[1-6]|blockquote|pre)>", body)
        paragraphs = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", block)).split()) for block in blocks]
        posts.append((title, [p for p in paragraphs if p]))
    return posts


def demo_page_texts(count: int, seed: int) -> list[str]:
    """count page texts as analysis.embed.page_text makes them, from the demo posts: copies with shuffled paragraphs."""
    from analysis.embed import page_text

    rng = random.Random(seed)
    posts = demo_posts()
    order = list(range(len(posts)))
    rng.shuffle(order)
    texts = []
    for number in range(count):
        title, paragraphs = posts[order[number % len(posts)]]
        if number >= len(posts):  # a copy: same words, another order, so no two texts are equal
            paragraphs = rng.sample(paragraphs, len(paragraphs))
        texts.append(page_text(title, "\n".join(paragraphs)))
    return texts


def import_times(runs: int) -> list[dict[str, float]]:
    """Seconds to import torch, then sentence_transformers, each run in a fresh interpreter."""
    times = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True, cwd=REPO)
        times.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return times


def bench_embed(args: argparse.Namespace) -> dict[str, Any]:
    before = machine()
    imports = import_times(args.import_runs)
    start = time.perf_counter()
    import sentence_transformers  # noqa: F401 (timed: this process's own import, beside the fresh ones above)
    import torch

    in_process_import = time.perf_counter() - start
    from analysis.embed import DEFAULT_MODEL, load_model

    start = time.perf_counter()
    model = load_model(DEFAULT_MODEL, args.device)
    load_s = time.perf_counter() - start
    texts = demo_page_texts(args.texts, args.seed)
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()  # counting tokens past the model's limit is the point here
    tokens = [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True)["input_ids"]]
    runs, cpu = [], []
    for _ in range(args.repeats):
        start, cpu_start = time.perf_counter(), cpu_seconds()
        vectors = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                               show_progress_bar=False, convert_to_numpy=True)
        runs.append(time.perf_counter() - start)
        cpu.append(cpu_seconds() - cpu_start)
    assert vectors.shape == (len(texts), DIM)
    return {
        "machine": before, "device": str(model.device), "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__, "sentence_transformers": sentence_transformers.__version__,
        "imports_fresh": [{key: round(value, 3) for key, value in run.items()} for run in imports],
        "import_in_process_s": round(in_process_import, 3), "model_load_s": round(load_s, 3),
        "texts": len(texts), "batch_size": args.batch_size, "max_seq_length": model.max_seq_length,
        "mean_chars": round(statistics.mean(len(t) for t in texts)), "mean_tokens": round(statistics.mean(tokens)),
        "truncated_share": round(sum(t > model.max_seq_length for t in tokens) / len(tokens), 3),
        "encode_s": [round(s, 3) for s in runs], "pages_per_s": [round(len(texts) / s, 1) for s in runs],
        "encode_cpu_s": [round(s, 3) for s in cpu], "cpu_ms_per_page": [round(1000 * s / len(texts), 1) for s in cpu],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def print_embed(result: dict[str, Any]) -> None:
    fresh = result["imports_fresh"]
    rows = [
        ("import torch (fresh interpreter)", ", ".join(f"{run['torch_s']:.2f}" for run in fresh) + " s"),
        ("import sentence_transformers after it", ", ".join(f"{run['sentence_transformers_s']:.2f}" for run in fresh) + " s"),
        ("both, in this process", f"{result['import_in_process_s']:.2f} s"),
        ("load_model('all-MiniLM-L6-v2')", f"{result['model_load_s']:.2f} s (device {result['device']}, "
                                           f"{result['torch_threads']} torch threads)"),
        ("texts", f"{result['texts']}: {result['mean_chars']} chars, {result['mean_tokens']} tokens on average, "
                  f"{result['truncated_share']:.0%} cut at {result['max_seq_length']} tokens"),
        ("encode, batch " + str(result["batch_size"]), ", ".join(f"{s:.2f}" for s in result["encode_s"]) + " s"),
        ("pages/s", ", ".join(f"{rate:.1f}" for rate in result["pages_per_s"])),
        ("CPU per page (user+system, all threads)", ", ".join(f"{ms:.0f}" for ms in result["cpu_ms_per_page"]) + " ms"),
        ("load average before, after", f"{result['machine']['load_average']}, {result['load_average_after']}"),
    ]
    print_rows(rows)


# ---------------------------------------------------------------------------- 2. synthetic corpus at scale


@dataclass
class Vocabulary:
    """Seeded pseudo-words: stop words (real English ones, which terms() drops), general words, topic words."""

    stop: np.ndarray
    general: np.ndarray
    topic: np.ndarray


def pseudo_words(rng: np.random.Generator, count: int, exclude: set[str]) -> list[str]:
    """count distinct pronounceable lower-case words of 2-3 syllables, none of them in exclude."""
    onsets = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st tr sh ch th".split()
    vowels = "a e i o u a e i o u ai ea ou io".split()
    codas = ["", "", "", "n", "r", "l", "s", "t", "m", "x", "nd", "rt"]
    words: list[str] = []
    seen = set(exclude)
    while len(words) < count:
        syllables = rng.choice([1, 2, 2, 2, 3])  # 6-7 letters on average, as English content words
        word = "".join(onsets[rng.integers(len(onsets))] + vowels[rng.integers(len(vowels))] + codas[rng.integers(len(codas))]
                       for _ in range(syllables))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def zipf_cdf(size: int, exponent: float, offset: float = 2.7) -> np.ndarray:
    """Cumulative Zipf-Mandelbrot probabilities over ranks 0..size-1 (search it with uniform draws)."""
    weights = 1.0 / (np.arange(size) + offset) ** exponent
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


class SyntheticSite:
    """A corpus of clustered pages: unit vectors and texts that agree on which pages are about what.

    Pages fall into topic clusters (pages // 100, between 100 and 1,000, of log-normal sizes), and
    clusters into super-topics (a tenth as many). Vectors: page = normalise(centre + noise), centre =
    normalise(super-topic + own direction), tuned to what all-MiniLM-L6-v2 gives real posts (the demo
    site: mean pair cosine 0.40 within one subject, nearest neighbour 0.66, unrelated texts 0.0-0.13).
    Texts: 300-600 words in sentences of 8-24 words: 45% English stop words (Zipf), 40% general words
    (30,000 pseudo-words, Zipf), 8% super-topic words, 7% cluster topic words, plus each title word
    1-3 times. Titles: 3-8 words, mostly topic words, a quarter general words, a stop word now and then.
    """

    GENERAL_WORDS = 30_000
    TOPIC_POOL = 20_000
    SUPER_WORDS = 150
    CLUSTER_WORDS = 40
    SHARES = (0.45, 0.40, 0.08, 0.07)  # stop, general, super-topic, cluster topic

    def __init__(self, pages: int, seed: int) -> None:
        from analysis.stop_words import ENGLISH_STOP_WORDS

        self.pages = pages
        self.rng = np.random.default_rng(seed)
        rng = self.rng
        rest = sorted(ENGLISH_STOP_WORDS - set(FREQUENT_STOP_WORDS))
        rng.shuffle(rest)
        stop = FREQUENT_STOP_WORDS + rest  # Zipf ranks: "the" most often, "whither" rarely
        words = pseudo_words(rng, self.GENERAL_WORDS + self.TOPIC_POOL, set(ENGLISH_STOP_WORDS))
        self.vocabulary = Vocabulary(np.array(stop), np.array(words[:self.GENERAL_WORDS]), np.array(words[self.GENERAL_WORDS:]))
        self.clusters = min(1000, max(100, pages // 100))
        self.supers = max(10, self.clusters // 10)
        sizes = rng.lognormal(0.0, 0.7, self.clusters)
        self.cluster_of = rng.choice(self.clusters, size=pages, p=sizes / sizes.sum())
        self.super_of = rng.integers(0, self.supers, self.clusters)
        self.super_words = np.array([rng.choice(self.TOPIC_POOL, self.SUPER_WORDS, replace=False) for _ in range(self.supers)])
        self.cluster_words = np.array([rng.choice(self.TOPIC_POOL, self.CLUSTER_WORDS, replace=False) for _ in range(self.clusters)])
        self.cdf_stop = zipf_cdf(len(stop), 1.0)
        self.cdf_general = zipf_cdf(self.GENERAL_WORDS, 1.0)
        self.cdf_super = zipf_cdf(self.SUPER_WORDS, 0.8)
        self.cdf_cluster = zipf_cdf(self.CLUSTER_WORDS, 0.8)

    def vectors(self) -> np.ndarray:
        """(pages, 384) float32 unit vectors, clustered (see the class docstring)."""
        rng = self.rng
        unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
        common = unit(rng.standard_normal((1, DIM)))  # the direction every text shares a little of
        supers = unit(rng.standard_normal((self.supers, DIM)))
        centres = unit(0.35 * common + 0.9 * supers[self.super_of] + unit(rng.standard_normal((self.clusters, DIM))))
        noise = rng.uniform(0.75, 1.15, (self.pages, 1)) * unit(rng.standard_normal((self.pages, DIM)))
        return unit(centres[self.cluster_of] + noise).astype(np.float32)

    def _draw(self, cdf: np.ndarray, count: int) -> np.ndarray:
        return np.searchsorted(cdf, self.rng.random(count), side="right").clip(0, len(cdf) - 1)

    def title(self, page: int) -> tuple[str, list[str]]:
        """The page's title (3-8 words, now and then a stop word between two others) and its content words."""
        rng, vocabulary = self.rng, self.vocabulary
        cluster = self.cluster_of[page]
        shown, words = [], []
        length = int(rng.integers(3, 9))
        for position in range(length):
            kind = rng.random()
            if 0 < position < length - 1 and kind < 0.2:
                shown.append(str(rng.choice(["and", "of", "the", "for", "with", "in", "to", "on"])))
                continue
            if kind < 0.55:
                word = vocabulary.topic[self.cluster_words[cluster][self._draw(self.cdf_cluster, 1)[0]]]
            elif kind < 0.75:
                word = vocabulary.topic[self.super_words[self.super_of[cluster]][self._draw(self.cdf_super, 1)[0]]]
            else:
                word = vocabulary.general[self._draw(self.cdf_general, 1)[0]]
            words.append(str(word))
            shown.append(str(word).capitalize())
        return " ".join(shown), words

    def text(self, page: int, title_words: list[str]) -> tuple[str, list[int]]:
        """The page's main text and the character offset of each sentence."""
        rng, vocabulary = self.rng, self.vocabulary
        cluster = self.cluster_of[page]
        length = int(rng.integers(300, 601))
        counts = rng.multinomial(length, self.SHARES)
        tokens = np.concatenate([
            vocabulary.stop[self._draw(self.cdf_stop, counts[0])],
            vocabulary.general[self._draw(self.cdf_general, counts[1])],
            vocabulary.topic[self.super_words[self.super_of[cluster]][self._draw(self.cdf_super, counts[2])]],
            vocabulary.topic[self.cluster_words[cluster][self._draw(self.cdf_cluster, counts[3])]],
        ])
        rng.shuffle(tokens)
        words = tokens.tolist()
        for word in title_words:  # a page says what its title says
            for position in rng.integers(0, length, rng.integers(1, 4)):
                words[position] = word
        sentences, offsets, offset, start = [], [], 0, 0
        while start < length:
            end = min(length, start + int(rng.integers(8, 25)))
            chunk = words[start:end]
            if len(chunk) > 6 and rng.random() < 0.3:
                chunk[int(rng.integers(2, len(chunk) - 3))] += ","
            sentence = " ".join(chunk)
            sentence = sentence[0].upper() + sentence[1:] + "."
            offsets.append(offset)
            offset += len(sentence) + 1
            sentences.append(sentence)
            start = end
        paragraphs, position = [], 0  # 3-7 sentences a paragraph, one paragraph a line (as trafilatura writes)
        while position < len(sentences):
            size = int(rng.integers(3, 8))
            paragraphs.append(" ".join(sentences[position:position + size]))
            position += size
        return "\n".join(paragraphs), offsets

    def corpus(self) -> Any:
        """An analysis.load.Corpus as load_corpus would build it from a crawl of this site.

        Every page links from its text to 3-8 others (80% in its own cluster), an anchor of 2-4 words at
        the start of a sentence; every page's sidebar links to the ten newest pages (template links).
        """
        from analysis.load import Corpus, InboundAnchors, Spans, among, distinct, pair_codes
        from analysis.texts import PageTexts

        rng = self.rng
        members: dict[int, list[int]] = {}
        for page, cluster in enumerate(self.cluster_of.tolist()):
            members.setdefault(cluster, []).append(page)
        titles, texts = [], PageTexts()  # on disk as the command's load_corpus keeps them
        content_codes, spans = array("q"), array("q")  # source * pages + target; page, start, end: as load_corpus keeps them
        inbound_anchors = InboundAnchors()
        for page in range(self.pages):
            title, title_words = self.title(page)
            text, offsets = self.text(page, title_words)
            titles.append(title)
            texts.append(text)
            own = members[int(self.cluster_of[page])]
            links, linked = [], set()
            for sentence in rng.choice(len(offsets), min(len(offsets), int(rng.integers(3, 9))), replace=False):
                target = int(rng.choice(own)) if rng.random() < 0.8 else int(rng.integers(self.pages))
                if target == page or target in linked:
                    continue
                start = offsets[sentence]
                anchor = " ".join(text[start:start + 80].split()[:int(rng.integers(2, 5))]).rstrip(",.")
                linked.add(target)
                content_codes.append(page * self.pages + target)
                links.append((start, start + len(anchor)))
                inbound_anchors.append(target, anchor)
            for start, end in sorted(links):
                spans.extend((page, start, end))
        content = distinct(np.frombuffer(content_codes, dtype=np.int64))
        newest = list(range(min(10, self.pages)))  # pages are numbered newest first
        template_codes = pair_codes([(page, target) for page in range(self.pages) for target in newest if target != page], self.pages)
        template_codes = template_codes[~among(template_codes, content)]  # as load_corpus keeps them
        inbound = np.bincount(content % self.pages, minlength=self.pages).tolist()
        day = np.datetime64("2024-06-01") - (np.arange(self.pages) * 3650 // max(self.pages, 1)).astype("timedelta64[D]")
        return Corpus(
            urls=[f"https://synthetic.example/posts/{page:06d}/" for page in range(self.pages)],
            titles=titles, texts=texts, hashes=[f"{page:040x}" for page in range(self.pages)],
            depths=rng.integers(1, 6, self.pages).tolist(), published=[str(d) for d in day], inbound=inbound,
            content_codes=content, template_codes=template_codes, inbound_anchors=inbound_anchors,
            link_spans=Spans.of(self.pages, *np.frombuffer(spans, dtype=np.int64).reshape(-1, 3).T),
        )


def neighbour_profile(vectors: np.ndarray, by_meaning: tuple[np.ndarray, np.ndarray], rng: np.random.Generator) -> dict[str, float]:
    """How similar the neighbours are: mean cosine of the 1st, 10th and 30th neighbour, and of random pairs."""
    similarities = by_meaning[0][:, 1:]  # column 0 is the page itself
    a, b = rng.integers(0, len(vectors), (2, 20_000))
    return {
        "first": round(float(similarities[:, 0].mean()), 3),
        "tenth": round(float(similarities[:, min(9, similarities.shape[1] - 1)].mean()), 3),
        "last": round(float(similarities[:, -1].mean()), 3),
        "random_pairs": round(float(np.einsum("ij,ij->i", vectors[a], vectors[b]).mean()), 3),
    }


def corpus_profile(corpus: Any, instrumented: InstrumentedPropose) -> dict[str, float]:
    """Per-page figures that drive the cost of the stages: to compare a synthetic corpus with a real one.

    sum_df_squared is the sum over terms of (share of pages holding it) squared: Keywords.nearest's
    sparse products do about that times pages squared multiply-adds. Candidates are counted before
    rank's shortlist; rank's RSS growth per source is mostly AnchorFinder's token cache.
    """
    seen, report = instrumented.seen, instrumented.report
    pages = len(corpus)
    share = seen["matrix"]["pages_a_term"] / pages
    candidates, sources = seen["candidates"], seen["sources"]
    rank = report["rank + AnchorFinder"]
    return {
        "mean_words": round(float(np.mean([len(text.split()) for text in corpus.texts])), 1),
        "mean_chars": round(float(np.mean([len(text) for text in corpus.texts]))),
        "title_words": round(float(np.mean([len(title.split()) for title in corpus.titles])), 2),
        "tfidf_terms_per_page": round(seen["matrix"]["nonzeros"] / pages, 1),
        "terms_on_over_30pct": int((share > 0.3).sum()), "terms_on_5_to_30pct": int(((share > 0.05) & (share <= 0.3)).sum()),
        "sum_df_squared": round(float((share ** 2).sum()), 1),
        "mentions_per_page": round(seen["mentions"] / pages, 2),
        "candidates_per_source": round(candidates / sources, 2),
        "rank_cpu_ms_per_candidate": round(1000 * rank["cpu_s"] / max(candidates, 1), 3),
        "rank_rss_growth_kb_per_source": round(1024 * (rank["rss_after_mb"] - rank["rss_before_mb"]) / sources, 1),
    }


def approximate_recall(vectors: np.ndarray, indices: np.ndarray, queries: int, seed: int) -> dict[str, float]:
    """Recall of the pipeline's neighbours against exact inner-product search, on a sample of pages.

    Both lists are the k' = neighbours + 1 nearest (the page itself included), as nearest() returns them.
    """
    import faiss

    rng = np.random.default_rng(seed)
    sample = rng.choice(len(vectors), min(queries, len(vectors)), replace=False)
    k = indices.shape[1]
    exact = faiss.IndexFlatIP(vectors.shape[1])
    exact.add(np.ascontiguousarray(vectors))
    start = time.perf_counter()
    _, truth = exact.search(np.ascontiguousarray(vectors[sample]), k)
    seconds = time.perf_counter() - start
    found = [len(set(indices[page].tolist()) & set(row.tolist())) / k for page, row in zip(sample, truth)]
    top10 = [len(set(indices[page, :10].tolist()) & set(row[:10].tolist())) / 10 for page, row in zip(sample, truth)]
    return {"queries": len(sample), "k": k, "recall_at_k": round(float(np.mean(found)), 4),
            "recall_at_10": round(float(np.mean(top10)), 4), "min_recall_at_k": round(float(np.min(found)), 4),
            "exact_search_s": round(seconds, 2)}


def queue_digest(queue: Any) -> str:
    """A digest of every suggestion's fields in queue order (pages as numbers, anchors, sentences, scores): two codes
    that give one site the same digest gave it the same queue."""
    digest = hashlib.sha1()
    for record in queue.records():
        digest.update(repr(record).encode())
    return digest.hexdigest()[:12]


def pair_nonzeros(row_nonzeros: np.ndarray, neighbour_lists: list[np.ndarray], mentions: np.ndarray) -> dict[str, int]:
    """The pairs find_candidates scores for every source, and the TF-IDF non-zeros it gathers for them (row_nonzeros:
    of each page's row of the matrix).

    Keywords.similarity forms matrix[sources] and matrix[targets], one sparse row per pair each (and
    find_candidates vectors[sources] and vectors[targets], one 384-d row per pair each): their size is
    what find_candidates needs in memory. Counted with numpy, not a set of tuples, to stay small.
    """
    from analysis.load import distinct

    pages = len(row_nonzeros)
    codes = [mentions]  # pair codes already
    for indices in neighbour_lists:
        rows = np.arange(len(indices))[:, None]
        codes.append((rows * pages + indices)[(indices >= 0) & (indices != rows)])
    pairs = distinct(np.concatenate(codes))
    return {"pairs": len(pairs), "nonzeros": int(row_nonzeros[pairs // pages].sum() + row_nonzeros[pairs % pages].sum())}


class InstrumentedPropose:
    """analysis.pipeline.propose as it is, with its embed step answered from given vectors and each later call timed.

    The names propose looks up in analysis.pipeline (embed_pages, nearest_within, Keywords, find_candidates,
    rank) are swapped for wrappers around the real functions for the duration of `run`, and rank's serial part, the
    queue's fill (analysis.score.Ranked.fill), is timed inside it, so this
    benchmark follows whatever propose does now: same calls, same order, same arguments. With
    source_share < 1, find_candidates receives the neighbour rows and mentions of the first share
    of the pages only (pages are in random order), and rank gets the candidates of those sources.
    """

    def __init__(self, vectors: Callable[[], np.ndarray], source_share: float) -> None:
        self.vectors = vectors  # called when propose embeds: the vectors then belong to propose alone, as in a real run
        self.source_share = source_share
        self.report: dict[str, dict[str, float]] = {}
        self.seen: dict[str, Any] = {}  # what the stages returned, for the figures around them: counts, or arrays that
        # propose frees before rank (the neighbours by meaning) on disk until it returns, so that rank's peak is propose's own

    def run(self, corpus: Any) -> tuple[Any, dict[str, float], float]:
        """(Proposal, propose's own timings, seconds of the whole call) for a corpus, with default Options."""
        import sqlite_utils

        import analysis.pipeline as pipeline
        from analysis.embed import Embeddings

        report, seen = self.report, self.seen  # seen: what find_candidates got, and more
        spilled = tempfile.TemporaryDirectory(prefix="linkspider-neighbours-")
        real = {name: getattr(pipeline, name) for name in ("embed_pages", "nearest_within", "Keywords", "find_candidates", "rank")}

        def timed(name: str, function: Callable[..., Any], key: str | None = None) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                with stage(report, name):
                    value = function(*args, **kwargs)
                if key:
                    seen[key] = value
                return value
            return wrapper

        class TimedKeywords(real["Keywords"]):  # type: ignore[misc, valid-type]
            def __init__(self, texts: list[str], titles: list[str] | None = None) -> None:
                with stage(report, "Keywords (TF-IDF fit)"):
                    super().__init__(texts, titles)
                seen["keywords"] = self

            def nearest(self, k: int) -> tuple[np.ndarray, np.ndarray]:
                with stage(report, "Keywords.nearest"):
                    seen["by_words"] = super().nearest(k)
                return seen["by_words"]

            def mentions(self, titles: list[str], *args: Any, **kwargs: Any) -> np.ndarray:
                with stage(report, "Keywords.mentions"):
                    return super().mentions(titles, *args, **kwargs)

            def drop_matrix(self) -> None:  # what the figures read of the matrix, taken before propose frees it
                seen["matrix"] = {"nonzeros": int(self.matrix.nnz), "row_nonzeros": np.diff(self.matrix.indptr),
                                  "pages_a_term": self.document_frequency}
                super().drop_matrix()

        def nearest(*args: Any, **kwargs: Any) -> Any:
            similarities, indices = timed("nearest (FAISS)", real["nearest_within"])(*args, **kwargs)
            np.save(Path(spilled.name) / "similarities.npy", similarities)
            np.save(Path(spilled.name) / "indices.npy", indices)
            return similarities, indices

        def candidates(*args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(real["find_candidates"]).bind(*args, **kwargs)
            np.save(Path(spilled.name) / "by_words.npy", bound.arguments["by_words"][1])  # every source's, for the figures
            np.save(Path(spilled.name) / "mentions.npy", bound.arguments["mentions"])  # pair_nonzeros, after propose
            seen["mentions"] = len(bound.arguments["mentions"])
            if self.source_share < 1:
                sources = max(1, round(len(corpus) * self.source_share))
                for name in ("by_meaning", "by_words"):
                    similarities, indices = bound.arguments[name]
                    bound.arguments[name] = (similarities[:sources], indices[:sources])
                bound.arguments["mentions"] = bound.arguments["mentions"][bound.arguments["mentions"] // len(corpus) < sources]
            seen["sources"] = max(1, round(len(corpus) * self.source_share))
            found = timed("find_candidates", real["find_candidates"])(*bound.args, **bound.kwargs)
            seen["candidates"] = len(found[0])  # rank spends them
            return found

        def embed(db: Any, urls: list[str], *args: Any, **kwargs: Any) -> Any:
            return Embeddings(self.vectors(), 0)  # the vectors stand for what the model would give

        import analysis.score as score
        real_fill = score.Ranked.fill
        filling = seen.setdefault("queue fill", {"seconds": 0.0, "cpu_s": 0.0})

        def fill(ranked: Any, *args: Any, **kwargs: Any) -> Any:  # rank's serial part, timed inside it (no peak reset)
            cpu, start = cpu_seconds(), time.perf_counter()
            try:
                return real_fill(ranked, *args, **kwargs)
            finally:
                filling["seconds"] = round(filling["seconds"] + time.perf_counter() - start, 3)
                filling["cpu_s"] = round(filling["cpu_s"] + cpu_seconds() - cpu, 3)

        patches = {"embed_pages": embed, "nearest_within": nearest,
                   "Keywords": TimedKeywords, "find_candidates": candidates,
                   "rank": timed("rank + AnchorFinder", real["rank"], "queue")}
        db = sqlite_utils.Database(memory=True)
        db["meta"].create({"key": str, "value": str}, pk="key")  # a fresh site: no calibrated threshold
        timings: dict[str, float] = {}
        try:
            for name, replacement in patches.items():
                setattr(pipeline, name, replacement)
            score.Ranked.fill = fill
            start = time.perf_counter()
            proposal = pipeline.propose(db, corpus, pipeline.Options(progress=False), timings)
            seconds = time.perf_counter() - start
        finally:
            for name, function in real.items():
                setattr(pipeline, name, function)
            score.Ranked.fill = real_fill
        with spilled:
            seen["by_meaning"] = tuple(np.load(Path(spilled.name) / f"{name}.npy") for name in ("similarities", "indices"))
            by_words, mentions = (np.load(Path(spilled.name) / f"{name}.npy") for name in ("by_words", "mentions"))
        seen["matrix"]["gathered"] = pair_nonzeros(seen["matrix"].pop("row_nonzeros"), [seen["by_meaning"][1], by_words], mentions)
        return proposal, timings, seconds


def write_database(args: argparse.Namespace) -> None:
    """A crawl database of the synthetic site, its vectors in the embedding cache: `scrapy analyze` on it embeds
    nothing and runs every other stage as on a crawl (load from SQLite, export, impact, report). Each page's content
    links are its text's links (Corpus.link_spans, whose targets are paired with them in order), and every page's
    sidebar links to the ten newest pages."""
    from analysis.embed import DEFAULT_BACKEND, DEFAULT_MODEL, RECIPE, cache_key
    from linkspider.db import open_database, utc_now
    from linkspider.sentences import sentence_at

    if args.out.exists():
        raise SystemExit(f"{args.out} exists: give a path for a new database")
    site = SyntheticSite(args.pages, args.seed)
    vectors = site.vectors()
    corpus = site.corpus()
    urls, texts, now, pages = corpus.urls, corpus.texts, utc_now(), len(corpus)
    targets = np.split(corpus.content_codes % pages, np.searchsorted(corpus.content_codes // pages, np.arange(1, pages)))

    def links() -> Iterator[tuple]:
        for source, text in enumerate(texts):
            spans = corpus.link_spans.spans[corpus.link_spans.starts[source]:corpus.link_spans.starts[source + 1]].tolist()
            for position, (target, (start, end)) in enumerate(zip(targets[source].tolist(), spans)):
                context = text[slice(*sentence_at(text, start))]
                yield urls[source], urls[target], text[start:end], "content", context, start, position
            for position, target in enumerate(range(min(10, pages)), len(spans)):
                if target != source:
                    yield urls[source], urls[target], corpus.titles[target], "aside", None, None, position

    db = open_database(args.out)
    with db.atomic():
        db.conn.execute("INSERT INTO crawls (id, start_urls, started_at, finished_at, status, pages) VALUES (1, ?, ?, ?, 'finished', ?)",
                        [urls[0], now, now, pages])  # the start URLs, space-separated
        db.conn.executemany(
            "INSERT INTO pages (url, final_url, status, content_type, is_html, title, h1, main_text, headings, depth, published, "
            "word_count, content_hash, noindex, nofollow, in_sitemap, sitemap_only, gone, first_seen_crawl, last_seen_crawl, "
            "fetched_at) VALUES (?, ?, 200, 'text/html', 1, ?, ?, ?, '', ?, ?, ?, ?, 0, 0, 0, 0, 0, 1, 1, ?)",
            ((url, url, title, title, text, depth, published, len(text.split()), content_hash, now) for url, title, text, depth, published, content_hash
             in zip(urls, corpus.titles, texts, corpus.depths, corpus.published, corpus.hashes)))
        db.conn.executemany("INSERT INTO links (source, target, anchor, region, context, text_offset, position, nofollow, external) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0)", links())
        db["embeddings"].create({"url": str, "model": str, "content_hash": str, "vector": bytes}, pk=("url", "model"))
        key = cache_key(DEFAULT_MODEL, RECIPE, DEFAULT_BACKEND)
        db.conn.executemany("INSERT INTO embeddings (url, model, content_hash, vector) VALUES (?, ?, ?, ?)",
                            ((url, key, content_hash, vector.tobytes()) for url, content_hash, vector in zip(urls, corpus.hashes, vectors)))
    print(f"wrote {args.out}: {pages} pages, their links and cached vectors (`scrapy analyze {args.out}` embeds nothing)")


def run_stages(args: argparse.Namespace) -> None:
    """One size: build the corpus, run analysis.pipeline.propose on it without the model, report on stdout."""
    from analysis.index import EXACT_LIMIT
    from analysis.memory import return_freed_memory

    code = code_state()  # the analysis/ this process imported
    emit("imported", rss_mb=rss_mb(), peak_rss_mb=peak_rss_mb(), code=code)
    built: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="linkspider-stages-") as folder:
        kept = Path(folder) / "vectors.npy"  # on disk while propose runs, so that only propose holds them
        with stage(built, CORPUS_STAGE):
            site = SyntheticSite(args.pages, args.seed)
            np.save(kept, site.vectors())
            corpus = site.corpus()
        return_freed_memory()  # the generator's, as the command's load stage hands back its own
        PEAKS.restart()  # the process peak is propose's: making the corpus is no stage of the analysis
        instrumented = InstrumentedPropose(lambda: np.load(kept), args.source_share)
        proposal, timings, total = instrumented.run(corpus)
        PEAKS.read()
        peak, seen = PEAKS.process, instrumented.seen  # before the vectors are read back for the figures below
        vectors = np.load(kept)
    gathered = seen["matrix"]["gathered"]
    keywords, by_meaning = seen["keywords"], seen["by_meaning"]
    result: dict[str, Any] = {
        "pages": args.pages, "seed": args.seed, "code": code, "clusters": site.clusters, "super_topics": site.supers,
        "corpus": built[CORPUS_STAGE], "stages": instrumented.report, "rank_queue_fill": seen["queue fill"],
        "propose_timings": {k: round(v, 3) for k, v in timings.items()},
        "total_s": round(total, 2), "peak_rss_mb": round(peak, 1),
        "index": "flat (exact)" if args.pages <= EXACT_LIMIT else "IVF-Flat",
        "profile": corpus_profile(corpus, instrumented), "vocabulary": len(keywords.vocabulary), "tfidf_nonzeros": seen["matrix"]["nonzeros"],
        "content_links": len(corpus.content_codes), "template_links": len(corpus.template_codes),
        "mentions": seen["mentions"], "candidates": seen["candidates"], "cannibalised": len(proposal.cannibalised),
        "queue": len(proposal.queue), "queue_sha1": queue_digest(proposal.queue), "hubs": len(proposal.hubs),
        "threshold": proposal.threshold,
        "max_per_target": proposal.max_per_target, "sources": seen["sources"], "source_share": args.source_share,
        "pairs": gathered["pairs"], "pair_row_nonzeros": gathered["nonzeros"],
        "neighbour_similarity": neighbour_profile(vectors, by_meaning, np.random.default_rng(args.seed)),
    }
    if args.pages > EXACT_LIMIT or args.recall:
        result["recall"] = approximate_recall(vectors, by_meaning[1], RECALL_QUERIES, args.seed)
    emit("result", **result)


@dataclass
class ChildOutcome:
    events: list[dict[str, Any]]
    returncode: int
    killed: str | None  # why the parent stopped it
    wall_s: float
    max_rss_mb: float  # the parent's own samples of the child's RSS


def run_child(command: list[str], memory_cap_mb: float, timeout_s: float, echo: Callable[[str], None]) -> ChildOutcome:
    """Run a `stages` child, read its JSON lines, sample its RSS every 0.2 s, kill it past either cap."""
    events: list[dict[str, Any]] = []
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True, start_new_session=True)

    def read() -> None:
        for line in process.stdout:
            if line.startswith("{"):
                events.append(json.loads(line))
                echo(line.rstrip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    killed, max_rss = None, 0.0
    while process.poll() is None:
        current = rss_mb(process.pid) or 0.0
        max_rss = max(max_rss, current)
        if current > memory_cap_mb:
            killed = f"RSS {current:.0f} MB passed the cap of {memory_cap_mb:.0f} MB"
        elif time.perf_counter() - started > timeout_s:
            killed = f"still running after {timeout_s:.0f} s"
        if killed:
            os.killpg(process.pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    process.wait()
    reader.join(timeout=5)
    return ChildOutcome(events, process.returncode, killed, time.perf_counter() - started, max_rss)


def bench_scale(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    for pages in args.sizes:
        command = [sys.executable, str(Path(__file__).resolve()), "stages", "--pages", str(pages), "--seed", str(args.seed)]
        if pages >= args.share_from:
            command += ["--source-share", str(args.source_share)]
        print(f"== {pages} pages: {' '.join(command[1:])}", file=sys.stderr, flush=True)
        outcome = run_child(command, args.memory_cap_gb * 1024, args.timeout_s, lambda line: print(line, file=sys.stderr, flush=True))
        final = next((event for event in outcome.events if event["event"] == "result"), None)
        if final is None:  # stopped early: keep what was measured and where it stopped
            stages = {event["stage"]: {k: v for k, v in event.items() if k not in ("event", "stage")}
                      for event in outcome.events if event["event"] == "done"}
            running = [event["stage"] for event in outcome.events if event["event"] == "start" and event["stage"] not in stages]
            final = {"pages": pages, "corpus": stages.pop(CORPUS_STAGE, None), "stages": stages,
                     "stopped_in": running[-1] if running else None, "killed": outcome.killed, "returncode": outcome.returncode}
        final.update(wall_s=round(outcome.wall_s, 1), sampled_max_rss_mb=round(outcome.max_rss_mb, 1))
        results.append(final)
    return results


SAMPLED_STAGES = ("find_candidates", "rank + AnchorFinder")
CORPUS_STAGE = "synthetic corpus (not a pipeline stage)"


PROFILE_KEYS = ("mean_words", "mean_chars", "title_words", "tfidf_terms_per_page", "terms_on_over_30pct", "terms_on_5_to_30pct",
                "sum_df_squared", "mentions_per_page", "candidates_per_source", "rank_cpu_ms_per_candidate",
                "rank_rss_growth_kb_per_source")


def extrapolated_total(result: dict[str, Any]) -> float:
    """The stages after embedding with find_candidates and rank scaled linearly to every page as a source."""
    share = result.get("source_share", 1.0)
    return sum(figures["seconds"] / (share if name in SAMPLED_STAGES else 1.0) for name, figures in result["stages"].items())


def print_scale(results: list[dict[str, Any]]) -> None:
    names = list(dict.fromkeys(name for result in results for name in result["stages"]))
    header = ["stage"] + [result.get("label") or f"{result['pages']:,} pages" for result in results]
    lines = [header]
    for name in names:
        cells = [name]
        for result in results:
            figures = result["stages"].get(name)
            if figures:
                sampled = " (sampled)" if name in SAMPLED_STAGES and result.get("source_share", 1) < 1 else ""
                cells.append(f"{figures['seconds']:.2f} s (cpu {figures['cpu_s']:.1f}), peak {figures['peak_rss_mb']:.0f} MB{sampled}")
            elif result.get("stopped_in") == name:
                cells.append(f"STOPPED: {result['killed'] or 'exit ' + str(result['returncode'])}")
            else:
                cells.append("-")
        lines.append(cells)
    lines.append(["(building the synthetic corpus)"] + [
        f"{r['corpus']['seconds']:.1f} s, RSS after {r['corpus']['rss_after_mb']:.0f} MB" if r.get("corpus") else "-" for r in results])
    lines.append(["after embedding, total"] + [f"{r['total_s']:.2f} s" if "total_s" in r else "-" for r in results])
    lines.append(["process peak RSS"] + [f"{r['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in r else
                                         f"> {r['sampled_max_rss_mb']:.0f} MB" for r in results])
    for key in ("index", "clusters", "vocabulary", "tfidf_nonzeros", "mentions", "pairs", "pair_row_nonzeros",
                "sources", "candidates", "queue"):
        lines.append([key] + [f"{r[key]:,}" if isinstance(r.get(key), int) else str(r.get(key, "-")) for r in results])
    for key in PROFILE_KEYS:
        lines.append([key] + [str(r["profile"][key]) if "profile" in r else "-" for r in results])
    if any(r.get("source_share", 1) < 1 for r in results):  # the sampled stages, scaled to every page as a source
        lines.append(["total, last two stages scaled to all sources"] + [
            f"{extrapolated_total(r):.1f} s" if "total_s" in r else "-" for r in results])
    lines.append(["neighbour cosine 1st/10th/30th/random"] + [
        "/".join(str(v) for v in r["neighbour_similarity"].values()) if "neighbour_similarity" in r else "-" for r in results])
    lines.append(["IVF recall@31 (@10) vs exact"] + [
        f"{r['recall']['recall_at_k']:.4f} ({r['recall']['recall_at_10']:.4f})" if "recall" in r else "-" for r in results])
    widths = [max(len(str(row[i])) for row in lines) for i in range(len(header))]
    for row in lines:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))


def bench_real(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The figures of `stages` on real crawls: their own texts and links, vectors from the default model.

    Each database is copied first (embedding writes its cache into the database); the copy's vectors
    are computed once, before the measured stages.
    """
    from analysis.embed import DEFAULT_MODEL, embed_pages, page_text
    from analysis.index import EXACT_LIMIT
    from analysis.load import load_corpus
    from linkspider.db import open_existing

    results = []
    for path in args.db:
        with tempfile.TemporaryDirectory(prefix="linkspider-analyze-") as folder:
            copy = Path(folder) / path.name
            shutil.copyfile(path, copy)
            db = open_existing(copy)
            corpus = load_corpus(db)
            texts = [page_text(title, text) for title, text in zip(corpus.titles, corpus.texts)]
            vectors = embed_pages(db, corpus.urls, texts, corpus.hashes, DEFAULT_MODEL, args.device, progress=False).vectors
            instrumented = InstrumentedPropose(lambda: vectors, 1.0)
            proposal, _, total = instrumented.run(corpus)
        seen = instrumented.seen
        gathered = seen["matrix"]["gathered"]
        results.append({
            "label": path.name, "pages": len(corpus), "stages": instrumented.report, "total_s": round(total, 2),
            "peak_rss_mb": round(max(figures["peak_rss_mb"] for figures in instrumented.report.values()), 1),
            "index": "flat (exact)" if len(corpus) <= EXACT_LIMIT else "IVF-Flat", "profile": corpus_profile(corpus, instrumented),
            "vocabulary": len(seen["keywords"].vocabulary), "tfidf_nonzeros": seen["matrix"]["nonzeros"],
            "mentions": seen["mentions"], "candidates": seen["candidates"], "queue": len(proposal.queue),
            "queue_sha1": queue_digest(proposal.queue), "sources": seen["sources"], "pairs": gathered["pairs"], "pair_row_nonzeros": gathered["nonzeros"],
            "neighbour_similarity": neighbour_profile(vectors, seen["by_meaning"], np.random.default_rng(1)),
        })
    return results


# ---------------------------------------------------------------------------- 3. a whole 1,000-page site


def crawl_site(pages: int, out: Path, seed: int) -> tuple[Path, dict[str, Any]]:
    """Generate the site with bench/crawl.py's generator, serve it, crawl it with `scrapy crawl site`."""
    from bench.crawl import generate_site
    from linkspider.localserver import serve

    site, db = out / "site", out / "crawl.db"
    if site.exists():
        shutil.rmtree(site)
    for stale in out.glob("crawl.db*"):
        stale.unlink()
    generate_site(site, pages, seed)
    with serve(site) as url:
        command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"url={url}", "-a", f"db={db}",
                   "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=WARNING"]
        start = time.perf_counter()
        with open(out / "crawl.log", "w") as log:
            subprocess.run(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, check=True)
        seconds = time.perf_counter() - start
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        in_db, ok = conn.execute("SELECT count(*), sum(status = 200) FROM pages").fetchone()
    return db, {"site_pages": sum(1 for _ in site.rglob("index.html")), "pages_in_db": in_db, "pages_200": ok,
                "crawl_s": round(seconds, 1), "command": " ".join(["scrapy", *command[3:]])}


def bench_site(args: argparse.Namespace) -> dict[str, Any]:
    """Side by side on one crawled site; with --out the site, database and copies are kept there."""
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        return measure_site(args, args.out.resolve())
    with tempfile.TemporaryDirectory(prefix="linkspider-analyze-") as folder:
        return measure_site(args, Path(folder))


def measure_site(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    before = machine()
    if args.reuse_db and (out / "crawl.db").exists():
        db, crawl = out / "crawl.db", {"reused": str(out / "crawl.db")}
    else:
        print(f"generating and crawling a {args.pages}-page site in {out} ...", file=sys.stderr, flush=True)
        db, crawl = crawl_site(args.pages, out, args.seed)
    import analysis.embed
    from analysis.embed import DEFAULT_MODEL, choose_backend, load_encoder, page_text
    from analysis.load import load_corpus
    from analysis.pipeline import Options, run
    from linkspider.db import open_existing

    corpus = load_corpus(open_existing(db))
    texts = [page_text(title, text) for title, text in zip(corpus.titles, corpus.texts)]
    start = time.perf_counter()
    backend = choose_backend("auto", args.device)  # what `run` encodes with on this device
    encoder = load_encoder(DEFAULT_MODEL, args.device, backend)  # imports included
    load_s = time.perf_counter() - start
    analysis.embed.load_encoder = lambda *_, **__: encoder  # embed_pages reuses it: its load is excluded on both sides
    encoder.encode(texts[:64], 32)  # warm-up, for both sides
    rounds = []
    for number in range(args.repeats):
        measured: dict[str, Any] = {}
        for side in (("encode", "pipeline") if number % 2 == 0 else ("pipeline", "encode")):
            if side == "encode":
                start, cpu = time.perf_counter(), cpu_seconds()
                encoder.encode(texts, 32)
                measured["encode_s"] = time.perf_counter() - start
                measured["encode_cpu_s"] = round(cpu_seconds() - cpu, 2)
            else:
                fresh = out / f"analysis-{number}.db"
                for stale in out.glob(f"analysis-{number}.*"):
                    stale.unlink()
                shutil.copyfile(db, fresh)
                with closing(sqlite3.connect(fresh)) as conn:  # a reused crawl may hold vectors: a fresh run embeds every page
                    conn.execute("DROP TABLE IF EXISTS embeddings")
                start, cpu = time.perf_counter(), cpu_seconds()
                result = run(fresh, Options(progress=False))
                measured["pipeline_s"] = time.perf_counter() - start
                assert result.proposal.embedded == len(corpus), "the fresh run must embed every page"
                measured["pipeline_cpu_s"] = round(cpu_seconds() - cpu, 2)
                measured["timings"] = {name: round(seconds, 3) for name, seconds in result.timings.items()}
                measured["embedded"] = result.proposal.embedded
                measured["suggestions"] = len(result.proposal.queue)
                start, cpu = time.perf_counter(), cpu_seconds()  # again: every vector cached, the rest alone
                again = run(fresh, Options(progress=False))
                measured["cached_s"] = time.perf_counter() - start
                measured["cached_cpu_s"] = round(cpu_seconds() - cpu, 2)
                measured["cached_timings"] = {name: round(seconds, 3) for name, seconds in again.timings.items()}
                assert again.proposal.embedded == 0
        measured["ratio"] = measured["pipeline_s"] / measured["encode_s"]
        measured["cpu_ratio"] = measured["pipeline_cpu_s"] / measured["encode_cpu_s"]
        measured["composed_ratio"] = 1 + measured["cached_s"] / measured["encode_s"]
        measured["composed_cpu_ratio"] = 1 + measured["cached_cpu_s"] / measured["encode_cpu_s"]
        measured["load_average"] = [round(x, 2) for x in os.getloadavg()]
        rounds.append(measured)
        print(f"round {number + 1}: encode {measured['encode_s']:.2f} s, pipeline {measured['pipeline_s']:.2f} s, "
              f"ratio {measured['ratio']:.3f}; cached re-run {measured['cached_s']:.2f} s", file=sys.stderr, flush=True)
    return {"machine": before, "crawl": crawl, "candidate_pages": len(corpus), "backend": backend,
            "import_and_load_model_s": round(load_s, 3),
            "mean_chars": round(statistics.mean(len(t) for t in texts)), "rounds": rounds,
            "median_ratio": round(statistics.median(r["ratio"] for r in rounds), 3),
            "median_composed_ratio": round(statistics.median(r["composed_ratio"] for r in rounds), 3),
            "out": str(out) if args.out else None}


def print_site(result: dict[str, Any]) -> None:
    rounds = result["rounds"]
    rows = [
        ("candidate pages", f"{result['candidate_pages']} (page texts of {result['mean_chars']} chars on average)"),
        (f"load_encoder, {result['backend']} (excluded below)", f"{result['import_and_load_model_s']:.2f} s"),
        ("pure encode, batch 32", ", ".join(f"{r['encode_s']:.2f}" for r in rounds) + " s"),
        ("analysis.pipeline.run", ", ".join(f"{r['pipeline_s']:.2f}" for r in rounds) + " s"),
        ("ratio", ", ".join(f"{r['ratio']:.3f}" for r in rounds) + f"  (median {result['median_ratio']:.3f}; target < 1.1)"),
        ("CPU s: encode / pipeline", ", ".join(f"{r['encode_cpu_s']:.1f} / {r['pipeline_cpu_s']:.1f}" for r in rounds)),
        ("CPU ratio", ", ".join(f"{r['cpu_ratio']:.3f}" for r in rounds)),
        ("cached re-run (no encoding)", ", ".join(f"{r['cached_s']:.2f}" for r in rounds) + " s, CPU "
                                        + ", ".join(f"{r['cached_cpu_s']:.2f}" for r in rounds) + " s"),
        ("1 + cached re-run / encode", ", ".join(f"{r['composed_ratio']:.3f}" for r in rounds)
                                       + f"  (median {result['median_composed_ratio']:.3f}); CPU: "
                                       + ", ".join(f"{r['composed_cpu_ratio']:.3f}" for r in rounds)),
        ("load average after each round", "; ".join(" ".join(f"{x:.2f}" for x in r["load_average"]) for r in rounds)),
    ]
    for stage_name in rounds[0]["timings"]:
        rows.append((f"  {stage_name} (fresh; cached re-run)", ", ".join(f"{r['timings'][stage_name]:.3f}" for r in rounds)
                     + " s; " + ", ".join(f"{r['cached_timings'][stage_name]:.3f}" for r in rounds) + " s"))
    rows.append(("suggestions", ", ".join(str(r["suggestions"]) for r in rounds)))
    print_rows(rows)


# ---------------------------------------------------------------------------- command line


def print_rows(rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    embed = commands.add_parser("embed", help="embedding throughput, model load and import times")
    embed.add_argument("--texts", type=int, default=256, help="page texts to encode (default 256)")
    embed.add_argument("--batch-size", type=int, default=32, help="encode batch size (default 32, as the pipeline)")
    embed.add_argument("--repeats", type=int, default=3, help="encode runs (default 3)")
    embed.add_argument("--import-runs", type=int, default=3, help="fresh interpreters timing the imports (default 3)")
    embed.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    scale = commands.add_parser("scale", help="the stages after embedding at several sizes, one subprocess each")
    scale.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000], help="pages (default 1000 10000 100000)")
    scale.add_argument("--memory-cap-gb", type=float, default=8.0, help="kill a size whose RSS passes this (default 8)")
    scale.add_argument("--timeout-s", type=float, default=3600, help="kill a size running longer (default 3600)")
    scale.add_argument("--source-share", type=float, default=1.0,
                       help="with --share-from: find_candidates and rank for this share of the sources only (default 1)")
    scale.add_argument("--share-from", type=int, default=0, metavar="PAGES",
                       help="apply --source-share to sizes of at least this many pages (default 0: all)")
    stages = commands.add_parser("stages", help="one size of `scale` in this process (JSON lines on stdout)")
    stages.add_argument("--pages", type=int, required=True)
    stages.add_argument("--recall", action="store_true", help="measure neighbour recall even with the exact index")
    stages.add_argument("--source-share", type=float, default=1.0,
                        help="run find_candidates and rank for this share of the pages as sources only (default 1)")
    real = commands.add_parser("real", help="the figures of `stages` on real crawl databases (model vectors)")
    real.add_argument("db", type=Path, nargs="+", help="crawl databases (copied, never written)")
    real.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    site = commands.add_parser("site", help="whole analysis vs pure encoding on a crawled synthetic site")
    site.add_argument("--pages", type=int, default=1000, help="HTML pages of the synthetic site (default 1000)")
    site.add_argument("--repeats", type=int, default=3, help="rounds of encode + pipeline (default 3)")
    site.add_argument("--out", type=Path, help="keep the site, crawl database and copies here (default: a temporary folder)")
    site.add_argument("--reuse-db", action="store_true", help="reuse OUT/crawl.db instead of generating and crawling again")
    site.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    database = commands.add_parser("database", help="a crawl database of the synthetic site, vectors cached, for `scrapy analyze`")
    database.add_argument("--pages", type=int, required=True)
    database.add_argument("out", type=Path, help="the new database's path")
    for sub in (embed, scale, stages, real, site, database):
        sub.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
        if sub not in (stages, database):
            sub.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.command == "stages":
        run_stages(args)
        return
    if args.command == "database":
        write_database(args)
        return
    result: Any
    if args.command == "embed":
        result = bench_embed(args)
        print_embed(result)
    elif args.command == "scale":
        result = {"machine": machine(), "sizes": bench_scale(args)}
        print_scale(result["sizes"])
    elif args.command == "real":
        result = {"machine": machine(), "sites": bench_real(args)}
        print_scale(result["sites"])
    else:
        result = bench_site(args)
        print_site(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
