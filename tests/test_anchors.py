"""Stage 5b, anchors: analysis/anchors.py, windows.py, phrases.py, words.py, series.py, citations.py and
vague.py, on small crawl databases written by hand (handmade.py), with exact expectations.

Weights and constants of analysis/score.py and analysis/anchors.py are still being tuned, so these tests check
mechanisms (what is excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from analysis import anchors, pipeline
from analysis.anchors import CHOOSES, RANKS, SHORTER_ANCHOR, Anchor, AnchorFinder, Found
from analysis.candidates import Candidate, Candidates
from analysis.citations import Citations
from analysis.index import Keywords
from analysis.load import Corpus, Spans, template_lines
from analysis.names import WrittenName, compared_words, page_names, said_spans, title_anchor, title_heads
from analysis.phrases import MAX_WORDS, MIN_WORDS, phrases_of, version_numbers, web_addresses
from analysis.score import rank
from analysis.series import Series
from analysis.vague import is_vague, vague_links
from analysis.windows import WINDOWS_AT_FIRST, choose, cuts_a_collocation, runs_held, spoken_words, strong_windows, strongest
from analysis.words import (ARTICLES, CLAUSE_WORDS, COPULAS, PHRASE_BREAKS, PHRASE_JOINERS, WORD, TokenFile, Tokens,
                            Vocabulary, is_stop_word, run_hashes, stem, terms, word_counts)
from handmade import RANK_SLUGS, SLUGS, Site, blog_site, every_pair, plain_corpus, prose, ranked, url
from linkspider.sentences import sentence_at, sentence_spans


# Not a word of English, so no coffee post mentions any of it.
LOREM_TITLE = "Lorem Ipsum Dolor Sit Amet Consectetur Adipiscing"


LOREM = " ".join([
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed eiusmod tempor incididunt ut labore et dolore",
    "magna aliqua. Quis nostrud exercitation ullamco laboris nisi aliquip commodo consequat. Duis aute irure",
    "reprehenderit voluptate velit esse cillum fugiat nulla pariatur. Excepteur sint occaecat cupidatat non",
    "proident, sunt culpa qui officia deserunt mollit anim id est laborum. Curabitur pretium tincidunt lacus,",
    "nulla gravida orci. Pellentesque habitant morbi tristique senectus netus malesuada fames turpis egestas.",
])


def page_numbers(corpus: Corpus) -> dict[str, int]:
    """Each page's number in the corpus, by its path ("/notes/")."""
    return {urlsplit(address).path: page for page, address in enumerate(corpus.urls)}


def test_a_link_anchored_on_here_is_vague_and_gets_the_phrase_of_its_sentence_that_names_its_target(site: Site) -> None:
    for i, slug in enumerate(["french-press-guide", "aeropress-recipes", "chemex-guide", "milk-steaming", *RANK_SLUGS[5:]]):
        site.post(f"/p{i}/", slug)
    text = ("Steamed milk wants a cold jug and a steady hand on the wand. " * 8
            + "For silky foam, read here about pouring latte art basics. Then read more.\n"
            + "Our Chemex notes sit on another page. See this link for pouring.\n"
            + "Three AeroPress recipes worth learning wait in the kitchen.\n"  # names /p1/, outside its link's sentence
            + "Cold jugs help too: see this post on latte art basics.")
    site.page("/notes/", "Milk notes", text)
    site.link("/notes/", "/p3/", "here", offset=text.index("here about"))  # vague, its sentence names the target
    site.link("/notes/", "/p1/", "read more")  # vague, its sentence names nothing (another does)
    site.link("/notes/", "/p2/", "Chemex notes")  # descriptive
    site.link("/notes/", "/p2/", "this link")  # vague; the phrase that names it is linked already
    site.link("/notes/", "/p3/", "this post")  # vague; the word that would complete its better anchor is a link
    site.link("/notes/", "/p0/", "basics", offset=text.rindex("basics"))
    corpus = site.corpus()
    links = vague_links(site.db, corpus, AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles)))
    notes = corpus.index[url("/notes/")]
    assert [(corpus.urls[link.target], link.anchor) for link in links] == [
        (url("/p3/"), "here"), (url("/p1/"), "read more"), (url("/p2/"), "this link"), (url("/p3/"), "this post")]
    assert all(link.source == notes and text[link.offset:].startswith(link.anchor)
               and text[link.context_offset:].startswith(link.context) for link in links)
    assert [link.context for link in links] == ["For silky foam, read here about pouring latte art basics.",
                                                "Then read more.", "See this link for pouring.",
                                                "Cold jugs help too: see this post on latte art basics."]
    assert [link.better for link in links] == ["latte art basics", None, None, "latte art"]  # whole (anchors.completion)
    assert text[links[0].better_offset:].startswith("latte art basics.")
    assert [is_vague(anchor) for anchor in ("Here", " here. ", "Read more…", "(this post)", "here we go", "Chemex")] == [
        True, True, True, True, False, False]


def test_the_stemmer_matches_plurals_and_tenses_but_not_words_that_only_end_alike() -> None:
    assert terms("grinders brewing brewed lifetimes strings string's") == ["grinder", "brew", "brew", "lifetime", "string", "string"]
    assert stem("news") != stem("new")  # the page "News" is not named by "new APIs"
    assert stem("string") != stem("str")  # nor is Rust's `str` page by "string"
    assert stem("spring") == "spring" and stem("building") == "build"  # "-ing" goes where a vowel is left


def assert_text_anchor(corpus: Corpus, source: int, anchor: Anchor) -> None:
    text = corpus.texts[source]
    words = WORD.findall(anchor.text)
    assert 2 <= len(words) <= 6, anchor
    assert text[anchor.offset:anchor.offset + len(anchor.text)] == anchor.text
    assert not is_stop_word(words[-1]), anchor
    if is_stop_word(words[0]):  # an article, before a word that is none, at the start of a phrase that ends there
        assert spelled(words[0], ARTICLES) and not is_stop_word(words[1]), anchor
        after = re.match(rf"([{re.escape(PHRASE_JOINERS)}])({WORD.pattern})", text[anchor.offset + len(anchor.text):])
        assert after is None or breaks_a_phrase(after[2]), (anchor, after)
    assert not any(spelled(word.replace("\u2019", "'"), CLAUSE_WORDS) for word in words), anchor  # a clause
    assert all(words[at + 1].lower().endswith("ed") for at, word in enumerate(words) if spelled(word, COPULAS)), anchor
    start, end = sentence_at(text, anchor.offset, sentence_spans(text))  # from all spans: not the line-local scan anchors use
    assert anchor.context == text[start:end] and anchor.text in anchor.context
    assert anchor.offset + len(anchor.text) <= end
    for link in corpus.link_spans[source]:
        assert not (anchor.span[0] < link[1] and link[0] < anchor.span[1]), (anchor, link)


def preferences(corpus: Corpus, finder: AnchorFinder, source: int, target: int, shown: list[Anchor]) -> list[tuple[bool, float]]:
    """What windows.choose orders a pair's anchors by: whether each cuts none of the site's collocations, then its
    strength less SHORTER_ANCHOR of the pair's strongest window by the weights that choose it (TargetTerms.weights[
    CHOOSES]) for each word a reader counts ("Rust 1.32.0" is two)."""
    phrases = phrases_of(corpus, finder.keywords, [source])
    only = np.zeros(1, dtype=np.int64)
    matches = finder._matches(phrases, only, np.full(1, source), np.full(1, target), finder.target_terms(np.array([target])))
    _, _, pair, strength, ending = finder._windows(phrases, [corpus.texts[source]], only, np.full(1, target), matches, CHOOSES)
    best = np.zeros(1, dtype=np.float32)
    strongest(pair, strength, ending, best)
    spoken = re.compile(rf"{WORD.pattern}(?:\.{WORD.pattern})*")
    first, last = (np.searchsorted(phrases.starts, [anchor.span[0] for anchor in shown]),
                   np.searchsorted(phrases.ends, [anchor.span[1] for anchor in shown]))
    return [(not cuts_a_collocation(start, end, phrases.collocated),
             anchor.strength - SHORTER_ANCHOR * float(best[0]) * len(spoken.findall(anchor.text)))
            for anchor, start, end in zip(shown, first.tolist(), last.tolist())]


def test_every_anchor_is_a_phrase_of_the_source_or_the_title(tmp_path: Path) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    assert sum(len(spans) for spans in corpus.link_spans) > 50
    finder = AnchorFinder(corpus, Keywords(corpus.texts))
    text_anchors = 0
    for source in range(len(corpus)):
        for target in range(len(corpus)):
            if source == target:
                continue
            anchors = finder.anchors(source, target)
            assert anchors[-1] == Anchor(title_anchor(corpus.titles[target]), "title", 0.0)
            assert all(anchor.source == "text" for anchor in anchors[:-1])
            preference = preferences(corpus, finder, source, target, anchors[:-1])
            assert all(first[0] > second[0] or first[0] == second[0] and first[1] >= second[1] - 1e-4
                       for first, second in zip(preference, preference[1:]))  # shorter of near-equals first
            for anchor in anchors[:-1]:
                assert_text_anchor(corpus, source, anchor)
                text_anchors += 1
            spans = sorted(anchor.span for anchor in anchors[:-1])
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # alternatives never overlap
    assert text_anchors > 100


def test_the_anchor_search_in_blocks_on_threads_finds_what_one_search_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    pairs = Candidates.of(every_pair(corpus, keywords))
    monkeypatch.setattr(anchors, "THREADS", 1)
    monkeypatch.setattr(anchors, "BLOCK_WORDS", 10 ** 9)
    whole = AnchorFinder(corpus, keywords).search_all(pairs.source, pairs.target)
    assert (whole.starts[:, 0] >= 0).sum() > 100
    for threads, texts in ((2, corpus.texts), (4, corpus.texts), (2, list(corpus.texts))):  # a copy: each block split again
        monkeypatch.setattr(anchors, "THREADS", threads)
        monkeypatch.setattr(anchors, "BLOCK_WORDS", 300)  # a page or two a block
        found = AnchorFinder(corpus, Keywords(texts)).search_all(pairs.source, pairs.target)
        for name in ("starts", "ends", "strengths", "best"):
            assert np.array_equal(getattr(found, name), getattr(whole, name)), name


def test_the_best_alone_is_the_best_of_every_window_whichever_windows_anchors_py_drops() -> None:
    """strong_windows' best_only on random pairs of random words: the strongest window that counts (choose: none that
    starts on an article) is the same as among every window, whether anchors.py keeps all windows or drops each title
    only window and each that holds a version number (other_versions may): only a window that surely counts may
    raise the bound that skips others."""
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(60):
        words, pairs = 80, 6
        stop = rng.random(words) < 0.3
        article = stop & (rng.random(words) < 0.5)
        term = np.where(stop, -1, rng.integers(0, 12, words))
        previous_same = np.full(words, -1)
        for word in range(words):
            earlier = np.flatnonzero(term[:word] == term[word]) if term[word] >= 0 else []
            previous_same[word] = earlier[-1] if len(earlier) else -1
        versioned = rng.random(words) < 0.1
        own = rng.random(words) < 0.1
        valid = rng.random((words, MAX_WORDS - MIN_WORDS + 1)) < 0.7
        valid &= np.arange(words)[:, None] + np.arange(MIN_WORDS, MAX_WORDS + 1) <= words  # within the page
        codes, weights, rare, titled = [], [], [], []
        for pair in range(pairs):
            term_weight = rng.random(12).astype(np.float32) * 0.5
            term_rare, term_titled = rng.random(12) < 0.3, rng.random(12) < 0.5
            for word in np.flatnonzero(~stop & (rng.random(words) < 0.5)):
                codes.append(pair * words + word)
                weights.append(term_weight[term[word]])
                rare.append(term_rare[term[word]])
                titled.append(term_titled[term[word]])
        count, versioned_before = len(codes), np.concatenate([[0], np.cumsum(versioned)])
        seeds = np.array(rare) | np.array(titled) & (rng.random(count) < 0.5)  # a title word of a whole_title target
        arguments = (np.array(codes), np.array(weights, dtype=np.float32), np.array(rare), seeds, np.array(titled),
                     np.zeros(count, dtype=bool), own[np.array(codes) % words], rng.random(count) < 0.5,
                     rng.integers(1, 3, pairs) * (rng.random(pairs) < 0.5), rng.random(pairs) < 0.3, words, valid, np.concatenate([[0], np.cumsum(~stop)]), article,
                     np.concatenate([[0], np.cumsum(rng.random(words) < 0.2)]),  # words that say when
                     np.concatenate([[0], np.cumsum(own)]),
                     previous_same, versioned_before)
        every, best_only = strong_windows(*arguments, False), strong_windows(*arguments, True)
        for drop in (False, True):
            strongest = []
            for first, last, pair, strength, title_only, ending in (every, best_only):
                counted = (ending != 1) & ~(drop & (title_only | (versioned_before[last + 1] > versioned_before[first])))
                best = np.zeros(pairs, dtype=np.float32)
                np.maximum.at(best, pair[counted], strength[counted])
                strongest.append(best)
            assert np.array_equal(*strongest)
            compared += int((strongest[0] > 0).sum())
        assert len(best_only[0]) <= len(every[0])
    assert compared > 200


