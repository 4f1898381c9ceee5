"""The audit's comparison of its sites: DIR/summary.csv for spreadsheets, DIR/index.html for reading.

index.html, like the per-site reports, makes no request (no script, inline CSS, a Content-Security-Policy that blocks
any) and escapes every string, since start URLs and errors come from outside; it links each site's report.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from analysis.export import write_csv
from analysis.impact import figure
from analysis.report import STYLE
from audit.figures import COLUMNS
from audit.sites import Site

HEADER = ["site", "start_url", "status", "error", *COLUMNS, "database", "report"]


@dataclass
class SiteRow:
    site: Site
    status: str  # done, failed, or not finished (the audit was interrupted first)
    error: str | None
    figures: dict[str, float | int | None]
    report: Path | None  # the site's report, when it has one

    def cells(self) -> list[object]:
        return [self.site.name, self.site.url, self.status, self.error or "", *(self.figures[column] for column in COLUMNS),
                f"{self.site.name}.db" if self.figures["pages"] is not None else "", self.report.name if self.report else ""]


def write_summary(out: Path, rows: list[SiteRow]) -> tuple[Path, Path]:
    csv_path, html_path = out / "summary.csv", out / "index.html"
    write_csv(csv_path, HEADER, (row.cells() for row in rows))
    html_path.write_text(render(rows), encoding="utf-8")
    return csv_path, html_path


def render(rows: list[SiteRow]) -> str:
    head = "".join(f"<th>{escape(name.replace('_', ' '))}</th>" for name in ("site", "status", *COLUMNS, "error"))
    body = "".join(f"<tr><td>{site_cell(row)}</td><td>{escape(row.status)}</td>"
                   + "".join(f"<td class=n>{escape(shown(row.figures[column], column))}</td>" for column in COLUMNS)
                   + f"<td>{escape(row.error or '')}</td></tr>" for row in rows)
    failed = sum(row.status == "failed" for row in rows)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Internal links: audit of {len(rows)} sites</title><style>{STYLE}</style></head>\n<body>\n"
            f"<h1>Internal links: audit of {len(rows)} sites</h1><p>{len(rows) - failed} analysed, {failed} failed. "
            "&ldquo;After&rdquo; adds each site's pending and approved suggestions as links; each site's name opens "
            "its report.</p>\n"
            f"<table><tr>{head}</tr>{body}</table>\n</body></html>\n")


def site_cell(row: SiteRow) -> str:
    label = f"{escape(row.site.name)}<br><span class=muted>{escape(row.site.url)}</span>"
    return f'<a href="{escape(row.report.name)}">{label}</a>' if row.report else label


def shown(value: float | int | None, column: str) -> str:
    return "" if value is None else figure(column, float(value))
