"""Stage 5c, export: the review queue and its companions into SQLite tables and CSV files.

A person's decisions survive re-runs: an approved, rejected or done suggestion keeps its status;
a pending one that is no longer proposed is dropped; one whose link now exists becomes done.
Every CSV cell is neutralised against spreadsheet formula injection. The gain columns are filled
by impact.py; the CSV shows them as one readable `gain` cell and breaks score ties by them.
"""

from __future__ import annotations

import csv
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import TextIO

import numpy as np
import sqlite_utils

from analysis.load import Corpus
from analysis.score import Suggestion, records
from analysis.vague import VagueLink
from linkspider.db import add_missing_columns, utc_now

SUGGESTIONS = {
    "source": str, "target": str, "target_title": str, "anchor": str, "anchor_source": str, "context": str,
    "offset": int, "similarity": float, "score": float, "template_linked": int, "status": str,
    "first_seen": str, "last_seen": str,
    "depth_before": int, "depth_after": int, "pagerank_gain": float,  # the target's, with this link alone (impact.py)
}
CSV_HEADER = ["from", "to", "to_title", "anchor", "anchor_source", "context", "similarity", "score", "status", "gain"]
# Best score first; ties go to the larger gain: clicks saved (an unreachable target counts as very deep), then PageRank.
QUEUE_ORDER = ("score DESC, coalesce(depth_before, 1e9) - coalesce(depth_after, 1e9) DESC, pagerank_gain DESC, "
               "source, target")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
STATUSES = ("pending", "approved", "rejected", "done")


def neutralise(value: object) -> object:
    """A cell a spreadsheet will show as text: a leading = + - @ tab or CR gets a quote in front."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(path: Path, header: list[str], rows: Iterable[Iterable[object]]) -> int:
    """Write the rows (read one at a time) under the header; returns how many. The file is whole or as it was
    (replace_file)."""
    written = 0
    with replace_file(path) as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([neutralise(cell) for cell in row])
            written += 1
    return written


@contextmanager
def replace_file(path: Path) -> Iterator[TextIO]:
    """A text file to write that takes the place of path once it is written whole: a run stopped halfway (Ctrl-C, a
    full disk) leaves the last run's file, and a spreadsheet or a browser never reads half of one."""
    part = path.with_name(path.name + ".part")
    try:
        with open(part, "w", newline="", encoding="utf-8") as handle:
            yield handle
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)


def rejected_pairs(db: sqlite_utils.Database, corpus: Corpus) -> set[tuple[int, int]]:
    """Pairs a person rejected in an earlier run: never proposed again."""
    if "suggestions" not in db.table_names():
        return set()
    index = corpus.index
    return {(index[s], index[t]) for s, t in db.execute("SELECT source, target FROM suggestions WHERE status = 'rejected'")
            if s in index and t in index}


def save_suggestions(db: sqlite_utils.Database, corpus: Corpus, queue: Sequence[Suggestion]) -> dict[str, int]:
    """Merge this run's queue into the suggestions table; returns how many rows are new and how many became done.

    The rows go in as they are made, and a row already there keeps its status and first sighting (the insert's
    conflict clause leaves them). Of the rows not proposed this time, only the pending and approved are read back: a
    list of every row as a dict, and of the table's rows as dicts, took 440 MB at the re-run of 100,000 synthetic
    pages, and a dict of every row's key, status and first sighting 1.6 s there (BENCHMARKS.md, "Analysis")."""
    now = utc_now()
    db["suggestions"].create(SUGGESTIONS, pk=("source", "target"), if_not_exists=True)
    add_missing_columns(db["suggestions"], SUGGESTIONS)
    urls, titles, index, pages = corpus.urls, corpus.titles, corpus.index, len(corpus)
    proposed: set[int] = set()  # as numbers (the cycle collector walks tuples), filled as the rows go in

    def rows() -> Iterator[dict]:  # the queue read once, as plain fields, in key order (score.records)
        for (source, target, anchor, anchor_source, _, offset, context, similarity, score,
             template_linked) in records(queue, by_pair=True):
            proposed.add(source * pages + target)
            yield {"source": urls[source], "target": urls[target], "target_title": titles[target], "anchor": anchor,
                   "anchor_source": anchor_source, "context": context, "offset": offset, "similarity": round(similarity, 4),
                   "score": score, "template_linked": int(template_linked), "status": "pending", "first_seen": now,
                   "last_seen": now}

    with db.atomic():
        before = db.execute("SELECT count(*) FROM suggestions").fetchone()[0]
        insert_rows(db, "suggestions", rows(), ("source", "target"), keep=("status", "first_seen"))
        new = db.execute("SELECT count(*) FROM suggestions").fetchone()[0] - before
        stale, stale_pages = [], array("q")  # not proposed now: (source, target, status), and their pages (-1: gone)
        for source, target, status in db.execute("SELECT source, target, status FROM suggestions WHERE status IN ('pending', 'approved')"):
            page, other = index.get(source, -1), index.get(target, -1)
            if page < 0 or other < 0 or page * pages + other not in proposed:
                stale.append((source, target, status))
                stale_pages.extend((page, other))
        ends = np.frombuffer(stale_pages, dtype=np.int64).reshape(-1, 2)
        linked = corpus.linked(ends[:, 0], ends[:, 1]) & (ends >= 0).all(axis=1)  # pages gone since are linked from no page
        done = [(now, source, target) for (source, target, _), now_linked in zip(stale, linked.tolist()) if now_linked]
        dropped = [(source, target) for (source, target, status), now_linked in zip(stale, linked.tolist())
                   if status == "pending" and not now_linked]  # no longer wanted
        db.conn.executemany("UPDATE suggestions SET status = 'done', last_seen = ? WHERE source = ? AND target = ?", done)
        db.conn.executemany("DELETE FROM suggestions WHERE source = ? AND target = ?", dropped)
    return {"new": new, "done": len(done)}