def test_a_search_that_chooses_the_anchors_of_some_pairs_finds_every_pairs_best_and_their_anchors(tmp_path: Path) -> None:
    """search_blocks with select (score.py's, each source's first few): every pair's best strength, name_said and
    whether it is anchorable, and the anchors of the pairs selected, as a search of all finds them; the others' anchors
    are not chosen. A pair that is not anchorable has no text anchor (Ranked._row searches it no more)."""
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts)
    pairs = Candidates.of(every_pair(corpus, keywords))
    finder = AnchorFinder(corpus, keywords)
    whole = finder.search_all(pairs.source, pairs.target)
    asked: list[np.ndarray] = []

    def every_third(rows: np.ndarray, found: Found) -> np.ndarray:
        assert np.array_equal(found.best, whole.best[rows]) and np.array_equal(found.name_said, whole.name_said[rows])
        assert np.array_equal(found.anchorable, whole.anchorable[rows])
        asked.append(rows)
        return np.arange(len(rows))[rows % 3 == 0][::-1]  # in any order

    for rows, found, chosen in finder.search_blocks(pairs.source, pairs.target, every_third):
        assert np.array_equal(np.sort(rows[chosen]), np.sort(rows[rows % 3 == 0]))
        for name in ("best", "name_said", "starts", "ends", "strengths"):
            assert np.array_equal(getattr(found, name)[chosen], getattr(whole, name)[rows[chosen]]), name
        others = np.setdiff1d(np.arange(len(rows)), chosen)
        assert (found.starts[others] == -1).all()
    assert sorted(np.concatenate(asked).tolist()) == list(range(len(pairs)))
    assert (whole.starts[::3, 0] >= 0).sum() > 30
    assert (whole.starts[~whole.anchorable] == -1).all() and (~whole.anchorable).sum() > 100
    assert (whole.starts[whole.anchorable & (whole.best == 0), 0] >= 0).any()  # windows on an article: best 0, an anchor


def test_the_anchor_search_finds_the_same_once_the_keyword_matrix_is_dropped(tmp_path: Path) -> None:
    """propose frees the TF-IDF matrix before rank, the stage of the peak: the finder takes each page's topic words
    when it is made, and nothing of its search reads the matrix after."""
    corpus = blog_site(tmp_path / "all.db", SLUGS).corpus()
    keywords = Keywords(corpus.texts, corpus.titles)
    pairs = Candidates.of(every_pair(corpus, keywords))
    expected = AnchorFinder(corpus, keywords).search_all(pairs.source, pairs.target)
    finder = AnchorFinder(corpus, keywords)
    keywords.drop_matrix()
    with pytest.raises(AttributeError):
        keywords.nearest(3)
    found = finder.search_all(pairs.source, pairs.target)
    assert (expected.starts[:, 0] >= 0).sum() > 100
    for name in ("starts", "ends", "strengths", "best", "name_said"):
        assert np.array_equal(getattr(found, name), getattr(expected, name)), name


def test_the_title_is_the_anchor_when_the_source_never_mentions_the_target(tmp_path: Path) -> None:
    built = blog_site(tmp_path / "lorem.db", SLUGS[:10], links=False)
    built.page("/lorem/", LOREM_TITLE, LOREM)
    corpus = built.corpus()
    target = corpus.urls.index(url("/lorem/"))
    lorem_terms = set(terms(f"{LOREM_TITLE} {LOREM}"))
    finder = AnchorFinder(corpus, Keywords(corpus.texts))
    fallback = Anchor(LOREM_TITLE, "title", 0.0)  # the title: seven words, as it is
    assert title_anchor(LOREM_TITLE) == fallback.text
    sources = [s for s in range(len(corpus)) if s != target]
    for source in sources:
        assert not lorem_terms & set(terms(corpus.texts[source]))
        assert finder.anchors(source, target) == [fallback]
    candidates = [Candidate(source=s, target=target, similarity=0.6, lexical=0.0, template_linked=False) for s in sources[:3]]
    queue, _ = ranked(corpus, candidates, finder, 4, 4)  # and the third source not: the title on two pages at most
    assert [(item.source, item.anchor.text, item.anchor.source, item.anchor.offset) for item in queue] == [
        (source, fallback.text, "title", None) for source in sources[:2]]


def filler_site(site: Site, topic: str, pages: list[tuple[str, str, str]],
                labels: Sequence[str] = tuple(map(str, range(12)))) -> tuple[Corpus, AnchorFinder]:
    """Eight pages of filler sentences about the topic (so its words are on every page), then these (path, title,
    sentence) pages, each with the filler before its sentence: the corpus and its anchor finder. The filler's twelve
    sentences and eight pages are told apart by the labels: numbers, unless numbers are what a test is about."""
    filler = " ".join(f"Filler sentence {label} about {topic} here." for label in labels[:12])
    for label in labels[:8]:
        site.page(f"/other-{label}/", f"Other Page {label}", f"{filler} Unusual{label} words belong to page {label} only.")
    for path, title, sentence in pages:
        site.page(path, title, f"{filler} {sentence}")
    corpus = site.corpus()
    return corpus, AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))


def test_a_source_that_writes_out_the_targets_name_takes_it_as_the_anchor(site: Site) -> None:
    """The name written out word for word is the editor's citation, whatever shorter phrase scores more a word; not
    where an existing link already holds it, and not a name of more than six words (an anchor is 2-6)."""
    filler_site(site, "deploys, queues and workers", [  # then a link, so the corpus is read again below
        ("/ambitions/", "Compiler Ambitions for 2022", "The compiler team plans incremental parsing and parallel codegen."),
        ("/cites/", "Roadmap", "Also see the Compiler Ambitions for 2022 on incremental parsing and parallel codegen."),
        ("/linked/", "Plans", "Also see the Compiler Ambitions for 2022 on incremental parsing and parallel codegen, again."),
        ("/long/", "Using OCR to Fix a Hilarious Bug", "Optical character recognition found the bug."),
        ("/cites-long/", "Office Hours", "Read Using OCR to fix a hilarious bug before the optical character recognition talk."),
    ])
    site.link("/linked/", "/elsewhere/", "Compiler Ambitions for 2022")
    corpus = site.corpus()
    finder = AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))
    target, cites, linked, long, cites_long = (corpus.urls.index(url(path)) for path in ("/ambitions/", "/cites/", "/linked/", "/long/", "/cites-long/"))
    found = finder.search_all(np.array([cites, linked, cites_long]), np.array([target, target, long]))
    assert found.name_said.tolist() == [True, True, True]
    [cited, *_], [in_link, *_], [long_name, *_] = (finder.anchors(source, to) for source, to in ((cites, target), (linked, target), (cites_long, long)))
    assert (cited.text, cited.source, cited.strength) == ("Compiler Ambitions for 2022", "text", found.best[0].round(4))
    assert corpus.texts[cites][cited.offset:cited.offset + len(cited.text)] == cited.text
    assert in_link.text != "Compiler Ambitions for 2022" and "Using OCR to fix a hilarious bug" not in long_name.text


def test_an_anchor_that_ends_on_a_possessive_ends_before_its_s(site: Site) -> None:
    """"the Zephyr edition's lints": the anchor names the edition, "Zephyr edition", not "Zephyr edition's"."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/edition/", "Zephyr Edition", "The edition changes the module system."),
        ("/source/", "Plans", "Plans for the Zephyr edition\u2019s lints came late."),
    ])
    [anchor, *_] = finder.anchors(corpus.urls.index(url("/source/")), corpus.urls.index(url("/edition/")))
    assert (anchor.text, anchor.source) == ("Zephyr edition", "text")


def test_a_name_written_out_closes_the_bracket_it_opens(site: Site) -> None:
    """A name that ends inside brackets ("... (WASI)") is matched up to its last word: the anchor takes the closing
    bracket too, or, where the text goes on inside the brackets, ends before them: no anchor leaves one open."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/wasi/", "WebAssembly System Interface (WASI)", "The interface gives WebAssembly modules a portable system."),
        ("/cites/", "Flags", "Enable the experimental WebAssembly System Interface (WASI) support with this flag."),
        ("/plain/", "Notes", "Support for the WebAssembly System Interface (WASI is not stable) came later."),
    ])
    target, cites, plain = (corpus.urls.index(url(path)) for path in ("/wasi/", "/cites/", "/plain/"))
    [cited, *_], [unclosed, *_] = finder.anchors(cites, target), finder.anchors(plain, target)
    assert cited.text == "WebAssembly System Interface (WASI)"
    assert corpus.texts[cites][cited.offset:cited.offset + len(cited.text)] == cited.text
    assert unclosed.text == "WebAssembly System Interface"


def test_the_window_scan_resumes_where_it_stopped_to_grow_its_arrays(site: Site) -> None:
    """strong_windows scans into arrays of WINDOWS_AT_FIRST windows and stops to grow them when the next seed's might
    not fit: a block of many copies of one pair finds more windows than that, and the same ones for every copy."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/target/", "Parallel Codegen Ambitions", "The compiler team plans parallel codegen."),
        ("/source/", "Notes", " ".join(f"Parallel codegen ambitions number {n} came early." for n in range(12))),
    ])
    source, target = corpus.urls.index(url("/source/")), corpus.urls.index(url("/target/"))
    copies = 200
    phrases = phrases_of(corpus, finder.keywords, [source])
    matches = finder._matches(phrases, np.zeros(copies, dtype=np.int64), np.full(copies, source), np.full(copies, target),
                              finder.target_terms(np.array([target])))
    first, last, pair, strength, *_ = strong_windows(
        matches.codes, matches.weights[RANKS], matches.rare, matches.seeds, matches.titled, matches.partial, matches.own,
        matches.sets_apart, matches.whole_title, matches.sibling, matches.words, phrases.valid, phrases.content_before, phrases.article,
        phrases.when_before,
        phrases.own_title_before, phrases.previous_same, phrases.versioned_before, False)
    assert len(first) > 2 * WINDOWS_AT_FIRST  # grown twice at least
    per_copy = np.bincount(pair, minlength=copies)
    assert (per_copy == per_copy[0]).all() and per_copy[0] > 0
    windows = np.column_stack([first, last, strength.view(np.int32)]).reshape(copies, per_copy[0], 3)
    assert (windows == windows[0]).all()


def test_a_search_for_the_best_strength_alone_skips_windows_and_finds_the_same_best(site: Site) -> None:
    """strong_windows' best_only: a window whose bound is under the strongest window its pair surely counts is not
    made, so fewer windows are made, the same strongest among them; a title only window (anchors.py may drop it) sets
    no bound, nor one that starts on an article (choose does not count it)."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/target/", "Parallel Codegen Ambitions", "The compiler team plans parallel codegen."),
        ("/source/", "Notes", "The codegen came first. " + " ".join(f"Parallel codegen ambitions number {n} came early."
                                                                     for n in range(3))),
    ])
    source, target = corpus.urls.index(url("/source/")), corpus.urls.index(url("/target/"))
    phrases = phrases_of(corpus, finder.keywords, [source])
    matches = finder._matches(phrases, np.zeros(1, dtype=np.int64), np.full(1, source), np.full(1, target),
                              finder.target_terms(np.array([target])))

    def windows(best_only: bool) -> tuple[np.ndarray, ...]:
        return strong_windows(matches.codes, matches.weights[RANKS], matches.rare, matches.seeds, matches.titled, matches.partial,
                              matches.own, matches.sets_apart, matches.whole_title, matches.sibling, matches.words, phrases.valid,
                              phrases.content_before,
                              phrases.article, phrases.when_before, phrases.own_title_before, phrases.previous_same,
                              phrases.versioned_before, best_only)

    every, best_only = windows(False), windows(True)
    counted = every[5] != 1
    assert 0 < len(best_only[0]) < counted.sum()
    assert best_only[3][best_only[5] != 1].max() == every[3][counted].max()
    assert set(zip(*best_only[:2])) <= set(zip(*every[:2]))  # the same windows, fewer


