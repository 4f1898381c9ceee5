"""Stage 5a, rank and cap: analysis/score.py, fill.py, anchor_keys.py, contexts.py and memory.py, on small
crawl databases written by hand (handmade.py), with exact expectations.

Weights and constants of analysis/score.py and analysis/anchors.py are still being tuned, so these tests check
mechanisms (what is excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

import dataclasses
import inspect
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from analysis import anchor_keys, anchors, contexts, fill, memory, score
from analysis.anchors import Anchor, AnchorFinder
from analysis.candidates import PEERS, Candidate, Candidates
from analysis.index import Keywords
from analysis.load import Corpus, Spans, pair_codes
from analysis.names import title_anchor
from analysis.score import Suggestion, _firsts, rank
from conftest import ROOT
from handmade import SLUGS, blog_site, every_pair, plain_corpus, prose, ranked, url
from linkspider.sentences import sentence_at


def test_no_compiled_loop_calls_one_of_another_file() -> None:
    """numba re-checks a cached function against its own file only: a compiled loop that called one from another file
    would keep the old callee, inlined, after that file changed (a stale cache crashed every analysis once, Dec 5).
    So each compiled loop calls only those of its own module."""
    import ast
    trees = {path.stem: ast.parse(path.read_text()) for path in (ROOT / "analysis").glob("*.py")}
    compiled = {module: {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                         and any(getattr(decorator, "id", None) == "compiled" for decorator in node.decorator_list)}
                for module, tree in trees.items()}
    crossing = []
    for module, tree in trees.items():
        imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    for alias in node.names if (node.module or "").startswith("analysis.")
                    and alias.name in compiled.get(node.module.split(".")[1], set())}
        crossing += [(module, node.name, call.func.id) for node in tree.body if isinstance(node, ast.FunctionDef)
                     and node.name in compiled[module] for call in ast.walk(node)
                     if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in imported]
    assert sum(map(len, compiled.values())) > 20 and crossing == []


# Freed blocks that glibc keeps in the middle of its heap: 400 MB in blocks of 4 MB, under its threshold once a 30 MB
# mapping was freed, below a block still held; prints how many MB the call gave back.
FREED_MEMORY_SCRIPT = """
import numpy as np
from analysis.memory import return_freed_memory
def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
mapping = np.ones(30 << 20, np.uint8)
del mapping
blocks = [np.ones(4 << 20, np.uint8) for _ in range(100)]
held = np.ones(1 << 20, np.uint8)
del blocks
before = rss_mb()
return_freed_memory()
print(round(before - rss_mb()))
"""


@pytest.mark.skipif(memory._MALLOC_TRIM is None or not Path("/proc/self/statm").exists(), reason="glibc and /proc only")
def test_memory_freed_by_a_stage_goes_back_to_the_system() -> None:
    """return_freed_memory gives back the freed blocks that glibc would keep (and a later stage's larger arrays would be
    mapped beside): the resident size falls by about their 400 MB."""
    done = subprocess.run([sys.executable, "-c", FREED_MEMORY_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) >= 350


def test_each_sources_firsts_in_queue_order_are_a_lexsorts() -> None:
    """score._firsts (compiled) keeps each source's first pairs by score, then target, in the order a lexsort by
    (source, -score, target) lists them: with many equal scores, sources of one pair and of more than `count`."""
    rng = np.random.default_rng(8)
    for count in (0, 1, 4, 9):
        sources = np.sort(rng.integers(0, 60, 2_000))
        targets = np.concatenate([rng.permutation(200)[:size] for size in np.bincount(sources)])  # distinct per source
        scores = rng.integers(0, 5, len(sources)) / 4  # many ties
        order = np.lexsort((targets, -scores, sources))
        place_in_source = np.arange(len(order)) - np.searchsorted(sources[order], sources[order])
        assert _firsts(sources, targets, scores, count).tolist() == order[place_in_source < count].tolist(), count


def assert_sorted(queue: list[Suggestion]) -> None:
    assert [item.score for item in queue] == sorted((item.score for item in queue), reverse=True)


def greedy_fill(corpus: Corpus, candidates: list[Candidate], finder: AnchorFinder, per_page: int,
                per_target: int) -> tuple[list[tuple[int, int, float, Anchor]], dict[int, int]]:
    """The queue as the issue words it, one pair at a time in score order: (source, target, score, anchor) of each, and
    the hubs (the targets the cap refused pairs of). A pair enters where its source and its target have room and an
    anchor is left: its first text anchor (finder.anchors, searched for the pair alone) that points at the target from
    fewer than two pages, overlaps none of its source's, is no other page's name and no phrase its source links (or the
    queue has it link) elsewhere, else the title fallback, on the same terms; a text anchor is shown with the word that
    completes its phrase (anchors.completion), on the same terms."""
    scores = score._scored(corpus, Candidates.of(candidates), finder, per_page, False).scores
    order = sorted(range(len(candidates)), key=lambda row: (-scores[row], candidates[row].source, candidates[row].target))
    queue, per_source, per_target_count, wanted, used, spans = [], Counter(), Counter(), Counter(), Counter(), {}
    named = {name.lower(): page for page, name in enumerate(finder.names) if Counter(map(str.lower, finder.names))[name.lower()] == 1}
    for row in order:
        source, target = candidates[row].source, candidates[row].target
        if per_source[source] >= per_page:
            continue
        wanted[target] += 1  # by a source with room left
        if per_target_count[target] >= per_target:
            continue
        taken, text = spans.setdefault(source, []), corpus.texts[source]
        elsewhere = {text[start:end].lower() for start, end in [*corpus.link_spans[source], *taken]}  # linked, or queued
        anchor = next((anchor for anchor in finder.anchors(source, target)
                       if used[anchor.text.lower(), target] < fill.SAME_ANCHOR_PAGES and anchor.text.lower() not in elsewhere
                       and (anchor.source == "title" or named.get(anchor.text.lower(), target) == target)
                       and not any(anchor.span[0] < end and start < anchor.span[1] for start, end in taken if anchor.span)), None)
        if anchor is None:
            continue
        used[anchor.text.lower(), target] += 1
        if anchor.span:  # shown with the word that completes its phrase, where that word is free and names no other page
            start, end = anchor.span
            longer = anchors.completion(text, start, end)
            phrase = text[start:longer].lower()
            if (longer > end and not any(end < last and first < longer for first, last in [*taken, *corpus.link_spans[source]])
                    and named.get(phrase, target) == target and phrase not in elsewhere):
                anchor = Anchor(text[start:longer], "text", anchor.strength, start, anchor.context)
            taken.append(anchor.span)
        queue.append((source, target, round(scores[row], 4), anchor))
        per_source[source] += 1
        per_target_count[target] += 1
    return queue, {target: count for target, count in wanted.items() if count > per_target == per_target_count[target]}


@pytest.mark.parametrize("per_page, per_target", [(1, 1), (2, 2), (2, 3), (3, 2), (4, 1), (1, 4)])
def test_rank_fills_the_queue_in_score_order_under_both_caps(ranked_site: tuple[Corpus, Keywords], per_page: int,
                                                            per_target: int) -> None:
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), per_page, per_target)
    assert_sorted(queue)
    expected, expected_hubs = greedy_fill(corpus, candidates, AnchorFinder(corpus, keywords), per_page, per_target)
    assert [(item.source, item.target, item.score, item.anchor) for item in queue] == expected
    assert max(Counter(item.source for item in queue).values()) <= per_page
    assert max(Counter(item.target for item in queue).values()) <= per_target
    assert hubs == expected_hubs
    for target in hubs:
        assert Counter(item.target for item in queue)[target] == per_target


def test_the_compiled_walk_fills_the_same_queue_a_few_rows_at_a_time(ranked_site: tuple[Corpus, Keywords],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """fill.py's loop stops when its rows taken fill their buffer (they go into the queue), when its tables of the
    anchors used and of the later rows would pass half full (they grow), when its heap of rows waiting is full (it
    grows), and when the first row waiting was not searched yet; and is handed the rows a block at a time: with room
    for two, blocks of three, tables of four slots and a heap of one at first, its queue and hubs are still the
    reference's."""
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    monkeypatch.setattr(fill, "OUT_ROWS", 2)
    monkeypatch.setattr(score, "FILL_ROWS_AT_ONCE", 3)
    monkeypatch.setattr(fill, "USED_SLOTS", 4)
    monkeypatch.setattr(fill, "HEAP_ROWS", 1)
    grown, later = [], []
    monkeypatch.setattr(fill, "_placed", lambda *tables, real=fill._placed: grown.append(len(tables[2])) or real(*tables))
    monkeypatch.setattr(fill, "_remember", lambda *table, real=fill._remember: later.append(len(table[2])) or real(*table))
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 2, 2)
    expected, expected_hubs = greedy_fill(corpus, candidates, AnchorFinder(corpus, keywords), 2, 2)
    assert len(queue) > 6 and [(item.source, item.target, item.score, item.anchor) for item in queue] == expected
    assert hubs == expected_hubs and grown[:2] == [8, 16] and sum(later) > 4