def export_csv(db: sqlite_utils.Database, path: Path) -> int:
    """The suggestions table as the review CSV in QUEUE_ORDER; returns the number of rows."""
    rows = db.execute(
        "SELECT source, target, target_title, anchor, anchor_source, context, similarity, score, status, "
        f"depth_before, depth_after, pagerank_gain FROM suggestions ORDER BY {QUEUE_ORDER}"
    )
    return write_csv(path, CSV_HEADER, (row[:9] + (gain_text(*row[9:]),) for row in rows))  # read as written


def gain_text(depth_before: int | None, depth_after: int | None, pagerank_gain: float | None) -> str:
    """A marginal gain in words, e.g. "depth 4 -> 2, PageRank +31.0%"; empty until impact.py measured it."""
    if pagerank_gain is None:
        return ""
    pagerank = f"PageRank {pagerank_gain:+.1%}"
    if depth_after == depth_before:
        return pagerank
    return f"depth {'unreachable' if depth_before is None else depth_before} -> {depth_after}, {pagerank}"


def save_cannibalization(db: sqlite_utils.Database, corpus: Corpus, pairs: list[tuple[int, int, float]]) -> list[dict]:
    """The pairs, then each page served word for word under another URL (Corpus.copies, similarity 1): one page to the
    analysis, but a duplicate to a search engine until the copy redirects or names the page as its canonical. Returns
    the rows, for their CSV (export_cannibalization)."""
    rows = [{"page": corpus.urls[a], "other": corpus.urls[b], "similarity": round(similarity, 4),
             "page_title": corpus.titles[a], "other_title": corpus.titles[b]} for a, b, similarity in pairs]
    rows += [{"page": corpus.urls[a], "other": copy, "similarity": 1.0, "page_title": corpus.titles[a],
              "other_title": corpus.titles[a]} for a, copy in corpus.copies]
    replace_table(db, "cannibalization", rows, {"page": str, "other": str, "similarity": float, "page_title": str, "other_title": str})
    return rows


def export_cannibalization(rows: list[dict], path: Path) -> None:
    write_csv(path, ["page", "other", "similarity", "page_title", "other_title"], (row.values() for row in rows))


def save_vague_links(db: sqlite_utils.Database, corpus: Corpus, links: list[VagueLink]) -> list[dict]:
    """The links anchored on "here" and the like, with a better anchor from the same sentence where one names the target
    (vague.py), by source and place. Returns the rows, for their CSV (export_vague_links)."""
    rows = [{"source": corpus.urls[link.source], "target": corpus.urls[link.target], "target_title": corpus.titles[link.target],
             "anchor": link.anchor, "offset": link.offset, "context": link.context, "context_offset": link.context_offset,
             "better_anchor": link.better, "better_offset": link.better_offset} for link in links]
    replace_table(db, "vague_links", rows, {"source": str, "target": str, "target_title": str, "anchor": str, "offset": int,
                                            "context": str, "context_offset": int, "better_anchor": str, "better_offset": int})
    return rows


def export_vague_links(rows: list[dict], path: Path) -> None:
    write_csv(path, ["from", "to", "to_title", "anchor", "context", "better_anchor"],
              ((row["source"], row["target"], row["target_title"], row["anchor"], row["context"], row["better_anchor"] or "")
               for row in rows))


def save_orphans(db: sqlite_utils.Database, corpus: Corpus) -> None:
    replace_table(db, "orphans", corpus.orphans,
                  {"url": str, "title": str, "depth": int, "sitemap_only": int, "template_inbound": int})


def save_hubs(db: sqlite_utils.Database, corpus: Corpus, hubs: dict[int, int], cap: int) -> None:
    rows = [{"target": corpus.urls[t], "title": corpus.titles[t], "wanted": wanted, "kept": cap}
            for t, wanted in sorted(hubs.items(), key=lambda item: -item[1])]
    replace_table(db, "hubs", rows, {"target": str, "title": str, "wanted": int, "kept": int})


def insert_rows(db: sqlite_utils.Database, table: str, rows: Iterable[dict], key: tuple[str, ...] = (),
                keep: tuple[str, ...] = ()) -> None:
    """Insert the rows (dicts with the same keys, column names written here; read one at a time) in one executemany;
    with key, a row whose key exists updates that row's columns instead, but those in keep. sqlite-utils' insert_all
    and upsert_all build a query in Python for every hundred rows: 8.1 s for the 120,000 suggestions of 30,000
    synthetic pages (BENCHMARKS.md, "Analysis")."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    columns = list(first)
    sql = f"INSERT INTO [{table}] ({', '.join(f'[{column}]' for column in columns)}) VALUES ({', '.join('?' * len(columns))})"
    if key:
        sql += f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET " + ", ".join(
            f"[{column}] = excluded.[{column}]" for column in columns if column not in key + keep)
    db.conn.executemany(sql, (tuple(row[column] for column in columns) for row in chain([first], rows)))


def replace_table(db: sqlite_utils.Database, name: str, rows: Iterable[dict], columns: dict) -> None:
    """A derived table is rewritten whole on every run, in one transaction (or the caller's); the rows are read one at
    a time."""
    with db.atomic():
        db[name].drop(ignore=True)
        db[name].create(columns)
        insert_rows(db, name, rows)