def test_a_title_of_common_words_names_its_page_only_where_it_is_written_out(site: Site) -> None:
    corpus, finder = filler_site(site, "pipelines, cargo and vendor options", [  # neither word names a page alone
        ("/vendor/", "cargo vendor", "The subcommand copies every dependency into a folder."),
        ("/says-it/", "Downloading", "Tools like cargo vendor or a mirror can be used to download code."),
        ("/apart/", "Shipping", "Every cargo ship has a vendor on board and a captain."),
        ("/reversed/", "Swapped", "The vendor cargo arrived late this week, sadly."),
        ("/plural/", "Harbour", "Two cargo vendors were busy in the harbour today."),
    ])
    assert finder.keywords.idf_of_share(1.0) == pytest.approx(finder.keywords.idf[finder.keywords.vocabulary.ids["vendor"]])
    target = corpus.urls.index(url("/vendor/"))
    says_it = corpus.urls.index(url("/says-it/"))
    anchor = finder.anchors(says_it, target)[0]
    assert (anchor.text, anchor.source) == ("cargo vendor", "text")
    assert_text_anchor(corpus, says_it, anchor)
    plural = corpus.urls.index(url("/plural/"))  # the title in the plural is the same name
    assert (finder.anchors(plural, target)[0].text, finder.anchors(plural, target)[0].source) == ("cargo vendors", "text")
    for path in ("/apart/", "/reversed/"):  # both words, but not the title
        assert finder.anchors(corpus.urls.index(url(path)), target) == [Anchor("cargo vendor", "title", 0.0)]


def test_a_name_is_written_in_a_text_exactly_where_its_pattern_says_so() -> None:
    """names_said first asks whether the hashes of the text's runs of word characters hold the name's, one after the
    other (windows.runs_held), then searches the pattern: the first test must never refuse a text the pattern accepts,
    and must refuse some. The runs hashed are those the regex \\w+ finds, in any text; a name's, those of its lower
    case (AnchorFinder hashes every name so), which are its words' (WrittenName.words, what the pattern matches)."""
    rng = np.random.default_rng(5)
    vocabulary = ["rust", "don't", "don’t", "1.26", "1.26.1", "bug-free", "bug", "free", "well", "known", "well-known", "été",
                  "Rust", "Don’t", "Été", "Well-Known"]
    gaps = [" ", ", ", "-", ".", " (", "’", "\n", "'"]
    said = refused = 0
    for _ in range(3000):
        text = "".join(str(rng.choice(vocabulary)) + str(rng.choice(gaps)) for _ in range(int(rng.integers(1, 30)))).lower()
        written = " ".join(str(word) for word in rng.choice(vocabulary, int(rng.integers(1, 4))))
        hashes, starts = run_hashes([text, written.lower()])
        name = WrittenName(tuple(compared_words(written)))
        assert run_hashes([" ".join(name.words)])[0].tolist() == hashes[starts[1]:].tolist()
        expected = next(said_spans(name.pattern, text), None)
        held = runs_held(hashes, starts, hashes, starts, np.array([0]), np.array([1]))[0]
        assert held or expected is None, (name, text)
        assert run_hashes([" ".join(re.findall(r"\w+", text))])[0].tolist() == hashes[:starts[1]].tolist()
        said += expected is not None
        refused += not held
    assert 100 < said < 2900 and refused > (3000 - said) / 2  # both answers are common; the first test gives most refusals


def with_headings(site: Site, path: str, headings: str) -> tuple[Corpus, AnchorFinder]:
    """The site's corpus read again once the page at path has these headings (one a line), and its anchor finder."""
    site.db["pages"].update(url(path), {"headings": headings})
    corpus = site.corpus()
    return corpus, AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))


def names_asked(corpus: Corpus, finder: AnchorFinder, sources: list[int], target: int) -> list[list[str]]:
    """The names and headings of the target that names_said asks of each source: those whose every word it holds."""
    phrases = phrases_of(corpus, finder.keywords, sources)
    asked: list[list[str]] = [[] for _ in sources]
    for names in (finder.said_names, finder.headings):
        for place, name in zip(*names.held(phrases, np.arange(len(sources)), np.full(len(sources), target))):
            asked[place].append(names.texts[name])
    return asked


def test_a_source_that_writes_out_the_targets_name_cites_it_and_that_pair_ranks_first(site: Site) -> None:
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/ocr/", "Using OCR to Fix a Hilarious Bug", "Optical character recognition found the bug."),
        ("/cites/", "Writing Office Hours", "Read \u201cUsing OCR to fix a hilarious bug\u201d first."),
        ("/apart/", "Scanning", "To fix a hilarious bug using OCR took time."),
        ("/close/", "Workers", "Queues and workers: deploys, deploys and workers again."),
        ("/release/", "Announcing Widget 1.26", "Widget 1.26 ships today."),
        ("/point-release/", "Point release", "Announcing Widget 1.26.1, which fixes a crash in (Announcing Widget 1.2)."),
        ("/cites-release/", "Upgrading", "As (announcing widget 1.26) said, upgrade."),
    ])
    target, cites, apart, close = (corpus.urls.index(url(path)) for path in ("/ocr/", "/cites/", "/apart/", "/close/"))
    sources = [cites, apart, close]
    assert names_asked(corpus, finder, sources, target) == [["Using OCR to Fix a Hilarious Bug"]] * 2 + [[]]  # all its words held
    found = finder.search_all(np.array(sources), np.array([target, target, target]))
    assert found.name_said.tolist() == [True, False, False]  # but only /cites/ writes out the name
    release, point, cites_release = (corpus.urls.index(url(path)) for path in ("/release/", "/point-release/", "/cites-release/"))
    said, _, _ = finder.names_said(np.array([point, cites_release]), np.array([0, 1]),
                                np.full(2, finder.said_names.texts.index("Announcing Widget 1.26")))
    assert said.tolist() == [False, True]  # "1.26.1" and "1.2" are other versions: the name's last word goes on or stops short
    words = Candidate(source=cites, target=close, similarity=0.85, lexical=0.5, template_linked=False)  # above, but for the name
    name = Candidate(source=cites, target=target, similarity=0.3, lexical=0.1, template_linked=False)
    queue, _ = ranked(corpus, [words, name], finder, 1, 4)
    assert [(item.target, item.anchor.source) for item in queue] == [(target, "text")]


def test_a_source_that_writes_out_one_of_the_targets_headings_cites_it_and_mentions_it(site: Site) -> None:
    filler_site(site, "deploys, queues and workers", [
        ("/threads/", "Using Threads to Run Code", "Threads run code at once."),
        ("/cites/", "Channels", "As \u201cCreating a New Thread with spawn\u201d shows, channels help."),
        ("/apart/", "Spawning", "A new thread is spawned by creating it with spawn."),
        ("/short/", "Pools", "Thread pools reuse threads."),
        ("/template/", "Recap", "The next steps for the release are clear."),
        ("/also-next/", "Planning", "Planning is hard."),
    ])
    site.db["pages"].update(url("/also-next/"), {"headings": "Planning\nNext steps for the release"})  # shared: the template's
    corpus, finder = with_headings(site, "/threads/", "Using Threads to Run Code\nCreating a New Thread with spawn\n"
                                                      "Thread Pools\nNext Steps for the Release")
    target = corpus.urls.index(url("/threads/"))
    sources = [corpus.urls.index(url(path)) for path in ("/cites/", "/apart/", "/short/", "/template/")]
    spawn = ["Creating a New Thread with spawn"]  # of the target's headings, the one each source holds every word of is asked
    assert names_asked(corpus, finder, sources, target) == [spawn, spawn, [], []]  # not "Thread Pools" (two words), nor the template's
    found = finder.search_all(np.array(sources), np.full(len(sources), target))
    assert found.name_said.tolist() == [True, False, False, False]  # only /cites/ writes it out; two words or a template's cite nothing
    mentions = pipeline.mentioned_pairs(corpus, finder.keywords).tolist()  # candidates whatever their similarity: most of a heading's words
    assert [source * len(corpus) + target in mentions for source in sources] == [True, True, False, False]


def test_a_heading_written_out_with_its_own_capitals_is_the_anchor(site: Site) -> None:
    """A source that writes a heading of the target as the heading does, with a capital that prose would not write,
    cites that part of the page: the heading is the anchor ("see “Custom derive Macros”"). The same words in
    the source's own prose (no such capital, or only the one that starts a sentence) count as the heading said, but the
    anchor is the search's."""
    filler_site(site, "deploys, queues and workers", [
        ("/threads/", "Using Threads to Run Code", "Threads run code at once."),
        ("/cites/", "Channels", "As “Creating a New Thread with spawn” shows, channels help."),
        ("/prose/", "Spawning", "We keep creating a new thread with spawn for each job."),
        ("/midway/", "Locks", "Read Sharing state between threads before you add a lock."),
        ("/starts/", "Mutexes", "Sharing state between threads needs a lock."),
    ])
    corpus, finder = with_headings(site, "/threads/", "Creating a New Thread with spawn\nSharing state between threads")
    target = corpus.urls.index(url("/threads/"))
    sources = [corpus.urls.index(url(path)) for path in ("/cites/", "/prose/", "/midway/", "/starts/")]
    assert finder.search_all(np.array(sources), np.full(len(sources), target)).name_said.tolist() == [True] * 4
    first = [finder.anchors(source, target)[0].text for source in sources]
    assert first[0] == "Creating a New Thread with spawn" and first[2] == "Sharing state between threads"
    assert first[1].lower() != "creating a new thread with spawn" and first[3] != "Sharing state between threads"