def test_a_target_gets_one_anchor_text_from_two_pages_at_most_the_title_fallback_too(
        ranked_site: tuple[Corpus, Keywords]) -> None:
    """Every source may link every target: a target's title fallback, which editors write on no page, would be
    suggested from page after page; it is shown on two pages at most, and the other sources take their next pair."""
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    queue, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), len(corpus), len(corpus))
    assert_sorted(queue)
    anchors = Counter((item.anchor.text.lower(), item.target) for item in queue)
    assert max(anchors.values()) == fill.SAME_ANCHOR_PAGES and 0 < len(queue) < len(candidates)
    assert sum(item.anchor.source == "title" for item in queue) >= 2
    expected, _ = greedy_fill(corpus, candidates, AnchorFinder(corpus, keywords), len(corpus), len(corpus))
    assert [(item.source, item.target, item.score, item.anchor) for item in queue] == expected


def test_a_row_the_queue_takes_past_its_sources_first_has_the_anchor_a_search_of_it_alone_finds(
        tmp_path: Path) -> None:
    """rank holds the anchors of each source's first max_per_page candidates only, and finds the others' again when a
    full target lets the queue take them. With one suggestion a source and one a target, every row shows its first
    anchor (no other row of the queue can have used it)."""
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    candidates = every_pair(corpus, keywords)
    finder = AnchorFinder(corpus, keywords)
    scores = score._scored(corpus, Candidates.of(candidates), finder, 1, False).scores
    place, seen = {}, Counter()  # each pair's place among its source's candidates, in queue order
    for row in sorted(range(len(candidates)), key=lambda row: (-scores[row], candidates[row].target)):
        place[candidates[row].source, candidates[row].target] = seen[candidates[row].source]
        seen[candidates[row].source] += 1
    queue, hubs = ranked(corpus, candidates, finder, 1, 1)
    later = [item for item in queue if place[item.source, item.target] >= 1]
    assert hubs and sum(item.anchor.source == "text" for item in later) >= 3
    for item in queue:
        first, text = finder.anchors(item.source, item.target)[0], corpus.texts[item.source]
        if first.offset is not None:  # shown with the word that completes its phrase, if one does (anchors.completion)
            shown = text[first.offset:anchors.completion(text, first.offset, first.offset + len(first.text))]
            assert item.anchor.text in (first.text, shown) and item.anchor.offset == first.offset
            first = Anchor(item.anchor.text, "text", first.strength, first.offset, first.context)
        assert item.anchor == first


