"""Stage 5c, export: analysis/export.py (the suggestions kept across runs, the CSV and its neutralised
cells), on small crawl databases written by hand (handmade.py), with exact expectations.

Weights and constants of analysis/score.py and analysis/anchors.py are still being tuned, so these tests check
mechanisms (what is excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis.anchors import Anchor
from analysis.export import CSV_HEADER, export_csv, neutralise, rejected_pairs, save_suggestions, write_csv
from analysis.names import title_anchor
from analysis.score import Suggestion
from handmade import SLUGS, Site, blog_site


@pytest.mark.parametrize("value", ["=SUM(1)", "+1", "-1", "@x", "\tx", "\rx", "=", "-"])
def test_formula_like_cells_get_a_leading_quote(value: str) -> None:
    assert neutralise(value) == "'" + value


@pytest.mark.parametrize("value", ["", "plain text", "a=b", "1+1", "x-1", " =1", "'=quoted", 1, -1, 0.5, -0.25, None])
def test_other_cells_are_unchanged(value: object) -> None:
    assert neutralise(value) == value and type(neutralise(value)) is type(value)


def suggestion(source: int, target: int, score: float, anchor: str = "brew guide", offset: int | None = 0) -> Suggestion:
    return Suggestion(source=source, target=target, similarity=0.5, score=score,
                      anchor=Anchor(anchor, "text" if offset is not None else "title", 0.5, offset, f"A {anchor} sentence."),
                      template_linked=False)


@pytest.fixture
def export_site(tmp_path: Path) -> Site:
    return blog_site(tmp_path / "export.db", SLUGS[:6], links=False)


def statuses(site: Site) -> dict[tuple[int, int], tuple[str, str, str]]:
    index = site.corpus().index
    return {(index[row["source"]], index[row["target"]]): (row["status"], row["first_seen"], row["last_seen"])
            for row in site.db["suggestions"].rows}


def test_save_suggestions_keeps_decisions_across_runs(export_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = export_site.corpus()
    monkeypatch.setattr("analysis.export.utc_now", lambda: "T1")
    first = [suggestion(0, 1, 0.9), suggestion(0, 2, 0.8), suggestion(0, 3, 0.7), suggestion(1, 2, 0.6),
             suggestion(1, 3, 0.5), suggestion(2, 3, 0.4), suggestion(2, 4, 0.3), suggestion(3, 4, 0.2)]
    assert save_suggestions(export_site.db, corpus, first) == {"new": 8, "done": 0}
    assert {pair: status for pair, (status, _, _) in statuses(export_site).items()} == {
        (item.source, item.target): "pending" for item in first}
    decisions = {(0, 1): "approved", (0, 2): "rejected", (1, 3): "approved", (2, 3): "approved", (2, 4): "rejected"}
    for (s, t), status in decisions.items():
        export_site.db["suggestions"].update((corpus.urls[s], corpus.urls[t]), {"status": status})
    assert rejected_pairs(export_site.db, corpus) == {(0, 2), (2, 4)}
    for s, t in ((1, 2), (1, 3), (2, 4)):  # an editor added these links; the site was crawled again
        export_site.link(corpus.urls[s], corpus.urls[t], corpus.texts[s].split("\n")[0][:20])
    corpus = export_site.corpus()
    monkeypatch.setattr("analysis.export.utc_now", lambda: "T2")
    second = [suggestion(0, 1, 0.95, "new anchor"), suggestion(3, 4, 0.2), suggestion(4, 5, 0.1)]
    assert save_suggestions(export_site.db, corpus, second) == {"new": 1, "done": 2}
    assert statuses(export_site) == {
        (0, 1): ("approved", "T1", "T2"),  # proposed again: the decision stays
        (0, 2): ("rejected", "T1", "T1"),  # not proposed: kept
        (1, 2): ("done", "T1", "T2"),  # pending, now linked
        (1, 3): ("done", "T1", "T2"),  # approved, now linked
        (2, 3): ("approved", "T1", "T1"),  # not proposed, not linked: kept
        (2, 4): ("rejected", "T1", "T1"),  # rejected stays rejected, linked or not
        (3, 4): ("pending", "T1", "T2"),
        (4, 5): ("pending", "T2", "T2"),
    }  # (0, 3) was pending, not proposed and not linked: dropped
    assert export_site.db["suggestions"].get((corpus.urls[0], corpus.urls[1]))["anchor"] == "new anchor"


def test_a_rerun_in_the_same_second_reports_nothing_new(export_site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = export_site.corpus()
    monkeypatch.setattr("analysis.export.utc_now", lambda: "2025-01-01T00:00:00+00:00")
    queue = [suggestion(0, 1, 0.9), suggestion(1, 2, 0.8)]
    assert save_suggestions(export_site.db, corpus, queue)["new"] == 2
    assert save_suggestions(export_site.db, corpus, queue)["new"] == 0


def test_export_csv_is_sorted_and_neutralised(export_site: Site, tmp_path: Path) -> None:
    corpus = export_site.corpus()
    queue = [suggestion(0, 1, 0.5, "=HYPERLINK(x)"), suggestion(1, 2, 0.9, "-5 grams"), suggestion(2, 3, 0.7, "plain words"),
             suggestion(3, 4, 0.1, title_anchor(corpus.titles[4]), offset=None)]
    save_suggestions(export_site.db, corpus, queue)
    path = tmp_path / "queue.csv"
    assert export_csv(export_site.db, path) == 4
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == CSV_HEADER == ["from", "to", "to_title", "anchor", "anchor_source", "context", "similarity", "score", "status",
                                     "gain"]
    assert [row[3] for row in rows[1:]] == ["'-5 grams", "plain words", "'=HYPERLINK(x)", title_anchor(corpus.titles[4])]
    assert [float(row[7]) for row in rows[1:]] == [0.9, 0.7, 0.5, 0.1]
    assert rows[1][:3] == [corpus.urls[1], corpus.urls[2], corpus.titles[2]]
    assert [row[4] for row in rows[1:]] == ["text", "text", "text", "title"] and {row[8] for row in rows[1:]} == {"pending"}
    assert {row[9] for row in rows[1:]} == {""}  # no gain until impact.py has measured the queue


def test_a_csv_stopped_halfway_leaves_the_last_one_whole_and_nothing_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "site.suggestions.csv"
    assert write_csv(path, ["from", "to"], [["/a/", "/b/"], ["/c/", "/d/"]]) == 2

    def rows() -> Iterator[list[str]]:
        yield ["/e/", "/f/"]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_csv(path, ["from", "to"], rows())
    with open(path, newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == [["from", "to"], ["/a/", "/b/"], ["/c/", "/d/"]]
    assert list(tmp_path.iterdir()) == [path]