def test_an_anchor_is_never_taken_from_a_template_line() -> None:
    """The same line on three pages is the site's template, not a sentence an editor wrote: no anchor comes from it,
    however well it names the target."""
    footer = "Read our guide to brew water and minerals."
    titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(18))]
    def text_anchors(pages_with_footer: int) -> list[str]:
        texts = [f"Set the kettle up first and read its manual twice.\n{footer}",
                 "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
                 *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}."
                   + (f"\n{footer}" if i < pages_with_footer - 1 else "") for i in range(18))]
        corpus = plain_corpus(texts, titles, template_spans=template_lines(texts))
        finder = AnchorFinder(corpus, Keywords(texts, titles))
        return [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert text_anchors(2) == ["brew water"]  # on two pages: prose
    assert text_anchors(3) == []


def test_an_anchor_is_never_taken_from_a_heading_but_the_name_it_writes_out_still_counts() -> None:
    """A heading is the page's outline, not its prose: no anchor comes from a heading line, even one that writes out the
    target's name (which still counts as its name said), and the prose's phrase is taken instead."""
    titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(18))]
    texts = ["Set the kettle up first and read its manual twice.\nMaking your own brew water\n"
             "Your brew water decides much of the taste, so test it before anything else.",
             "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(18))]
    heading = texts[0].index("Making your own brew water"), texts[0].index("\nYour brew")
    def anchors(headings: list[str]) -> tuple[list[Anchor], bool]:
        corpus = plain_corpus(texts, titles, headings=headings)
        finder = AnchorFinder(corpus, Keywords(texts, titles))
        said = finder.search_all(np.array([0]), np.array([1])).name_said[0]
        return [anchor for anchor in finder.anchors(0, 1) if anchor.source == "text"], bool(said)
    unknown, said_unknown = anchors([])
    assert heading[0] <= unknown[0].offset < heading[1]  # with no headings known, the name on that line leads
    known, said = anchors(["Making your own brew water", *[""] * 19])
    assert known and all(not heading[0] <= anchor.offset < heading[1] for anchor in known)
    assert known[0].text == "brew water" and known[0].offset == texts[0].index("brew water decides")
    assert said and said_unknown


@pytest.mark.parametrize(("name", "anchor"), [
    ("A call for contributors from the WG-prioritization team", "A call for contributors"),
    ("Rust 1.1 stable, the Community Subteam, and RustCamp", "Rust 1.1 stable, the Community Subteam"),
    ("A call for Rust 2019 Roadmap blog posts", "A call for Rust 2019 Roadmap blog posts"),  # no place ends a phrase
    ("So you want to do a CSS3 3D transform?", "So you want to do a CSS3 3D transform?"),  # "to" may lead a verb
    ("Close to the Metal: Debugging Our Hardware Problem", "Close to the Metal"),  # at least half its words
    ("Update on the October 15, 2018 incident on crates.io", "Update on the October 15, 2018 incident on crates.io"),
    ("Keeping Rust projects secure with cargo-audit 0.9: dependency trees, core advisories, unmaintained crates",
     "Keeping Rust projects secure with cargo-audit"),  # over LONGEST_TITLE_ANCHOR words: six at most all the same
    ("Rustup 1.24.0 release incident report for 2021-04-27 and after", "Rustup 1.24.0 release incident report"),
    ("Getting the Best from a Moka Pot", "Getting the Best from a Moka Pot"),  # seven words or fewer: the name as it is
    ("Rust 1.0: status report and final timeline", "Rust 1.0: status report and final timeline"),
    ("Hello, Cargo!", "Hello, Cargo!"),
    ("The of and to in for the a", "The"),
])
def test_the_title_fallback_is_cut_where_it_does_not_read_as_cut_off(name: str, anchor: str) -> None:
    assert title_anchor(name) == anchor


@pytest.mark.parametrize(("text", "anchor", "shown"), [
    ("It makes excellent Japanese-style iced coffee, brewed onto ice.", "Japanese-style iced", "Japanese-style iced coffee"),
    ("We moved to the new networking APIs.", "new networking", "new networking APIs"),
    ("Thanks to the core team members\nNext", "core team", "core team members"),  # a line's end ends it too
    ("the core team members and others", "core team", "core team"),  # no break after the next word: a verb as often
    ("the core team in Berlin.", "core team", "core team"),  # a stop word is no completion
    ("Rust 1.4 beta today.", "1.4 beta", "1.4 beta"),  # nor an adverb
    ("The editor is discussing Danger internally.", "discussing Danger", "discussing Danger"),
    ("If a snapshot test failed, fix it.", "snapshot test", "snapshot test"),  # nor a past tense
    ("Once cargo doc finishes, open it.", "cargo doc", "cargo doc"),  # nor a clause's verb after its subject
    ("When the build system runs.", "build system", "build system"),
    ("See the API reference https://example.com/api.", "API reference", "API reference"),  # an address is no word
    ("Introduced in Rust 1.29.0 today.", "in Rust", "in Rust"),
    ("a fast and small and cheap burr grinder.", "small and cheap burr", "small and cheap burr grinder"),
    ("alpha beta gamma delta epsilon zeta.", "alpha beta gamma delta epsilon", "alpha beta gamma delta epsilon zeta"),
    ("alpha beta gamma delta epsilon zeta eta.", "alpha beta gamma delta epsilon zeta", "alpha beta gamma delta epsilon zeta"),
])  # six words at most
def test_an_anchor_is_shown_with_the_word_that_completes_its_phrase(text: str, anchor: str, shown: str) -> None:
    start = text.index(anchor)
    assert text[start:anchors.completion(text, start, start + len(anchor))] == shown


def test_a_series_label_that_starts_three_titles_is_left_out_of_the_name() -> None:
    titles = ["Code Review: Emergence", "Code Review: Energy Sync", "Cargo: predictable dependency management",
              "Code Review: ", "Code Review:Eidolon", "Rust 1.0: status report", "Rust 1.0: the trains", "Announcing Rust 1.26"]
    assert page_names(titles) == ["Emergence", "Energy Sync", "Cargo: predictable dependency management", "Code Review: ",
                                  "Code Review:Eidolon", "Rust 1.0: status report", "Rust 1.0: the trains", "Announcing Rust 1.26"]


def test_the_title_fallback_of_a_post_in_a_series_is_its_name(tmp_path: Path) -> None:
    built = blog_site(tmp_path / "series.db", SLUGS[:10], links=False)
    names = ["Lorem Ipsum", "Dolor Sit Amet", "Consectetur Adipiscing Elit"]
    for number, name in enumerate(names):
        built.page(f"/series-{number}/", f"Lorem Series: {name}", LOREM)
    corpus = built.corpus()
    finder = AnchorFinder(corpus, Keywords(corpus.texts))
    source = corpus.urls.index(url(f"/blog/{SLUGS[0]}/"))
    for number, name in enumerate(names):
        target = corpus.urls.index(url(f"/series-{number}/"))
        assert corpus.titles[target] == f"Lorem Series: {name}"
        assert finder.anchors(source, target)[-1] == Anchor(name, "title", 0.0)
        candidate = Candidate(source=source, target=target, similarity=0.6, lexical=0.0, template_linked=False)
        assert [item.anchor.text for item in ranked(corpus, [candidate], finder, 4, 4)[0]] == [name]


def best_text_pair(corpus: Corpus, finder: AnchorFinder) -> tuple[int, int, Anchor]:
    """A (source, target) pair whose best anchor is a phrase of the source, and that phrase."""
    return next(text_pairs(corpus, finder))


def text_pairs(corpus: Corpus, finder: AnchorFinder) -> Iterator[tuple[int, int, Anchor]]:
    """The (source, target) pairs whose best anchor is a phrase of the source, with that phrase, in page order."""
    for source in range(len(corpus)):
        for target in range(len(corpus)):
            if source != target and (anchor := finder.anchors(source, target)[0]).source == "text":
                yield source, target, anchor
    raise AssertionError("no text anchor on the whole corpus")


def linked_over_anchor(tmp_path: Path, link_to: str) -> tuple[Anchor, list[Anchor]]:
    """The best anchor of a pair, then the pair's anchors once the source links elsewhere on exactly that phrase."""
    slugs = SLUGS[:14]
    corpus = blog_site(tmp_path / "before.db", slugs, links=False).corpus()
    source, target, anchor = best_text_pair(corpus, AnchorFinder(corpus, Keywords(corpus.texts)))
    other = next(url(f"/blog/{slug}/") for slug in slugs if url(f"/blog/{slug}/") not in (corpus.urls[source], corpus.urls[target]))
    after = blog_site(tmp_path / "after.db", slugs, links=False)
    after.page("/missing/", "Not found", "This page does not exist.", status=404)
    after.post("/draft/", "espresso-basics", noindex=1)
    after.page("/tags/x/", "Tag", "\n".join(prose(slug).title for slug in slugs))
    for slug in slugs:
        after.link("/tags/x/", f"/blog/{slug}/", prose(slug).title)
    targets = {"candidate": other, "external": "https://en.wikipedia.org/wiki/Coffee", "404": "/missing/",
               "noindex": "/draft/", "listing": "/tags/x/"}
    after.link(corpus.urls[source], targets[link_to], anchor.text, offset=anchor.offset)
    linked = after.corpus()
    assert linked.urls == corpus.urls
    return anchor, AnchorFinder(linked, Keywords(linked.texts)).anchors(source, target)


def test_a_phrase_its_source_links_to_one_page_is_the_anchor_of_no_other(tmp_path: Path) -> None:
    """A reader takes one phrase of a page for one page: a phrase that is another page's name, that the source links
    elsewhere already, or that the queue gives it for one target, is not the anchor for another, though the page writes
    it where it is free.
    Two pages write a post's text and then its best anchor's phrase once more: /linked/ links that second one to
    another post, /plain/ does not and is a candidate for the post and for a twin of it (its lines, its title and a word)."""
    slugs = SLUGS[:14]
    corpus = blog_site(tmp_path / "before.db", slugs, links=False).corpus()
    def site(name: str, phrase: str | None, page_named: str | None = None) -> tuple[Corpus, AnchorFinder, dict[str, int]]:
        def text(mark: str) -> str:  # each line ended apart: a line on three pages is template, no place for an anchor
            own = "\n".join(f"{line} {mark}." for line in corpus.texts[source].split("\n"))
            return own + (f"\nOne more word on {phrase} to close." if phrase else "")
        built = blog_site(tmp_path / f"{name}.db", slugs, links=False)
        built.page("/linked/", "Notes", text("Linked"))
        built.page("/plain/", "Notes too", text("Plain"))
        built.page("/twin/", prose(target_slug).title + " revisited", "\n".join(f"{line} Twin." for line in prose(target_slug).text.split("\n")))
        if phrase:
            built.link("/linked/", other, phrase, offset=text("Linked").rindex(phrase))
        if page_named:
            built.page("/named/", page_named, prose(SLUGS[14]).text)
        made = built.corpus()
        pages = {name: made.urls.index(url(f"/{name}/")) for name in ("linked", "plain", "twin")}
        return made, AnchorFinder(made, Keywords(made.texts)), {**pages, "target": made.urls.index(corpus.urls[target])}

    for source, target, _ in text_pairs(corpus, AnchorFinder(corpus, Keywords(corpus.texts))):
        target_slug = corpus.urls[target].strip("/").split("/")[-1]
        other = next(url(f"/blog/{slug}/") for slug in slugs if url(f"/blog/{slug}/") not in (corpus.urls[source], corpus.urls[target]))
        first, finder, pages = site(f"first-{source}-{target}", None)
        alone = {finder.anchors(pages["plain"], pages[to])[0] for to in ("target", "twin")}
        if {anchor.source for anchor in alone} == {"text"} and len({anchor.text for anchor in alone}) == 1:
            break  # the copies put the pair's words on more pages: its phrase may no longer be the best for both
    phrase = alone.pop().text
    named, finder, pages = site("named", None, page_named=phrase)  # a page whose name the phrase is: it names that page
    assert finder.anchors(pages["plain"], pages["target"])[0].text == phrase
    queue = ranked(named, [Candidate(source=pages["plain"], target=pages["target"], similarity=0.6, lexical=0.1,
                                     template_linked=False)], finder, 4, 4)[0]
    assert len(queue) == 1 and queue[0].anchor.text.lower() != phrase.lower()
    linked, finder, pages = site("after", phrase)

    def anchors(source: int, *targets: int) -> dict[int, str]:
        candidates = [Candidate(source=source, target=to, similarity=0.6, lexical=0.1, template_linked=False) for to in targets]
        return {item.target: item.anchor.text.lower() for item in ranked(linked, candidates, finder, 4, 4)[0]}

    alone = [finder.anchors(pages[source], pages[to])[0] for source, to in [("linked", "target"), ("plain", "target"), ("plain", "twin")]]
    assert [(anchor.text, anchor.source) for anchor in alone] == [(phrase, "text")] * 3  # alone, each pair would take it
    assert phrase.lower() not in anchors(pages["linked"], pages["target"]).values()
    both = anchors(pages["plain"], pages["target"], pages["twin"])
    assert len(both) == 2 and sorted(both.values()).count(phrase.lower()) == 1


def overlapping(anchor: Anchor, anchors: list[Anchor]) -> list[Anchor]:
    return [a for a in anchors if a.span and a.span[0] < anchor.span[1] and anchor.span[0] < a.span[1]]


def test_an_anchor_never_overlaps_an_existing_link_to_a_page(tmp_path: Path) -> None:
    anchor, anchors = linked_over_anchor(tmp_path, "candidate")
    assert anchor not in anchors and overlapping(anchor, anchors) == []


@pytest.mark.parametrize("link_to", ["external", "404", "noindex", "listing"])
def test_an_anchor_never_overlaps_an_existing_link_to_anywhere(tmp_path: Path, link_to: str) -> None:
    anchor, anchors = linked_over_anchor(tmp_path, link_to)
    assert overlapping(anchor, anchors) == []


def test_an_anchor_is_never_taken_from_the_source_repeating_its_own_title() -> None:
    texts = ["Making Cold Brew Concentrate at Home\nSteep coarse grounds overnight in cold water and strain them.",
             "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Making Cold Brew Concentrate at Home", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(8))]
    corpus = plain_corpus(texts, titles)
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    contexts = [anchor.context for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert contexts and titles[0] not in contexts  # "brew water" in the body is fine, "Making Cold Brew" is not


def test_a_window_that_names_its_own_page_is_no_anchor_for_another() -> None:
    """On the page of `cargo doc`, "cargo doc" names that page, though `cargo build`'s topic words hold "doc"; in the
    February 2023 plans, "February 2023" names them, not the triage group's of February 2022. Where the target's title
    holds the words too, they name both ("cargo doc" for "Documenting with cargo doc", "triage group" for the triage
    group's plans; of a page titled as the source but for when, see series.py)."""
    texts = ["Once cargo doc finishes, open what it wrote in a browser of your choice.",
             "Run cargo build to compile a package with its doc tests. Doc builds, doc links and doc examples compile too.",
             "Write doc comments, then cargo doc renders them as pages with examples and links.",
             "Every month the triage group meets. In February 2023 the triage group chose its goals.",
             "Every month the triage group meets. In February 2022 the triage group chose its goals, and again in March.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["cargo doc", "cargo build", "Documenting with cargo doc", "Triage plans for February 2023",
              "Triage group plans for February 2022", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    def text_anchors(source: int, target: int) -> list[str]:
        return [anchor.text for anchor in finder.anchors(source, target) if anchor.source == "text"]
    assert text_anchors(0, 1) == [] and text_anchors(0, 2)[0] == "cargo doc"
    assert text_anchors(3, 4)[0] == "triage group" and "February 2023" not in text_anchors(3, 4)


def test_an_anchor_never_starts_or_ends_inside_what_a_reader_sees_as_one_word() -> None:
    text = ("Use Box<T> for recursion, include Mongoid::Document in models, mix 1,000 grams, build with --release "
            "profiles, run cargo build, and read cargo-package(1), not /usr/share/doc nor Documentation/howto/ files.")
    phrases = ["Use Box", "include Mongoid", "mix 1", "release profiles", "cargo build", "read cargo-package", "usr/share/doc",
               "Documentation/howto"]  # a path's slash at either end is the path's
    starts = [text.index(phrase) for phrase in phrases]
    options = anchors.anchor_options(text, "Smart Pointers", starts, [start + len(phrase) for start, phrase in zip(starts, phrases)],
                                     [1.0] * len(phrases))
    assert [(anchor.text, anchor.source) for anchor in options] == [  # a space, a bracket or a comma ends a word
        ("cargo build", "text"), ("read cargo-package", "text"), ("Smart Pointers", "title")]


def test_an_anchor_is_never_taken_from_a_code_block() -> None:
    """No link goes inside a code block: its words are no anchor, however well they name the target."""
    texts = ["Set the kettle up first and read its manual twice.\n# pick the brew water\nwater = Tap().filter()\n"
             "Then pour slowly over the grounds.",
             "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(8))]
    code = (texts[0].index("# pick"), texts[0].index("\nThen"))
    keywords = Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)])
    def text_anchors(code_spans: list[list[tuple[int, int]]]) -> list[str]:
        finder = AnchorFinder(plain_corpus(texts, titles, code_spans=Spans.per_page(code_spans)), keywords)
        return [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert text_anchors([[] for _ in texts]) == ["brew water"]  # from the code, were it prose
    assert text_anchors([[code]] + [[] for _ in texts[1:]]) == []


def test_an_anchor_is_never_taken_from_a_web_address_written_out_in_the_text() -> None:
    """The words of a URL in the prose ("brew/water" in https://example.com/brew/water/) are the address, not a phrase
    to link, whether they name the target by its terms or write out its whole name."""
    def text_anchors(first_line: str) -> list[str]:
        texts = [f"Set the kettle up first and read its manual twice.\n{first_line}\nThen pour slowly over the grounds.",
                 "Most of a cup is water, so the minerals in your brew water shape how the coffee tastes.",
                 *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
        titles = ["Setting up", "Making Your Own Brew Water", *(f"Tea page {i}" for i in range(8))]
        finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
        return [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert text_anchors("Notes on making your own brew water are kept for later.") == ["making your own brew water"]
    assert text_anchors("Notes on brew water are kept at https://example.com/brew/water/notes.html for later.") == ["brew water"]
    assert text_anchors("Notes are kept at https://example.com/brew/water/notes.html for later.") == []  # by its terms
    assert text_anchors("Notes are kept at www.example.com/brew/water/notes.html for later.") == []
    assert text_anchors("Notes are kept at http://example.com/making/your/own/brew/water for later.") == []  # its name
    text = "See https://example.com/a/b, or WWW.example.com/a and http://b.example/c."
    assert [text[start:end] for start, end in web_addresses(text)] == ["https://example.com/a/b,", "WWW.example.com/a",
                                                                       "http://b.example/c."]
    assert web_addresses("A plain sentence: no address, not even example.com or a ratio 1:2 here.") == []


def test_titles_numbered_as_sections_are_cited_by_their_numbers() -> None:
    """citations.py: a title's leading number names its page (a number on two titles names none), and a citation of a
    subsection names the page of the longest number that starts it."""
    citations = Citations(["8.16. Composite Types", "Chapter 8. Data Types", "Part I. Tutorial", "E.17. Release 15.4",
                           "Rust 1.0: status report", "2019 Survey Results", "A. First", "A. Second"])
    assert citations.page_of == {"8.16": 0, "8": 1, "I": 2, "E.17": 3}
    text = ("See Section 8.16.6. Then Chapter 8, section 8.16, Part I and Appendix E.17; not Section 9.1, part in, "
            "Section 8.16.6a, Section A or Chapter 2019, but \u00a7 8.16 again.")
    assert [(page, text[start:end]) for page, start, end in citations.in_text(text)] == [
        (0, "Section 8.16.6"), (1, "Chapter 8"), (0, "section 8.16"), (2, "Part I"), (3, "Appendix E.17"), (0, "\u00a7 8.16")]
    spans = {page: text[start:end] for page, (start, end) in citations.first_spans(0, text).items()}
    assert spans == {1: "Chapter 8", 2: "Part I", 3: "Appendix E.17"}  # itself left out, each page's first citation
    assert citations.pair_codes([text, "Chapter 8 and Section 8.16.1."], 8).tolist() == [1, 2, 3, 8 + 0]
    assert not Citations(["Getting started", "Rust 1.0: status report"]).pair_codes(["See Section 1.2."], 2).size
    others = "RFC 4918, Section 8.16; section 8.16 of RFC 2616; Section 8 of the Manual; ISO 8601 section 8; see Section 8.16."
    assert [others[start:end] for _, start, end in citations.in_text(others)] == ["Section 8.16"]  # the last: this site's
    assert Citations(["1. Tutorial", *["A reference page"] * 4]).page_of and not Citations(["1. Tutorial", *["A page"] * 5]).page_of


def test_a_page_cited_by_its_section_number_is_a_candidate_its_name_said_and_the_citation_its_anchor() -> None:
    """"as described in Section 2.1.3" shares no word with "2.1. Composite Types", yet cites it as surely as its name
    written out: the pair is a mention (a candidate whatever its similarity), its name is said, and the citation is the
    anchor."""
    titles = ["3.4. Row Constructors", "2.1. Composite Types", "2.2. Range Types", *(f"Tea page {i}" for i in range(8))]
    texts = ["A row constructor builds a value from its parts, as described in Section 2.1.3, with one field per column.",
             "A composite type represents the structure of a row or record, a list of field names and their data types.",
             "A range type represents a range of values of some element type, such as timestamps or integers.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles)
    keywords = Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)])
    finder = AnchorFinder(corpus, keywords)
    found = finder.search_all(np.array([0, 0]), np.array([1, 2]))
    assert found.name_said.tolist() == [True, False]
    assert finder.anchors(0, 1)[0].text == "Section 2.1.3" and finder.anchors(0, 1)[0].source == "text"
    assert 0 * len(corpus) + 1 in pipeline.mentioned_pairs(corpus, keywords).tolist()
    assert 0 * len(corpus) + 2 not in pipeline.mentioned_pairs(corpus, keywords).tolist()


def test_a_title_numbered_as_a_section_falls_back_to_its_name_without_its_number() -> None:
    """A manual's "7.45. Flip Layer Vertically" is linked as "Flip Layer Vertically": the title fallback leaves the
    number out, as an editor would. Its name is said where the source cites it with its number, as the manual's editors
    do ("Section 7.45, “Flip Layer Vertically”"). A site whose numbered titles are too few
    (citations.MIN_NUMBERED_SHARE) keeps a number that is no chapter's ("A. First")."""
    titles = ["7.45. Flip Layer Vertically", "7.44. Flip Layer Horizontally", "3.2. Layers Dialog", *(f"Tea page {i}" for i in range(8))]
    texts = ["Flip the layer top to bottom: the image is mirrored across a horizontal axis through its centre.",
             "Flip the layer left to right: the image is mirrored across a vertical axis through its centre.",
             "The dialog lists the layers. To mirror one top to bottom, see Section 7.45, “Flip Layer Vertically”.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles)
    assert corpus.names[:3] == ["Flip Layer Vertically", "Flip Layer Horizontally", "Layers Dialog"] and corpus.names[3] == "Tea page 0"
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder.search_all(np.array([2, 2]), np.array([0, 1])).name_said.tolist() == [True, False]
    assert finder.anchors(0, 2)[-1] == Anchor("Layers Dialog", "title", 0.0)
    assert plain_corpus(texts + ["More tea"] * 5, ["A. First", *titles[1:], *["Tea"] * 5]).names[0] == "A. First"  # 3 of 16


def test_a_site_that_numbers_few_chapters_names_them_without_their_numbers() -> None:
    """Python's docs number their tutorial's chapters ("12. Virtual Environments and Packages", 47 of 527 titles) and cite
    one by its name alone ("see Virtual Environments and Packages"): where numbers are not the site's convention, the
    name written out and the title fallback are the title without its number. Where they are (the test above), a name
    is said with its number: the manual's menu paths write the bare name everywhere."""
    titles = ["12. Virtual Environments and Packages", "The import system", *(f"Tea page {i}" for i in range(9))]
    texts = ["A virtual environment is a directory tree holding a Python installation and packages installed into it.",
             "Modules are found on the module search path; to keep a project's packages apart, see Virtual Environments "
             "and Packages, then install them there.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(9))]
    corpus = plain_corpus(texts, titles)
    assert corpus.names[0] == corpus.written_titles[0] == "Virtual Environments and Packages"
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder.search_all(np.array([1]), np.array([0])).name_said.tolist() == [True]
    assert finder.anchors(1, 0)[0].text == "Virtual Environments and Packages"
    assert finder.anchors(2, 0)[-1] == Anchor("Virtual Environments and Packages", "title", 0.0)


def test_a_two_word_name_is_said_as_its_title_writes_it_in_prose() -> None:
    """"Number Protocol" written out mid-sentence cites its page as surely as a longer name. Two words in another case
    ("the number protocol"), or heading a part of the source, are as often a phrase of the source's own: a two-word
    name is said only in its title's case, in prose; one all in lower case, or one that two pages share, never."""
    titles = ["Number Protocol", "Type Objects", "Sequence Protocol", "Mapping Protocol", "data model", "Buffer Objects",
              "Governance Update", "Governance Update", *(f"Tea page {i}" for i in range(8))]
    texts = ["Objects that act as numbers fill the number slots: addition, multiplication and the rest of the operators.",
             "Type objects describe types. Their numeric slots are described in Number Protocol; the data model says why. "
             "The Governance Update gives the team's plans.",
             "Objects that act as sequences fill other slots: the number protocol does not apply to them here.",
             "Number Protocol\nMappings fill the slots of both sequences and dictionaries, and a few of their own.",
             "The data model describes objects, values and types in general terms for every implementation.",
             "Buffer objects expose raw memory to other objects without a copy.",
             "The team met in May and set out its plans for the year.", "The team met in June and revised its plans.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles, headings=["", "", "", "Number Protocol", *[""] * 12])
    finder = AnchorFinder(corpus, Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    found = finder.search_all(np.array([1, 2, 3, 1, 1]), np.array([0, 0, 0, 4, 6]))
    assert found.name_said.tolist() == [True, False, False, False, False]
    assert finder.anchors(1, 0)[0].text == "Number Protocol"


def test_a_title_that_is_a_name_then_what_the_page_is_names_its_page_by_its_head() -> None:
    """"timeit - Measure execution time of small code snippets" is the page of timeit: a source that writes "timeit"
    mentions it and says its name, though the name is one word; an appendix's letter, a head two titles share and a
    head of common words name nothing. A head of one word is no anchor (an anchor is 2-6 words)."""
    titles = ["timeit - Measure execution time of small code snippets", "argparse \u2014 Parser for command-line options",
              "C - Derivable Traits", "Introduction - Getting started", "Introduction - Reading on", "The profilers",
              *(f"Tea page {i}" for i in range(8))]
    texts = ["Time small bits of Python code with timeit, from the command line or in a script.",
             "The argparse module makes it easy to write user-friendly command-line interfaces.",
             "Traits you can derive: Debug, Clone, Copy, PartialEq, and the like; see the C notes.",
             "Start here: what the documentation holds and how to read it.", "Read on for the details of each part.",
             "The profilers show where a program spends its hours; for tiny bits of it, timeit is better.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    corpus = plain_corpus(texts, titles)
    keywords = Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)])
    assert title_heads(titles, keywords) == [(0, "timeit"), (1, "argparse")]
    finder = AnchorFinder(corpus, keywords)
    assert finder.search_all(np.array([5, 5]), np.array([0, 1])).name_said.tolist() == [True, False]
    assert 5 * len(corpus) + 0 in pipeline.mentioned_pairs(corpus, keywords).tolist()
    assert all(len(anchor.text.split()) >= MIN_WORDS for anchor in finder.anchors(5, 0) if anchor.source == "text")


def test_a_window_never_splits_what_a_reader_sees_as_one_word() -> None:
    """"1.32.0" is three words to the tokenizer and one to a reader: "32.0" or "Rust 1.32" is no anchor for it, nor is
    "1.32.0" alone (one word, and an anchor is 2-6), and the shorter-anchor preference counts "Rust 1.32.0" as two
    words, not four. Nor does a window split a name: words joined by a slash ("Swift/Kotlin", "HTTP/2": never "2
    session") or in capitals ("GROUP BY": never "ordering by GROUP"), whose words a reader counts apart (but for a stop
    word joined by a slash: "I/O" is one), and whose stop words may begin or end it ("NOT NULL")."""
    texts = ["Get Rust 1.32.0 from crates.io or the Swift/Kotlin mirror today.", "Unrelated words about tea gardens and teapots.",
             "Ordering by GROUP BY terms saves HTTP/2 session state on NOT NULL columns.",
             "Retry I/O errors and/or timeouts."]
    corpus, keywords = plain_corpus(texts, ["Upgrading", "Tea", "Queries", "Errors"]), Keywords(texts)
    def windows(page: int) -> dict[str, int]:
        words = phrases_of(corpus, keywords, [page])
        first, size = np.nonzero(words.valid)
        last = first + size + MIN_WORDS - 1
        return {texts[page][start:end]: spoken for start, end, spoken in
                zip(words.starts[first].tolist(), words.ends[last].tolist(),
                    [spoken_words(*window, words.dotted_before) for window in zip(first.tolist(), last.tolist())])}
    assert windows(0) == {"Rust 1.32.0": 2, "1.32.0 from crates.io": 3, "crates.io or the Swift/Kotlin": 5, "Swift/Kotlin": 2,
                          "Swift/Kotlin mirror": 3, "Swift/Kotlin mirror today": 4, "mirror today": 2,  # "Get" is a stop word
                          "the Swift/Kotlin mirror today": 5}  # an article starts a phrase that ends there
    assert windows(2) == {  # a stop word inside a name in capitals may be its first or last word ("NOT NULL", "GROUP BY")
        "Ordering by GROUP BY": 4, "Ordering by GROUP BY terms": 5, "Ordering by GROUP BY terms saves": 6, "GROUP BY": 2,
        "GROUP BY terms": 3, "GROUP BY terms saves": 4, "GROUP BY terms saves HTTP/2": 6, "terms saves": 2, "HTTP/2": 2,
        "terms saves HTTP/2": 4, "terms saves HTTP/2 session": 5, "terms saves HTTP/2 session state": 6, "saves HTTP/2": 3,
        "saves HTTP/2 session": 4, "saves HTTP/2 session state": 5, "HTTP/2 session": 3, "HTTP/2 session state": 4,
        "session state": 2, "session state on NOT NULL": 5, "session state on NOT NULL columns": 6, "state on NOT NULL": 4,
        "state on NOT NULL columns": 5, "NOT NULL": 2, "NOT NULL columns": 3}
    assert windows(3) == {"Retry I/O": 2, "Retry I/O errors": 3, "I/O errors": 2, "I/O errors and/or timeouts": 4,
                          "errors and/or timeouts": 3}  # "I", "and" and "or" are stop words: "I/O" is one word
    text = "Brew a 1:16 ratio."
    ratio = phrases_of(plain_corpus([text], ["Brewing"]), Keywords([text]), [0])
    first, size = np.nonzero(ratio.valid)  # "1:16" is one word too, as a time "10:30" is: never "16 ratio"
    assert {text[ratio.starts[start]:ratio.ends[start + size + MIN_WORDS - 1]] for start, size in zip(first, size)} == {
        "Brew a 1:16", "Brew a 1:16 ratio", "1:16 ratio", "a 1:16 ratio"}  # not "a 1:16": the phrase runs on


def test_the_phrases_word_order_is_a_stable_argsort_of_their_keys() -> None:
    """phrases._stable_order sorts each key with its place in the low bits: the stable argsort's order, repeated keys
    in place order, and the argsort itself where a key is too large to share its 64 bits with a place."""
    from analysis.phrases import _stable_order
    keys = np.random.default_rng(5).integers(0, 300, 5_000)  # many repeats
    assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
    large = keys + (1 << 52)  # 13 bits of places do not fit beside it
    assert np.array_equal(_stable_order(large), np.argsort(large, kind="stable"))
    assert len(_stable_order(np.zeros(0, dtype=np.int64))) == 0


def test_a_dotted_word_names_a_target_only_if_the_target_holds_all_of_it() -> None:
    """"Rust 1.29.2" shares "rust", "1" and "29" with "Announcing Rust 1.29.1", and "Cargo.toml" shares "cargo" with
    "Hello, Cargo!", but each is another name to a reader: no anchor holds one, while "Rust 1.29.1" names its page. Nor
    does "Rust 1.29.1" name "Announcing Rust 1.29.2", though its parts 1, 29 and 1 are all among that title's words: it
    is no evidence either, so the pair's strength is its best other window's ("ARM boards")."""
    texts = ["Rust 1.29.2 fixes a miscompilation on ARM boards, so upgrade when you can.",
             "Rust 1.29.1 fixes a miscompilation on ARM boards, so upgrade when you can.",
             "The 1.29.1 point release fixes a rustdoc crash and a miscompilation on ARM boards.",
             "Edit the Cargo.toml manifest to add a dependency on the rand crate.",
             "Create a project with cargo new and build it with cargo build.",
             "It fixes a miscompilation on ARM boards, so upgrade when you can.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Announcing Rust 1.29.2", "Rust in embedded", "Announcing Rust 1.29.1", "Adding dependencies", "Hello, Cargo!",
              "Patch notes", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    def text_anchors(source: int, target: int) -> list[str]:
        return [anchor.text for anchor in finder.anchors(source, target) if anchor.source == "text"]
    assert text_anchors(1, 2)[0] == "Rust 1.29.1"
    assert text_anchors(0, 2) and not any("1.29.2" in anchor for anchor in text_anchors(0, 2))  # "ARM boards" stays
    assert text_anchors(1, 0) and not any("1.29.1" in anchor for anchor in text_anchors(1, 0))  # its parts are 1.29.2's
    best = finder.search_all(np.array([1, 5]), np.array([0, 0])).best  # the same text but for "Rust 1.29.1"
    assert best[0] == best[1] > 0
    alone = np.zeros(2, dtype=np.float32)  # the best alone (strong_windows' best_only): "Rust 1.29.1", the stronger
    for rows, found, _ in finder.search_blocks(np.array([1, 5]), np.array([0, 0]), lambda rows, found: rows[:0]):
        alone[rows] = found.best  # window, holds a version number: it bounds no other window, being dropped after
    assert np.array_equal(alone, best)
    words = phrases_of(plain_corpus(["See Rust 1.31.0, crates.io, 3.18a and 1:16."], ["Notes"]), finder.keywords, [0])
    assert (words.versions, words.version_last - words.version_first) == (["1.31"], [2])  # one number, words 1, 31 and 0
    assert np.diff(words.versioned_before).tolist() == [0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]  # its words, counted
    assert version_numbers("Rust 1.31.0, 2018 and 1.45.2") == {"1.31", "1.45.2"} and not version_numbers("v2.1.x 3.18a")
    assert not any("Cargo.toml" in anchor for anchor in text_anchors(3, 4))


def test_a_version_number_names_no_page_whose_name_writes_none() -> None:
    """CMake's pages open with "New in version 3.18.", so 3 and 18 are among a page's topic words; "version 3.18" in
    another page names no command, though: the window adds nothing to the pair, which is as strong as the same text
    without the number, and is no anchor."""
    texts = ["The policy is new in version 3.18 and chooses how the compiler flags of a build type are set.",
             "New in version 3.18. The build type chooses the compiler flags; the default build type is Debug.",
             "The policy chooses how the compiler flags of a build type are set.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["CMP0141", "Build types", "CMP0142", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    starts, topics, _ = finder.topics
    number, _ = finder.keywords.vocabulary.distinct_terms(["3 18"])
    assert len(number) == 2 and set(number.tolist()) <= set(topics[starts[1]:starts[2]].tolist())
    anchors = [anchor.text for anchor in finder.anchors(0, 1) if anchor.source == "text"]
    assert anchors and not any("3.18" in anchor for anchor in anchors)
    best = finder.search_all(np.array([0, 2]), np.array([1, 1])).best
    assert best[0] == best[1] > 0


def test_a_version_number_after_a_name_is_that_names_release() -> None:
    """"Rust 1.24.0" names "Announcing Rust 1.24", not "Announcing Rustup 1.24.0", though both titles write the number
    (the Rust 1.24 post's "getting Rust 1.24.0 is as easy as" was rustblog's anchor for four Rustup releases)."""
    texts = ["Rust 1.24.0 ships incremental compilation and rustfmt on stable.",
             "Rustup 1.24.0 installs toolchains and ships a new proxy for rustfmt.",
             "If you have rustup, getting Rust 1.24.0 with rustfmt is easy.",
             *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
    titles = ["Announcing Rust 1.24", "Announcing Rustup 1.24.0", "Notes", *(f"Tea page {i}" for i in range(8))]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder.anchors(2, 0)[0].text == "Rust 1.24.0"
    assert finder.anchors(2, 1) == [Anchor("Announcing Rustup 1.24.0", "title", 0.0)]


def test_a_number_that_extends_a_section_number_is_that_sections() -> None:
    """On a site that numbers its titles, "Section 8.16.6" cites a part of "8.16. Composite Types": its number is that
    page's, and the window that writes it stays evidence for it (the citation is the anchor), where a page of 8.17 has
    none of it. A number that extends no section, or any number on a site whose titles are not numbered, is no page's."""
    titles = ["8.16. Composite Types", "8.17. Range Types", "9.1. Logical Operators", "9.2. Comparison Functions",
              "Notes on rows"]
    texts = ["A composite type represents the structure of a row or record.",
             "Range types are data types representing a range of values of some element type.",
             "The usual logical operators are available: AND, OR and NOT.",
             "The usual comparison operators are available for all the built-in data types.",
             "The row values are compared field by field, as Section 8.16.6 explains for composite types."]
    finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
    assert finder._version_id("8.16.6") == finder._version_id("8.16") >= 0
    assert finder._version_id("8.17") != finder._version_id("8.16") and finder._version_id("1.45.2") == -1
    assert [anchor.text for anchor in finder.anchors(4, 0) if anchor.source == "text"][0] == "Section 8.16.6"
    plain = AnchorFinder(plain_corpus(texts, [title.split(". ", 1)[-1] for title in titles]), finder.keywords)
    assert plain._version_id("8.16.6") == -1


def spelled(word: str, among: tuple[str, ...] | list[str]) -> bool:
    return any(word in (known, known.capitalize(), known.upper()) for known in among)


def breaks_a_phrase(word: str) -> bool:
    return spelled(word.replace("\u2019", "'"), [*PHRASE_BREAKS, *CLAUSE_WORDS, *COPULAS])


def test_tokenize_finds_the_words_of_the_regex_with_their_spans_in_each_text() -> None:
    """tokenize classifies code points in a compiled loop instead of running the regex for the spans: the same words
    anywhere."""
    rng = np.random.default_rng(7)
    alphabet = list("absS Z09_'\u2019--../ ,!?:\n\t") + ["\u00e9", "\u00df", "\u4e2d", "\u0663", "\U0001f600", "\u00a0", "\u2013"]
    texts = ["", "don't well-known a--b x'-y 'quoted' -dash- Rust 1.51 CI/CD", "\u00e9t\u00e9-\u00e0 na\u00efve\u2019s",
             "Rust's team\u2019S it's s'-s x's-y", "by GROUP BY ORDER_1 Z-9 EC2 Ab A SS caf\u00c9 \u00c9T\u00c9 S3",
             "The AeroPress, a kettle With an AN the-end THE tHe thee In the blade mill of",
             "It isn\u2019t WAS Had a meeting; it didn't, Has it; we are here, coffee is processed, IS STABILIZED",
             "is. ed"]
    texts += ["".join(rng.choice(alphabet, int(rng.integers(0, 60)))) for _ in range(300)]
    vocabulary = Vocabulary()
    tokens = vocabulary.tokenize(texts)
    assert tokens.counts.tolist() == [len(WORD.findall(text)) for text in texts] == word_counts(texts).tolist()
    assert word_counts([]).tolist() == []
    at = 0
    for text, count in zip(texts, tokens.counts.tolist()):
        spans = [match.span() for match in WORD.finditer(text)]
        assert list(zip(tokens.starts[at:at + count].tolist(), tokens.ends[at:at + count].tolist())) == spans
        assert [vocabulary.terms[i] if i >= 0 else None for i in tokens.ids[at:at + count].tolist()] == \
            [None if is_stop_word(text[start:end]) else terms(text[start:end])[0] for start, end in spans]
        gaps = [text[end:start] for (_, end), (start, _) in zip(spans, spans[1:])]
        ratios = [gap == ":" and text[end - 1] in "0123456789" and text[start] in "0123456789"  # "1:16", "10:30"
                  for (_, end), (start, _), gap in zip(spans, spans[1:], gaps)]
        assert tokens.joined[at:at + count].tolist() == [
            (gap in PHRASE_JOINERS and len(gap) == 1) or ratio for gap, ratio in zip(gaps, ratios)] + [False] * bool(count)
        assert tokens.dotted[at:at + count].tolist() == [gap == "." or ratio for gap, ratio in zip(gaps, ratios)] + [False] * bool(count)
        assert tokens.slashed[at:at + count].tolist() == [gap == "/" for gap in gaps] + [False] * bool(count)
        capitals = [re.fullmatch("[A-Z][A-Z0-9_-]+", text[start:end]) is not None for start, end in spans]
        assert tokens.capitals[at:at + count].tolist() == [
            gap == " " and first and second for gap, first, second in zip(gaps, capitals, capitals[1:])] + [False] * bool(count)
        assert tokens.possessive[at:at + count].tolist() == [
            end - start > 2 and text[end - 2] in "'\u2019" and text[end - 1] in "sS" for start, end in spans]
        words = [text[start:end] for start, end in spans]
        assert tokens.article[at:at + count].tolist() == [spelled(word, ARTICLES) for word in words]
        assert tokens.phrase_end[at:at + count].tolist() == [
            not ((gap in PHRASE_JOINERS and len(gap) == 1) or ratio) or breaks_a_phrase(word)
            for gap, ratio, word in zip(gaps, ratios, words[1:])] + [True] * bool(count)
        assert tokens.clause_word[at:at + count].tolist() == [
            spelled(word.replace("\u2019", "'"), CLAUSE_WORDS)
            or spelled(word, COPULAS) and not (joined and after.lower().endswith("ed"))
            for word, joined, after in zip(words, tokens.joined[at:at + count].tolist(), [*words[1:], ""])]
        at += count
    stored = TokenFile()  # every field, flags included, comes back as written, in any order of texts
    stored.write(tokens, np.arange(len(texts)))
    stored.close_writing()
    asked = [4, 5, 0, 3, 300]
    for field in Tokens.__dataclass_fields__:
        assert np.array_equal(getattr(stored.read(asked), field), getattr(tokens.select(asked), field)), field


def test_term_ids_are_given_in_the_order_words_are_first_seen_whether_looked_up_packed_or_by_spelling() -> None:
    """Short words are found by their packed spelling once seen, the others by the spelling dict: the ids must be those
    of one pass over the words in order, however the texts are split into calls, and again on a second pass."""
    rng = np.random.default_rng(11)
    alphabet = ["ab", "Ab", "abcdefghij", "abcdefghijk", "abcdefghijklmnopqr", "abcdefghijklmnopqrs", "z9_", "caf\u00e9", "don't",
                "don\u2019t", "x-y", "the", "Rust", "1.51", "\u4e2d"]
    texts = [" ".join(rng.choice(alphabet, int(rng.integers(0, 20)))) + " " + "".join(rng.choice(list("abc"), 9)) for _ in range(200)]
    expected = Vocabulary()
    expected_ids = [[expected._spelling[word] for word in WORD.findall(text)] for text in texts]
    vocabulary = Vocabulary()
    ids = []
    for start in range(0, len(texts), 7):
        tokens = vocabulary.tokenize(texts[start:start + 7])
        ids += [part.tolist() for part in np.split(tokens.ids, np.cumsum(tokens.counts)[:-1])]
    assert ids == expected_ids and vocabulary.terms == expected.terms
    again = vocabulary.tokenize(texts)
    assert again.ids.tolist() == [i for page in expected_ids for i in page] and vocabulary.terms == expected.terms
    threaded = Vocabulary()  # later blocks split, and looked up among the spellings known then, before earlier ones get ids
    blocks = (texts[start:start + 7] for start in range(0, len(texts), 7))
    ids = [part.tolist() for tokens in threaded.tokenize_all(blocks, threads=2) for part in np.split(tokens.ids, np.cumsum(tokens.counts)[:-1])]
    assert ids == expected_ids and threaded.terms == expected.terms


def test_blocked_words_are_those_overlapping_a_link_or_inside_a_sentence_repeating_the_title() -> None:
    from analysis.phrases import _blocked

    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(["alpha", "beta", "gamma.", "\nDelta Echo\n", "x"], int(rng.integers(0, 30)))) for _ in range(40)]
    titles = ["Delta Echo" if i % 3 == 0 else f"title {i}" for i in range(40)]
    spans = [[(int(a), int(a + rng.integers(-3, 20))) for a in rng.integers(-5, len(text) + 5, int(rng.integers(0, 4)))] for text in texts]
    corpus = plain_corpus(texts, titles, link_spans=Spans.per_page(spans))
    pages = [int(page) for page in rng.permutation(40)]
    tokens = Vocabulary().tokenize([texts[page] for page in pages])
    expected = []
    for page in pages:
        words = [match.span() for match in WORD.finditer(texts[page])]
        sentences = [(a, b) for a, b in sentence_spans(texts[page]) if texts[page][a:b].strip().lower() == titles[page].lower()]
        expected += [any(start < end_ and start_ < end for start_, end_ in spans[page])
                     or any(start >= start_ and end <= end_ for start_, end_ in sentences) for start, end in words]
    assert _blocked(corpus, pages, tokens, [texts[page] for page in pages], np.ones(len(pages), dtype=bool)).tolist() == expected


def test_what_other_pages_link_a_target_with_names_it_in_a_source(site: Site) -> None:
    pages = [("/widgets/", "Introducing Widgets", "The new release is out today."),
             ("/notes/", "Release notes", "Read about the quantum flux capacitor first."),
             ("/design/", "Thoughts", "Our quantum flux capacitor changed twice this year.")]
    corpus, finder = filler_site(site, "deploys, queues and workers", pages)
    target, source = corpus.urls.index(url("/widgets/")), corpus.urls.index(url("/design/"))
    assert finder.anchors(source, target) == [Anchor("Introducing Widgets", "title", 0.0)]  # nothing in the source names it
    site.link("/notes/", "/widgets/", "quantum flux capacitor")
    corpus = site.corpus()
    assert (target, "quantum flux capacitor") in list(corpus.inbound_anchors)
    anchor = AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles)).anchors(source, target)[0]
    assert (anchor.text, anchor.source) == ("quantum flux capacitor", "text")
    assert_text_anchor(corpus, source, anchor)
    assert list(site.corpus(hidden={(url("/notes/"), url("/widgets/"))}).inbound_anchors) == []  # a hidden link's anchor names nothing


def test_an_anchor_of_a_plain_number_names_nothing_of_the_page_it_links(site: Site) -> None:
    """A generated index links a page's entries as "[15]" and a footnote as "(3)": a source's "15" or "3" is not the
    page's name for that (CMake's and Python's indexes made "15 times" an anchor for "What's New In Python 3.5"). A
    dotted number is a name: "1.34" for "Announcing Rust 1.34.0"."""
    pages = [("/widgets/", "Introducing Widgets", "The new release is out today."),
             ("/genindex/", "Index", "Widgets [15] (3); widgets 1.34; widgets built 15 times."),
             ("/design/", "Thoughts", "Our build runs 15 times a day since release 1.34 and fails in 3 ways.")]
    filler_site(site, "deploys, queues and workers", pages)
    site.link("/genindex/", "/widgets/", "[15]")
    site.link("/genindex/", "/widgets/", "(3)")
    corpus = site.corpus()
    target, source = corpus.urls.index(url("/widgets/")), corpus.urls.index(url("/design/"))
    assert {(target, "[15]"), (target, "(3)")} <= set(corpus.inbound_anchors)
    def finder() -> AnchorFinder:
        corpus = site.corpus()
        return AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles))
    assert finder().anchors(source, target) == [Anchor("Introducing Widgets", "title", 0.0)]
    site.link("/genindex/", "/widgets/", "1.34")  # a name, though only where the title writes it (other_versions)
    found = finder()
    codes, _ = found._link_words(np.array([target]))
    assert {found.keywords.vocabulary.terms[code % len(found.keywords.idf)] for code in codes.tolist()} == {"1", "34"}
    site.link("/genindex/", "/widgets/", "15 times")  # with a word, an anchor names its page (the test above)
    assert finder().anchors(source, target)[0].text == "15 times"