def test_max_per_page_keeps_exactly_the_best(ranked_site: tuple[Corpus, Keywords]) -> None:
    corpus, keywords = ranked_site
    candidates = [c for c in every_pair(corpus, keywords) if c.source == 0]
    assert len(candidates) >= 5
    full, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 10, 10)
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 3, 10)
    assert [(item.target, item.score) for item in queue] == [(item.target, item.score) for item in full[:3]]
    assert hubs == {}


def test_a_target_every_peer_links_scores_peer_links_weight_more(ranked_site: tuple[Corpus, Keywords]) -> None:
    """The score's peer term: the share of the source's peers that link the target, times PEER_LINKS_WEIGHT."""
    corpus, keywords = ranked_site
    candidates = [c for c in every_pair(corpus, keywords) if c.source == 0]
    every = candidates[0].target  # every peer links it; half of them link the odd targets
    linked = [dataclasses.replace(c, peer_links=PEERS if c.target == every else PEERS // 2 if c.target % 2 else 0)
              for c in candidates]
    before, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 10, 10)
    after, _ = ranked(corpus, linked, AnchorFinder(corpus, keywords), 10, 10)
    gain = {item.target: -item.score for item in before}
    for item in after:
        gain[item.target] += item.score
    share = {c.target: c.peer_links / PEERS for c in linked}
    assert gain == pytest.approx({target: score.PEER_LINKS_WEIGHT * share[target] for target in gain}, abs=2e-4)
    assert share[every] == 1 and gain[every] > 0


