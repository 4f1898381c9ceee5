"""Quality gate: on the demo site, whose editorial links we wrote, the engine must keep recovering them.

The floors sit a little under the figures measured when they were set (BENCHMARKS.md, "Quality"):
a change that makes suggestions worse fails here. Raise them when the engine gets better.
"""

from __future__ import annotations

import shutil

import pytest

from analysis.backtest import Score, run_backtest
from analysis.pipeline import Options
from conftest import CrawlRun

SEEDS = [1, 2, 3, 4, 5]  # three rounds swung by 0.04 with the seeds drawn (0.728 for seeds 1-3, 0.767 over 1-10)
RECALL_FLOOR = 0.70  # measured 0.756 (seeds 1-5, 20% hidden, onnx-int8; 0.767 over seeds 1-10)
ANCHOR_FLOOR = 0.76  # measured 0.831 with the link words (0.770 before them, seeds 1-3); room for int8 kernels of other CPUs
MAX_TARGET_SHARE = 0.025  # the default hub guard allows 3 per target: 2% of the queue is less on a 45-page site


@pytest.fixture(scope="module")
def scores(demo_crawl: CrawlRun, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Score]]:
    db = tmp_path_factory.mktemp("gate") / "demo.db"
    shutil.copy(demo_crawl.db_path, db)
    results, _ = run_backtest(db, Options(progress=False), share=0.2, seeds=SEEDS)
    return {method: [s for s in results if s.method == method] for method in ("engine", "seed", "tfidf")}


def mean(rows: list[Score], field: str) -> float:
    return sum(getattr(row, field) for row in rows) / len(rows)


def test_recall_stays_above_its_floor(scores: dict[str, list[Score]]) -> None:
    assert mean(scores["engine"], "recall") >= RECALL_FLOOR


def test_anchor_agreement_stays_above_its_floor(scores: dict[str, list[Score]]) -> None:
    assert mean(scores["engine"], "anchor_agreement") >= ANCHOR_FLOOR


def test_engine_beats_both_baselines_on_the_same_hidden_links(scores: dict[str, list[Score]]) -> None:
    engine = mean(scores["engine"], "recall")
    assert engine > mean(scores["tfidf"], "recall")
    assert engine >= 1.5 * mean(scores["seed"], "recall")


def test_no_target_takes_over_the_queue(scores: dict[str, list[Score]]) -> None:
    assert max(row.top_target_share for row in scores["engine"]) <= MAX_TARGET_SHARE