def test_a_label_the_site_links_many_pages_with_names_none_of_them(site: Site) -> None:
    """A listing that links each post "Read on →" teaches no post that "read" is its name: artsy's did, and "Thanks for
    reading" or "sure to read" became anchors. The same text linking up to LABEL_PAGES pages may still name each."""
    topics = ("espresso", "oolong", "kefir", "sourdough", "kombucha", "miso")
    labels = [*["Read on \u2192"] * anchors.LABEL_PAGES, "read on \u2192 "]  # the last the same, case and spacing aside
    listing = "".join(f"{topic}. {label}" for topic, label in zip(topics, labels))
    filler_site(site, "deploys, queues and workers", [*((f"/{topic}/", f"{topic.title()} Notes", f"All about {topic}.")
                                                        for topic in topics),
                                                      ("/archive/", "Archive", listing),
                                                      ("/design/", "Thoughts", "Be sure to read this before you start.")])

    def first_anchor() -> Anchor:
        corpus = site.corpus()
        target, source = corpus.urls.index(url("/espresso/")), corpus.urls.index(url("/design/"))
        return AnchorFinder(corpus, Keywords(corpus.texts, corpus.titles)).anchors(source, target)[0]

    def link(topic: str, label: str) -> None:  # where the listing's text (after the filler) has that post's label
        at = site.texts[url("/archive/")].index(f"{topic}. {label}") + len(topic) + 2
        site.link("/archive/", f"/{topic}/", label, offset=at)

    for topic, label in zip(topics[:-1], labels):
        link(topic, label)
    assert first_anchor().source == "text"  # "read" still names each of five pages
    link(topics[-1], labels[-1])
    assert first_anchor() == Anchor("Espresso Notes", "title", 0.0)