def test_max_per_target_keeps_exactly_the_best_and_reports_the_hub(ranked_site: tuple[Corpus, Keywords]) -> None:
    corpus, keywords = ranked_site
    finder, pairs = AnchorFinder(corpus, keywords), every_pair(corpus, keywords)
    target = max(range(len(corpus)),  # the page most sources may link with a phrase of their own, not only its title
                 key=lambda page: sum(finder.anchors(c.source, page)[0].source == "text" for c in pairs if c.target == page))
    candidates = [c for c in pairs if c.target == target]
    wanted = len(candidates)
    assert wanted >= 5
    full, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, wanted)
    assert len(full) >= 3 and hubs == {}  # not every source: their anchors (see the test above)
    queue, hubs = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, 2)
    assert [(item.source, item.score) for item in queue] == [(item.source, item.score) for item in full[:2]]
    assert hubs == {target: wanted}


@pytest.mark.parametrize("per_page", [1, 2, 4])
def test_the_default_hub_cap_keeps_every_target_within_its_share(ranked_site: tuple[Corpus, Keywords], per_page: int) -> None:
    parameter = inspect.signature(rank).parameters["max_per_target"]
    if parameter.default is inspect.Parameter.empty:
        pytest.skip("rank has no default per-target cap")
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    queue, hubs, cap = rank(corpus, Candidates.of(candidates), AnchorFinder(corpus, keywords), per_page)
    assert cap >= score.MIN_CAP
    assert cap == score.MIN_CAP or cap <= score.MAX_TARGET_SHARE * len(queue)
    assert max(Counter(item.target for item in queue).values()) <= cap
    assert (queue, hubs) == ranked(corpus, candidates, AnchorFinder(corpus, keywords), per_page, cap)


@pytest.mark.parametrize("share, fills", [(0.16, 2), (0.3, 1)])
def test_the_default_hub_cap_is_the_largest_that_holds(ranked_site: tuple[Corpus, Keywords], monkeypatch: pytest.MonkeyPatch,
                                                       share: float, fills: int) -> None:
    """rank jumps from a cap to the one its queue allows, and fills again only where that holds a target back: the cap
    it ends on holds, one more does not, and the queue is the one that cap fills. (A share of 2% gives this small
    site MIN_CAP at once: at these shares its first cap is one its queue does not allow, and at 0.16 the next binds.)"""
    monkeypatch.setattr(score, "MAX_TARGET_SHARE", share)
    filled = []
    fill = score.Ranked.fill
    monkeypatch.setattr(score.Ranked, "fill", lambda self, *caps: filled.append(caps) or fill(self, *caps))
    corpus, keywords = ranked_site
    candidates = every_pair(corpus, keywords)
    places = sum(min(count, 4) for count in Counter(candidate.source for candidate in candidates).values())
    queue, hubs, cap = rank(corpus, Candidates.of(candidates), AnchorFinder(corpus, keywords), 4)
    assert cap < int(share * places) and len(filled) == fills
    assert cap == score.MIN_CAP or cap <= share * len(queue)
    assert (queue, hubs) == ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, cap)
    wider, _ = ranked(corpus, candidates, AnchorFinder(corpus, keywords), 4, cap + 1)
    assert cap + 1 > share * len(wider)


