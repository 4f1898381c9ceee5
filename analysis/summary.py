"""The lines `scrapy analyze` ends with: what it found, how long each stage took, where it wrote."""

from __future__ import annotations

import textwrap

from analysis.pipeline import KEYWORD_NEIGHBOURS_LIMIT, MENTIONS_PER_SOURCE, Result

TOP = 5


def summary(result: Result) -> str:
    corpus, proposal = result.corpus, result.proposal
    stages = ", ".join(f"{stage} {seconds:.1f}s" for stage, seconds in result.timings.items())
    embedded_with = f" with {proposal.encoder}" if proposal.encoder else ""  # nothing loaded when all came from the cache
    lines = [
        f"Analysed {len(corpus)} pages ({proposal.embedded} embedded now{embedded_with}, "
        f"{len(corpus) - proposal.embedded} from cache), "
        f"threshold {proposal.threshold:.2f}",
        f"  suggestions: {len(proposal.queue)} ({result.counts['new']} new, {result.counts['done']} done since last run)",
        f"  pages since the last analysis: {result.changes.pages_line()}",
        f"  hubs (capped at {proposal.max_per_target} per target): {len(proposal.hubs)}; orphans among the analysed pages: "
        f"{len(corpus.orphans)}; "
        f"cannibalisation pairs: {len(proposal.cannibalised) + len(corpus.copies)}"
        + (f" ({len(corpus.copies)} of them one page under two URLs)" if corpus.copies else ""),
        f"  with the {result.impact.applied} queued links, {result.impact.headline()}",
        f"  links anchored on \"here\" and the like: {len(proposal.vague)}"
        + (f" ({sum(link.better is not None for link in proposal.vague)} with a better anchor in their sentence)"
           if proposal.vague else ""),
        f"  time: {stages}",
        f"  wrote: {result.csv}, {result.cannibalization_csv}, {result.vague_csv}, {result.report}, "
        "tables suggestions/orphans/hubs/cannibalization/vague_links/impact/impact_summary/analysis_runs",
    ]
    if languages := corpus.languages_line():
        lines.insert(2, f"  languages: {languages}")
    if proposal.scope:
        lines.insert(2, f"  scope: {proposal.scope}")
    if proposal.past_keyword_limit:
        lines.insert(1, f"  note: past {KEYWORD_NEIGHBOURS_LIMIT:,} pages, candidates come from neighbours by meaning and at most "
                        f"{MENTIONS_PER_SOURCE} mentions a source (no keyword neighbours): expect a few fewer of the links an editor "
                        "would make (BENCHMARKS.md, Quality)")
    if result.crawl_note:
        lines.insert(1, f"  note: {result.crawl_note}")
    if proposal.queue:
        lines.append(f"Top {min(TOP, len(proposal.queue))} suggestions:")
    for item in proposal.queue[:TOP]:
        lines.append(f"  {item.score:.3f}  {corpus.urls[item.source]}")
        lines.append(f"         -> {corpus.urls[item.target]}  anchor: \"{item.anchor.text}\" ({item.anchor.source})")
        if item.anchor.context:
            lines.append(textwrap.shorten(f"         in: {item.anchor.context}", 110))
    return "\n".join(lines)