def test_an_article_starts_an_anchor_that_ends_a_phrase(site: Site) -> None:
    """A name of one word needs a second: "the AeroPress" where no other word stands beside it in the phrase (before,
    the shortest anchor was "AeroPress in the morning"), but a word of its own phrase before an article ("portable
    Chemex", though "The Chemex," comes first and is as strong), and no article where the phrase runs on ("the Kalita
    lid" is "Kalita lid", not "the Kalita")."""
    corpus, finder = filler_site(site, "kettles, scales and grinders", [
        ("/aeropress/", "AeroPress Recipes", "An AeroPress brews a small cup."),
        ("/chemex/", "Chemex Recipes", "A Chemex brews a clean cup."),
        ("/kalita/", "Kalita Recipes", "A Kalita brews a sweet cup."),
        ("/alone/", "Mornings", "For a cleaner cup, brew with the AeroPress in the morning."),
        ("/modifier/", "Travel", "The Chemex, they say, is slow. For a cleaner cup, brew with the portable Chemex in the morning."),
        ("/runs-on/", "Lids", "For a cleaner cup, fit the Kalita lid tightly."),
    ])
    page = page_numbers(corpus)
    best = {source: finder.anchors(page[source], page[target])[0].text
            for source, target in (("/alone/", "/aeropress/"), ("/modifier/", "/chemex/"), ("/runs-on/", "/kalita/"))}
    assert best == {"/alone/": "the AeroPress", "/modifier/": "portable Chemex", "/runs-on/": "Kalita lid"}