def test_the_same_anchor_points_at_a_target_from_two_pages_at_most(tmp_path: Path) -> None:
    built = blog_site(tmp_path / "twins.db", SLUGS, links=False)
    original = prose("aeropress-recipes")
    twins = [built.page(f"/blog/zz-twin-{n}/", original.title, "\n".join(f"{line} Twin {n}." for line in original.text.split("\n")))
             for n in (1, 2)]  # the words of /blog/aeropress-recipes/, each line ended apart (a line on three pages is template)
    corpus = built.corpus()
    keywords = Keywords(corpus.texts)
    finder = AnchorFinder(corpus, keywords)
    sources = [corpus.urls.index(url("/blog/aeropress-recipes/")), *(corpus.urls.index(twin) for twin in twins)]
    target = next(t for t in range(len(corpus)) if t not in sources and finder.anchors(sources[0], t)[0].source == "text")
    options = [anchor.text for anchor in finder.anchors(sources[0], target)]
    assert all([anchor.text for anchor in finder.anchors(source, target)] == options for source in sources)  # alone, all would take one
    candidates = [Candidate(source=s, target=target, similarity=0.6, lexical=0.1, template_linked=False) for s in sources]
    queue, _ = ranked(corpus, candidates, finder, 4, 4)
    anchors = {item.source: item.anchor.text for item in queue}
    assert anchors[sources[0]] == anchors[sources[1]] == options[0] and fill.SAME_ANCHOR_PAGES == 2
    assert anchors[sources[2]] == next(text for text in options if text.lower() != options[0].lower())


def test_rounded_rounds_as_python_does_near_halves_too() -> None:
    """score.rounded (the queue's scores and strengths, at numpy's speed) gives round(value, 4) for every value: random
    ones, and the decimal halves (0.00005, 0.00025, ...), which binary holds only approximately and numpy's rint(value *
    10^4) rounds the other way in four cases of ten; and those that binary holds (0.03125, rounded half to even)."""
    rng = np.random.default_rng(7)
    halves = np.concatenate([(np.arange(30_000) + 0.5) / 1e4, [0.03125, -0.03125, 0.46875]])
    values = np.concatenate([rng.uniform(-3, 3, 100_000), rng.uniform(0, 1, 10_000).astype(np.float32), halves,
                             -halves, np.nextafter(halves, 10), np.nextafter(halves, -10)])
    python = [round(value, 4) for value in values.tolist()]
    assert (np.rint(values * 1e4) / 1e4).tolist() != python  # what the test is for
    assert score.rounded(values).tolist() == python


def test_the_queue_held_as_columns_reads_back_the_suggestions_it_was_given() -> None:
    """score.Queue keeps a text anchor as spans and slices it and its sentence again when read: every suggestion reads
    back equal to the one made as an object (its sentence by with_context), by index, slice, iteration and comparison,
    and so do the fields the export reads without making the objects."""
    texts = ["Intro line.\nRead about raw pointers here. Then more.", "Second page, no sentence end", "x"]
    names = ["First page", "A very long name of the second page here, with many more words than most", "Third"]
    made = [Suggestion(0, 1, 0.5625, 1.2345, anchors.with_context(Anchor("raw pointers", "text", 0.75, 23), texts[0]), True),
            Suggestion(1, 0, 0.25, 1.0, anchors.with_context(Anchor("no sentence", "text", 0.5, 13), texts[1]), False),
            Suggestion(2, 1, 0.125, 0.5, Anchor(title_anchor(names[1]), "title", 0.0), False)]
    def queue_of(items: list[Suggestion]) -> score.Queue:
        queue = score.Queue(texts, names)
        queue.extend(*zip(*[(item.source, item.target, item.similarity, item.score, *(item.anchor.span or (-1, -1)),
                             item.anchor.strength, item.template_linked) for item in items]))
        return queue
    queue = queue_of(made)
    assert made[0].anchor.context == "Read about raw pointers here." and made[1].anchor.context == texts[1]
    assert list(queue) == made and queue == made and queue[1] == made[1] and queue[-1] == made[2] and queue[:2] == made[:2]
    assert len(queue) == 3 and queue[2].anchor.text == "A very long name" and queue[2].anchor.context is None
    assert list(score.records(queue)) == list(score.records(made))  # the export's fields, read from the columns or the objects
    backwards = queue_of(made[::-1])  # made is by (source, target): the export's key order
    assert list(score.records(backwards, by_pair=True)) == list(score.records(made[::-1], by_pair=True)) == list(score.records(made))
    with pytest.raises(IndexError):
        queue[3]
    assert not score.Queue(texts, names)


