"""The backtest's pieces: analysis/backtest.py (which links are editorial, which a round hides, the TF-IDF
baseline), on small crawl databases written by hand (handmade.py), with exact expectations.

Weights and constants of analysis/score.py and analysis/anchors.py are still being tuned, so these tests check
mechanisms (what is excluded, what is capped, where an anchor may come from), never a particular score.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from analysis.backtest import HiddenLink, editorial_links, hidden_links, score, tfidf_baseline
from analysis.index import Keywords
from analysis.load import Corpus
from analysis.scope import Scope
from handmade import Site, url


def test_the_tfidf_baseline_keeps_to_the_scope(five: tuple[Corpus, Keywords]) -> None:
    corpus, _ = five
    everything = tfidf_baseline(corpus, 4)  # every unlinked pair: four a page of five
    assert len(everything) == 5 * 4 - 1
    scoped = tfidf_baseline(corpus, 4, Scope(exclude=("/p1/",), targets=("/p[023]/",)).of(corpus.urls))
    assert scoped == {(source, target): title for (source, target), title in everything.items()
                      if source != 1 and target in (0, 2, 3)}


def test_a_link_between_two_copies_of_one_page_is_no_editorial_link(site: Site) -> None:
    """Two pages with the same main text (a type re-exported under two paths) are one page to the engine, never a
    suggestion; the backtest hides no link between them, nor scores any method on one."""
    sentence = "A set keeps its items sorted, and retain keeps only the items a predicate accepts."
    text = " ".join([sentence] * 6)
    for path, title in (("/set/", "BTreeSet"), ("/reexported/set/", "BTreeSet"), ("/map/", "BTreeMap")):
        site.page(path, title, text if title == "BTreeSet" else f"{text} A map sorts its keys.")
    site.link("/set/", "/reexported/set/", "retain", context=sentence)
    site.link("/set/", "/map/", "items sorted", context=sentence)
    assert [(link.source, link.resolved) for link in editorial_links(site.db, site.corpus())] == [(url("/set/"), url("/map/"))]


def test_a_button_without_a_word_is_no_editorial_link(site: Site) -> None:
    """A manual's row of buttons ("[ << ] [ < ] [ Up ] [ > ] [ >> ]", as texinfo writes one on every page) crawls as
    content, but no editor linked "<<" in a sentence: the backtest hides no such link."""
    text = " ".join(["A set keeps its items sorted, and retain keeps only the items a predicate accepts."] * 6)
    buttons, sentence = "[ << ] [ < ] [ Up ] [ > ] [ >> ] [Top] [Contents] [Index]", "Collect them into a vector when order matters."
    for path, title in (("/set/", "BTreeSet"), ("/map/", "BTreeMap"), ("/vec/", "Vec")):
        site.page(path, title, f"{buttons}\n{text} {sentence}" if path == "/set/" else f"{text} {title} here.")
    site.link("/set/", "/map/", "<<", context=buttons)
    site.link("/set/", "/vec/", "a vector", context=sentence)
    assert [(link.source, link.resolved) for link in editorial_links(site.db, site.corpus())] == [(url("/set/"), url("/vec/"))]


def test_a_backtest_round_hides_a_link_whatever_the_others_and_the_port() -> None:
    """Which links a round hides depends on each link alone: a re-crawl (another port) that gains one editorial link
    and loses another hides the same others, so that two crawls' figures compare."""
    def links(port: int, paths: range) -> list[HiddenLink]:
        return [HiddenLink(f"http://127.0.0.1:{port}/p{n}/", f"http://127.0.0.1:{port}/t{n}/",
                           (f"http://127.0.0.1:{port}/t{n}/",), ("anchor",)) for n in paths]

    def hidden(port: int, paths: range, seed: int) -> set[str]:
        return {urlsplit(link.source).path for link in hidden_links(links(port, paths), 0.2, seed)}

    first = hidden(8000, range(100), 1)
    assert len(first) == 20 and first == hidden(9000, range(100), 1)
    assert len(first ^ hidden(9000, range(1, 101), 1)) <= 2  # one link out, one in: at most one hidden changes
    assert first != hidden(8000, range(100), 2)


def test_a_page_linked_twice_from_one_source_is_hidden_whole_with_both_texts(site: Site) -> None:
    """A source that links one page by two of its URLs ("/map" redirects to "/map/") and with two texts: hiding one
    link would leave the pair linked by the other, which no method could then find. The pair is one editorial link,
    hidden with all its URLs, and an anchor agrees with the editor if it agrees with either text."""
    first = "A map sorts its keys, and a range of them comes in order."
    second = "Keep the counts in an ordered map when you print them."
    text = " ".join(["A set keeps its items sorted, and retain keeps only the items a predicate accepts."] * 6)
    site.page("/set/", "BTreeSet", f"{text} {first} {second}")
    site.page("/map/", "BTreeMap", f"{text} A map sorts its keys.")
    site.page("/map", redirect_to="/map/", status=301)
    site.link("/set/", "/map/", "map sorts its keys", context=first)
    site.link("/set/", "/map", "ordered map", context=second)
    [link] = editorial_links(site.db, site.corpus())
    assert (link.source, link.resolved, link.targets, link.anchors) == (
        url("/set/"), url("/map/"), (url("/map/"), url("/map")), ("map sorts its keys", "ordered map"))
    corpus = site.corpus(hidden={(link.source, target) for target in link.targets})
    assert len(corpus.content_codes) == 0  # unlinked, as if the editor had written neither link
    pair = (corpus.index[link.source], corpus.index[link.resolved])
    agreement = {anchor: score("engine", 1, corpus, [link], {pair: anchor}, 4).anchor_agreement
                 for anchor in ("an ordered map", "its keys", "sorted items")}
    assert agreement == {"an ordered map": 1.0, "its keys": 1.0, "sorted items": 0.0}  # the second text, the first, none
