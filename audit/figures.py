"""One site's figures for the audit's comparison, read from the tables its analysis wrote."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

# Column name -> (impact_summary figure, before or after); the rest are counts of whole tables.
FROM_IMPACT = {
    "pages": ("pages", "before"),
    "orphans_before": ("orphans", "before"), "orphans_after": ("orphans", "after"),
    "median_depth_before": ("median depth", "before"), "median_depth_after": ("median depth", "after"),
}
COLUMNS = (*FROM_IMPACT, "suggestions", "hubs", "cannibalization_pairs")


def site_figures(db_path: Path) -> dict[str, float | int | None]:
    """Pages, orphans and median click depth before and after the queue, the queue (pending and approved), hubs and
    cannibalisation pairs; None for what an unanalysed database lacks."""
    if not db_path.is_file():
        return dict.fromkeys(COLUMNS)
    db = sqlite_utils.Database(db_path)
    tables = set(db.table_names())
    impact = {figure: {"before": before, "after": after} for figure, before, after in
              db.execute("SELECT figure, before, after FROM impact_summary")} if "impact_summary" in tables else {}
    figures = {column: impact.get(figure, {}).get(side) for column, (figure, side) in FROM_IMPACT.items()}
    figures["suggestions"] = (db.execute("SELECT count(*) FROM suggestions WHERE status IN ('pending', 'approved')").fetchone()[0]
                              if "suggestions" in tables else None)
    figures["hubs"] = db["hubs"].count if "hubs" in tables else None
    figures["cannibalization_pairs"] = db["cannibalization"].count if "cannibalization" in tables else None
    db.close()
    return {column: int(value) if isinstance(value, float) and value.is_integer() else value for column, value in figures.items()}