def test_the_queue_s_compiled_sentences_are_sentence_at_s_at_every_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    """contexts.sentences_at (the queue's sentences, compiled, a block of texts at a time) answers as
    linkspider.sentences.sentence_at does, at every offset of random texts made of what makes and breaks a sentence:
    closing marks, list markers, line breaks, white space the regular expression's \\s takes (no-break, ideographic,
    line separator, NEL), a lone surrogate; a negative offset (a title anchor) has none."""
    rng = random.Random(7)
    alphabet = ["a", "b", " ", ".", "!", "?", "\n", '"', "'", ")", "]", "\u201d", "\u2019", "\t", "\u00a0", "x.", "-",
                "\n- ", ".\n  - ", "\n\n", "\r", "\x85", "\u2028", "\u3000", "\ud800", "\u00e9"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    pairs = [(page, offset) for page, text in enumerate(texts) for offset in range(len(text) + 1)]
    rng.shuffle(pairs)
    pairs.append((1, -1))
    sources, offsets = np.array(pairs).T
    monkeypatch.setattr(contexts, "PAGES_AT_ONCE", 100)  # many blocks, in both threads
    starts, ends = contexts.sentences_at(texts, sources, offsets)
    expected = [sentence_at(texts[page], offset) if offset >= 0 else (-1, -1) for page, offset in pairs]
    assert list(zip(starts.tolist(), ends.tolist())) == expected
    assert sum(start != offset for (_, offset), (start, _) in zip(pairs, expected)) > 10_000  # most inside a sentence


def test_the_fill_s_compiled_anchor_keys_are_the_reference_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """anchor_keys.anchor_keys (what Ranked.fill asks of each text anchor, compiled, a block of sources at a time)
    answers as the Python reference anchor_keys_of does, on random texts made of what glues words, completes a phrase,
    and changes in lower case: a dotted or double-colon word after an anchor, brackets and quotes, white space the
    regular expression's \\s takes, letters past ASCII, U+0130 (two code points in lower case), the capital sigma (its
    lower case depends on its neighbours), digits \\d takes and one it does not, an emoji, a lone surrogate; anchors
    that are a link's text. And the reference is what the fill compared: the key of the lower-case phrase, whole words
    (anchors.splits_a_word), a word that may complete it (anchors.COMPLETING_WORD), a link of the same text."""
    rng = random.Random(11)
    alphabet = ["a", "Zb", " ", " ", "Q1", "_", "-", "'", "\u2019", ".", ",", ";", ":", "::", "!", "?", "(", ")", "[", "]",
                '"', "\u201c", "\u201d", "\u2018", "\u2013", "\u2014", "\u2026", "\n", "\t", "\u00a0", "\u3000", "\u00c9t\u00e9",
                "\u0130", "\u03a3", "\u03c3", "\u00b2", "\u0661", "\U0001f600", "\ud800", ". ", ": ", " x", "/", " 1,", " \u0661."]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    links = [sorted(tuple(sorted(rng.sample(range(len(text) + 1), 2))) for _ in range(rng.randint(0, 3))) if len(text) > 1
             else [] for text in texts]
    texts[0], links[0] = "\u0130 ab, i\u0307 ab", [(0, 4)]  # the same in lower case ("i\u0307 ab"), not as long: no link's text
    rows = [(0, [6, -1, -1], [11, -1, -1])]  # (source, starts, ends): three anchors a pair, or none (-1); some a link's text
    for page, text in enumerate(texts):
        for _ in range(rng.randint(0, 3) if text else 0):
            spans = [rng.choice(links[page]) if links[page] and rng.random() < 0.3 else tuple(sorted(rng.sample(range(len(text) + 1), 2)))
                     for _ in range(3)]
            spans = [(start, end) if end > start and rng.random() < 0.8 else (-1, -1) for start, end in spans]
            rows.append((page, [start for start, _ in spans], [end for _, end in spans]))
    rng.shuffle(rows)
    spans = Spans.per_page(links)
    link_keys = np.zeros(len(spans.spans), np.uint64)
    monkeypatch.setattr(anchor_keys, "PAGES_AT_ONCE", 100)  # many blocks, in both threads
    keys, flags = anchor_keys.anchor_keys(texts, np.array([page for page, _, _ in rows]), np.array([s for _, s, _ in rows], np.int32),
                                          np.array([e for _, _, e in rows], np.int32), spans, link_keys)
    assert [(list(k), list(f)) for k, f in zip(keys.tolist(), flags.tolist())] == [
        anchor_keys.anchor_keys_of(texts[page], starts, ends, links[page]) for page, starts, ends in rows]
    covered = sorted({page for page, _, _ in rows})
    assert [link_keys[spans.starts[page]:spans.starts[page + 1]].tolist() for page in covered] == [
        anchor_keys.phrase_keys([texts[page][a:b].lower() for a, b in links[page]]).tolist() for page in covered]
    counts = Counter(flag for row in flags.tolist() for flag in row)
    assert all(counts[flag] > 20 for flag in (anchor_keys.SHOWN, anchor_keys.MAY_COMPLETE, anchor_keys.LINKED))
    page, starts, ends = next(row for row in rows if "\u03a3" in texts[row[0]] and row[1][0] >= 0)
    text, start, end = texts[page], starts[0], ends[0]
    assert anchor_keys.anchor_keys_of(text, [start], [end], links[page]) == ([anchor_keys.phrase_key(text[start:end].lower())], [
        (0 if anchors.splits_a_word(text, start, end) else anchor_keys.SHOWN)
        | (anchor_keys.MAY_COMPLETE if anchors.COMPLETING_WORD.match(text, end) else 0)
        | (anchor_keys.LINKED if any(b - a == end - start and text[a:b].lower() == text[start:end].lower() for a, b in links[page]) else 0)])


def test_queue_anchors_repeat_on_two_pages_at_most_and_stay_apart_per_source(tmp_path: Path) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    queue, _ = ranked(corpus, every_pair(corpus, keywords), AnchorFinder(corpus, keywords), 4, 6)
    text_anchors = Counter((item.anchor.text.lower(), item.target) for item in queue if item.anchor.source == "text")
    assert text_anchors and max(text_anchors.values()) <= fill.SAME_ANCHOR_PAGES
    for source in {item.source for item in queue}:
        spans = sorted(item.anchor.span for item in queue if item.source == source and item.anchor.span)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_a_name_that_one_page_has_names_that_page() -> None:
    names = ["DROP TRIGGER", "DROP EVENT TRIGGER", "Examples", "examples", "Ninja Multi-Config"]
    keys, pages = fill._page_named(names)
    assert dict(zip(keys.tolist(), pages.tolist())) == {anchor_keys.phrase_key(name): page for name, page in (
        ("drop trigger", 0), ("drop event trigger", 1), ("ninja multi-config", 4))}


def test_direction_follows_the_sites_own_links_in_time() -> None:
    def corpus(dates: list[str], links: set[tuple[int, int]]) -> Corpus:
        return plain_corpus([""] * len(dates), ["t"] * len(dates), published=dates, content_codes=pair_codes(links, len(dates)))
    dates = ["2020-01-01", "2021-01-01", "2022-01-01", "2023-01-01", None]
    sources, targets = np.array([0, 3, 0, 4]), np.array([3, 0, 4, 0])  # forward, backward, undated, undated
    backward = score.direction(corpus(dates, {(1, 0), (2, 0), (2, 1), (3, 2)}), sources, targets)
    assert backward[0] == pytest.approx(2 * 1 / 6 - 1) and list(backward[1:]) == [0, 0, 0]
    both = score.direction(corpus(dates, {(1, 0), (0, 1)}), sources, targets)
    assert both[0] == 0  # a site that links both ways leans neither way
    assert score.direction(corpus(dates, set()), sources, targets)[0] == 0  # no evidence, no lean