def test_a_quantity_names_no_page_unless_its_title_writes_the_number(site: Site) -> None:
    """A recipe's "15 g" and "250" are among its heaviest words, but say what it measures, not what it is about: "16 to
    20 g" of another page is no anchor for it. A number its title writes names it still ("Rust 2018")."""
    corpus, finder = filler_site(site, "Rust deploys, queues and workers", [  # "Rust" on every page: no name alone
        ("/ratios/", "Understanding Ratios", "Weigh 15 g and 250 g, or 16 g and 250 g, or 20 g and 320 g, or 18 g."),
        ("/espresso/", "Espresso", "Most double baskets hold 16 to 20 g of fine grounds."),
        ("/edition/", "What is Rust 2018?", "The edition brings modules and lifetimes in 2018 to everyone."),
        ("/release/", "Release", "Rust 2018 shipped modules for everyone."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/espresso/"], page["/ratios/"]) == [Anchor("Understanding Ratios", "title", 0.0)]
    assert finder.anchors(page["/release/"], page["/edition/"])[0].text == "Rust 2018"


def test_a_phrase_that_only_says_when_names_no_page(site: Site) -> None:
    """A meeting's post is about its date and hour ("25 February", "3pm GMT" are among its heaviest words) and an
    edition's about its year, but another page's "25 February at 3pm GMT" or "merged in August 2018" places its own
    news in time: the anchor is a phrase of the source that says what ("steering cycle"), else the target's title. A
    year beside a word of the target's name still names it ("Rust 2018"), and a dotted number is a release's name."""
    corpus, finder = filler_site(site, "Rust deploys, queues and workers", [  # "Rust" on every page: no name alone
        ("/cycle/", "February Steering Cycle", "The steering cycle starts on 25 February at 3pm GMT. We meet on 25 "
                                               "February at 3pm GMT. Planning runs at 3pm GMT."),
        ("/notes/", "Notes", "We will talk on 25 February at 3pm GMT. The steering cycle follows."),
        ("/hours/", "Hours", "Office hours are on 25 February at 3pm GMT for everyone."),
        ("/edition/", "What is Rust 2018?", "The edition brings modules and lifetimes in 2018 to everyone."),
        ("/merged/", "Merged", "The modules work was merged in August 2018 for everyone."),
        ("/release/", "Release", "Rust 2018 shipped modules for everyone in August 2018."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/notes/"], page["/cycle/"])[0].text == "steering cycle"
    assert finder.anchors(page["/hours/"], page["/cycle/"]) == [Anchor("February Steering Cycle", "title", 0.0)]
    assert finder.anchors(page["/merged/"], page["/edition/"]) == [Anchor("What is Rust 2018?", "title", 0.0)]
    assert finder.anchors(page["/release/"], page["/edition/"])[0].text == "Rust 2018"


def test_titles_that_differ_only_in_when_make_a_series_and_a_release_number_says_what() -> None:
    titles = ["Lang team March update", "Lang team April update", "Rust 2017 Survey Results", "Rust Survey 2018 Results",
              "2019-10-10 Compiler Team Triage Meeting", "2019-11-07 Compiler Team Triage Meeting",
              "Announcing Rust 1.26", "Announcing Rust 1.27.2", "Notes", "Notes", "Lang team update"]
    vocabulary = Vocabulary()
    series = Series.of(titles, [None] * len(titles), [f"/{n}/" for n in range(len(titles))], vocabulary)
    sources, targets = np.repeat(np.arange(len(titles)), len(titles)), np.tile(np.arange(len(titles)), len(titles))
    assert not series.serial[titles.index("Announcing Rust 1.26")] and series.serial[titles.index("Notes")]
    sibling = series.siblings(sources, targets)
    assert {(titles[s], titles[t]) for s, t in zip(sources[sibling], targets[sibling])} == {
        *((a, b) for a, b in itertools.permutations(
            ["Lang team March update", "Lang team April update", "Lang team update"], 2)),
        ("Rust 2017 Survey Results", "Rust Survey 2018 Results"), ("Rust Survey 2018 Results", "Rust 2017 Survey Results"),
        ("2019-10-10 Compiler Team Triage Meeting", "2019-11-07 Compiler Team Triage Meeting"),
        ("2019-11-07 Compiler Team Triage Meeting", "2019-10-10 Compiler Team Triage Meeting"),
    }  # not the releases ("1.26" names one), nor two pages of one title


def test_a_page_of_the_sources_own_series_is_linked_by_a_word_that_sets_it_apart_its_name_or_as_the_one_before(
        site: Site) -> None:
    """Posts titled alike but for when ("Lang team March update", "Lang team April update") share their template's
    words, which name the series, not a post: from the June update, "lang team planning meeting" names no other month's
    post, but "April design" names April's. A month names a post dated near the source, not January's of the
    year before. May's, the one before June's, may be linked ("last time": by its title), and so may February's, whose
    name June's writes out; March's and the January's may not."""
    filler = " ".join(f"Filler sentence {n} about deploys, queues and workers here." for n in range(12))
    for n in range(16):  # the series' words on under COMMON_SHARE of the pages
        site.page(f"/other-{n}/", f"Other Page {n}", f"{filler} Unusual{n} words belong to page {n} only.")
    months = {"January": "2020-01-06", "February": "2021-02-01", "March": "2021-03-01", "April": "2021-04-01",
              "May": "2021-05-03", "June": "2021-06-01"}
    for month, published in months.items():
        said = (" The April design meeting moved. The January design meeting moved too. Read the Lang team February "
                "update too.") if month == "June" else ""
        site.page(f"/{month.lower()}/", f"Lang team {month} update",
                  f"{filler} The lang team planning meeting chose design meetings on const generics.{said}",
                  published=published)
    corpus = site.corpus()
    keywords = Keywords(corpus.texts, corpus.titles)
    page = {month: corpus.urls.index(url(f"/{month.lower()}/")) for month in months}
    finder = AnchorFinder(corpus, keywords)
    assert [anchor.text for anchor in finder.anchors(page["June"], page["February"])] == ["Lang team February update"] * 2
    assert finder.anchors(page["June"], page["April"])[0].text.startswith("April design")
    for month in ("January", "March", "May"):
        assert finder.anchors(page["June"], page[month]) == [Anchor(f"Lang team {month} update", "title", 0.0)]
    queue, _, _ = rank(corpus, Candidates.of(every_pair(corpus, keywords)), finder, 4)
    linked = {item.target: item.anchor for item in queue if item.source == page["June"]}
    assert linked[page["May"]] == Anchor("Lang team May update", "title", 0.0)
    assert linked[page["February"]].text == "Lang team February update"
    assert linked[page["April"]].text.startswith("April design")
    assert page["March"] not in linked and page["January"] not in linked


def test_a_part_of_a_dotted_number_names_nothing_outside_it(site: Site) -> None:
    """"1" and "18" of "Announcing Rust 1.18" name the release only together, as its title writes them: "1 byte" and
    "18 fields" are no anchors for it, "Rust 1.18" is. A word of a dotted name is still a word: "Podfile" names
    "Reading a Podfile.lock"."""
    corpus, finder = filler_site(site, "Rust deploys, queues and workers", [  # "Rust" on every page: no name alone
        ("/release/", "Announcing Rust 1.18", "Rust 1.18 packs byte layouts of enum fields tighter."),
        ("/layouts/", "Layouts", "The option is still 1 byte wide, and 18 fields fit in it."),
        ("/changes/", "Changes", "Since Rust 1.18 the option is still small."),
        ("/lockfile/", "Reading a Podfile.lock", "The lockfile pins every pod."),
        ("/pods/", "Pods", "Check the app's Podfile lockfile before you push."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/layouts/"], page["/release/"]) == [Anchor("Announcing Rust 1.18", "title", 0.0)]
    assert finder.anchors(page["/changes/"], page["/release/"])[0].text == "Rust 1.18"
    podfile = finder.anchors(page["/pods/"], page["/lockfile/"])[0]
    assert podfile.source == "text" and "Podfile" in podfile.text


def test_a_name_too_long_to_be_the_anchor_written_out_holds_the_anchor(site: Site) -> None:
    """A source that writes out a target's name of more than six words cites it there: the anchor is a phrase inside
    that citation, not the same words earlier in the text, which would be the first among equals."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/brood/", "How To Write Unit Tests Like a Brood Parasite", "Brood parasites lay eggs; unit tests borrow nests."),
        ("/reading/", "Reading", "We review unit tests in pairs. "
                                 "Our reading list: How To Write Unit Tests Like a Brood Parasite - on metaphors."),
    ])
    page = page_numbers(corpus)
    text = corpus.texts[page["/reading/"]]
    cited = text.index("How To Write")
    first = finder.anchors(page["/reading/"], page["/brood/"])[0]
    assert first.source == "text" and cited <= first.offset < cited + len("How To Write Unit Tests Like a Brood Parasite")


def test_a_release_written_with_a_trailing_zero_is_that_release(site: Site) -> None:
    """"Rust 1.18.0" is the release "Announcing Rust 1.18" (a trailing ".0" says nothing), as "Rust 1.18" is; "Rust
    1.18.1" is another, and so is a pre-release, "Rust 1.18.0-beta.2". The filler writes no plain "0" (it is told apart
    by words), so the "0" is no word of any target's."""
    trees = "alder birch cedar elm fir hazel larch maple oak pine rowan spruce".split()
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/release/", "Announcing Rust 1.18", "Rust 1.18 packs byte layouts tighter."),
        ("/zero/", "Zero", "In Rust 1.18.0 the option shrank."),
        ("/others/", "Others", "In Rust 1.18.1 the option shrank. In Rust 1.18.0-beta.2 it grew."),
    ], labels=trees)
    page = page_numbers(corpus)
    assert finder.anchors(page["/zero/"], page["/release/"])[0].text == "Rust 1.18.0"
    assert finder.anchors(page["/others/"], page["/release/"])[0].source == "title"


def test_a_window_that_holds_a_verb_such_as_had_or_can_is_a_clause_not_an_anchor(site: Site) -> None:
    """"the compiler team had a planning meeting" says what happened; "planning meeting" names the page. And "kettle
    you can pour" is no name of a kettle's page, nor "Brennan did" of Brennan's; but "is" may stand in a name: "how
    coffee is processed"."""
    corpus, finder = filler_site(site, "deploys, queues and workers", [
        ("/cycle/", "Compiler Planning Meeting", "The compiler team planning meeting sets the cycle."),
        ("/notes/", "Notes", "On Friday the compiler team had a planning meeting about the cycle."),
        ("/kettle/", "Gooseneck Kettle Pouring", "A gooseneck kettle pours slowly."),
        ("/pour/", "Pouring", "Any kettle you can pour from works."),
        ("/processing/", "How Coffee Is Processed", "Washed, natural and honey processing of coffee cherries."),
        ("/buying/", "Buying", "Learn how coffee is processed before you buy."),
    ])
    page = page_numbers(corpus)
    assert finder.anchors(page["/notes/"], page["/cycle/"])[0].text == "planning meeting"
    assert not any("can" in anchor.text.split() for anchor in finder.anchors(page["/pour/"], page["/kettle/"]))
    assert finder.anchors(page["/buying/"], page["/processing/"])[0].text == "how coffee is processed"  # its name


def test_the_best_anchors_of_a_pair_are_the_greedy_choice_in_preference_order() -> None:
    """windows.choose scans each pair's windows (they come by pair, then start): it must pick what a plain sort and a
    greedy scan pick (a whole phrase before one that cuts a collocation, then by preference, then by ending); a clause
    is never chosen. windows.strongest gives each pair's strongest strength, whole or not, of the windows that do not
    start on an article; a clause counts in that strength."""
    rng = np.random.default_rng(3)
    windows = []
    for pair in range(300):
        for _ in range(int(rng.integers(0, 9))):
            start = int(rng.integers(0, 60))
            windows.append((pair, start, start + int(rng.integers(1, 15)), int(rng.integers(0, 4)) / 4,  # many ties
                            bool(rng.random() < 0.8), int(rng.integers(0, 3)), bool(rng.random() < 0.15)))
    windows.sort(key=lambda window: window[:2])  # strong_windows' order (stable: equal starts keep their order)
    pair, starts, ends, strength, whole, ending, clause = (np.array(column) for column in zip(*windows))
    first = 3 * np.arange(len(pair)) + 1  # each window its own two words, the last joined to the next word if it cuts
    words = 3 * len(pair) + 1
    collocated, word_starts, word_ends = np.zeros(words, dtype=bool), np.zeros(words, dtype=np.int64), np.zeros(words, dtype=np.int64)
    collocated[first + 1], word_starts[first], word_ends[first + 1] = ~whole, starts, ends
    clause_word = np.zeros(words, dtype=bool)
    clause_word[first[clause]] = True  # its first word ("had" of "had a meeting"): any word of a window counts
    found = anchors.Found.empty(300)
    strongest(pair, strength.astype(np.float32), ending.astype(np.int8), found.best)
    choose(pair, strength.astype(np.float32), first, first + 1, ending.astype(np.int8), word_starts, word_ends, np.zeros(words + 1, dtype=np.int64),
           collocated, np.concatenate([[0], np.cumsum(clause_word)]), 0.0, found.best, found.starts, found.ends,
           found.strengths)  # preference: strength
    chosen = {owner: [(int(start), int(end), float(value)) for start, end, value in zip(*row) if start >= 0]
              for owner, row in enumerate(zip(found.starts, found.ends, found.strengths))}
    expected: dict[int, list[tuple[int, int, float]]] = {owner: [] for owner in range(300)}
    for place in sorted(range(len(windows)), key=lambda place: (windows[place][0], not windows[place][4], -windows[place][3],
                                                      -windows[place][5], place)):
        owner, start, end, value, *_, is_clause = windows[place]
        taken = expected[owner]
        if not is_clause and len(taken) < anchors.ALTERNATIVES and all(end <= other_start or other_end <= start
                                                                       for other_start, other_end, _ in taken):
            taken.append((start, end, value))
    assert chosen == expected
    assert found.best.tolist() == [max((window[3] for window in windows if window[0] == owner and window[5] != 1), default=0.0)
                                   for owner in range(300)]  # but for an article's windows (ending 1)
    assert sum(map(len, chosen.values())) > 300  # pairs with two or three anchors, not only one
    assert any(not window[4] and (window[1], window[2], window[3]) in chosen[window[0]] for window in windows)  # cut, when no whole one is left
    assert any(window[6] and window[3] == found.best[window[0]] > 0 for window in windows)  # a clause the strongest


def test_an_anchor_is_a_whole_phrase_of_the_site_not_a_piece_of_one() -> None:
    """Where the site writes "working group" as one phrase, "survey working" and "group survey" cut it: the anchors for
    the survey are "survey working group" and "working group survey", though the shorter windows hold as much of the
    target's name. On a site that writes the two words apart, the shorter ones are the anchors."""
    def first_anchors(others: list[str]) -> tuple[str, str]:
        texts = ["This year we asked everyone about their tools in the survey, and the survey showed a lot.",
                 "Every answer was read by the survey working group last week.", "Our working group survey was in May.",
                 *others, *(f"Unrelated page {i} about tea gardens, teapots and the history of porcelain number {i}." for i in range(8))]
        titles = ["The 2024 survey", "Thanks", "Closed", *(f"Other {i}" for i in range(len(others))), *(f"Tea page {i}" for i in range(8))]
        finder = AnchorFinder(plain_corpus(texts, titles), Keywords([f"{t}\n{x}" for t, x in zip(titles, texts)]))
        return finder.anchors(1, 0)[0].text, finder.anchors(2, 0)[0].text
    assert first_anchors(["The working group met on Monday.", "A charter helps a working group."]) == (
        "survey working group", "working group survey")
    assert first_anchors(["The group met on Monday.", "We are working on it."]) == ("survey working", "group survey")
