"""The anchor search's inner loops, compiled: where each pair's target terms occur in its source, then every window
around a matched rare word, bounded, then scored, then each pair's best few.

numpy could do these only as whole-array passes over every (match, window, size, step) cell,
which were most of the anchor search, the longest stage after embedding (BENCHMARKS.md,
"Analysis"); compiled (compiled.py), each is a loop, and anchors.py's threads run them at once.

The arithmetic is numpy's, step for step and type for type (float32 strengths and IDF comparisons,
float64 bounds), so the matches, windows and strengths are those the array passes found, to the
last bit (BENCHMARKS.md).
"""

from __future__ import annotations

import numpy as np

from analysis.compiled import compiled
from analysis.phrases import MAX_WORDS, MIN_WORDS

EXTRA_WORD_PENALTY = 0.08  # per word of the phrase that is not a term of the target
MIN_STRENGTH = 0.3  # a phrase weaker than this is not an anchor
BOUND_SLACK = 1e-3  # upper bounds are compared with MIN_STRENGTH less this (float32 sums, strengths rounded to 4 places)
WINDOWS_AT_FIRST = 1024  # strong_windows' arrays at first; grown twofold as they fill


@compiled
def find_matches(targets: np.ndarray, pages: np.ndarray, term_starts: np.ndarray, term_ids: np.ndarray,
                 term_weights: np.ndarray, term_titled: np.ndarray, term_rare: np.ndarray, term_in_number: np.ndarray,
                 whole_title: np.ndarray, run_keys: np.ndarray, terms: int, runs: np.ndarray, order: np.ndarray,
                 own_title: np.ndarray, dotted_before: np.ndarray, content_before: np.ndarray):
    """Every occurrence, in pair j's source (pages[j] of some Phrases), of a term of its target (targets[j], whose
    terms are term_*[term_starts[t]:term_starts[t + 1]], anchors.TargetTerms), as the attributes of anchors.Matches:
    codes j * words + word, sorted, then weights, rare, seeds, titled, partial, own.

    A term is looked up among the source's runs (Phrases.run_keys, runs and order), marked by term in one dense array
    while the source's pairs are read (a hash look-up each cost more). Seeds, the words a window may be built around:
    the rare terms and, for a whole_title target whose every title word the source holds, the title word it holds
    fewest times (the first of them: a window that holds the whole title holds that word too). Only the pairs whose
    source holds a seed can have a window: the others' matches are not made. A match inside a dotted word ("1.29.2")
    that the target's terms do not hold whole (every content part) is partial: it weighs nothing and seeds nothing.
    "1.29.2" does not name "Announcing Rust 1.29.1", nor "Cargo.toml" the page "Hello, Cargo!": the reader sees
    another name. So is a match outside a dotted word of a term that the target's title writes only inside one
    (term_in_number): "Tier 2" or "1 byte" name no "Announcing Rust 1.29.2" or "Announcing Rust 1.18"."""
    words = len(own_title)
    first_query = np.zeros(len(targets) + 1, np.int64)
    for pair in range(len(targets)):
        first_query[pair + 1] = first_query[pair] + term_starts[targets[pair] + 1] - term_starts[targets[pair]]
    low, high = np.zeros(first_query[-1], np.int64), np.zeros(first_query[-1], np.int64)
    seed, named, total = np.zeros(first_query[-1], np.bool_), np.zeros(len(targets), np.bool_), 0
    held_queries = np.empty(first_query[-1], np.int64)  # by pair, the queries its source holds (held_from)
    held_from = np.zeros(len(targets) + 1, np.int64)
    lowest, highest = np.empty(len(targets), np.int64), np.empty(len(targets), np.int64)  # of the words they hold
    run_of, page = np.full(terms + 1, -1, np.int64), -1  # the current page's run of each term
    for pair in range(len(targets)):
        target, base = targets[pair], first_query[pair]
        if pages[pair] != page:  # the pairs come by source: each page's runs are marked once
            page = _mark_runs(run_of, run_keys, terms, page, pages[pair])
        present, fewest, chosen, rare_held, occurrences = 0, np.iinfo(np.int64).max, -1, False, 0
        kept, lowest[pair], highest[pair] = held_from[pair], words, -1
        for query in range(base, first_query[pair + 1]):
            term = term_starts[target] + query - base
            run = run_of[term_ids[term]]
            if run >= 0:  # a run's words are in order (Phrases.order): its first and last are its lowest and highest
                low[query], high[query] = runs[run], runs[run + 1]
                held_queries[kept], occurrences, kept = query, occurrences + high[query] - low[query], kept + 1
                lowest[pair] = min(lowest[pair], order[low[query]])
                highest[pair] = max(highest[pair], order[high[query] - 1])
            seed[query] = term_rare[term]
            rare_held |= run >= 0 and term_rare[term]
            if term_titled[term]:
                present += high[query] > low[query]
                if high[query] - low[query] < fewest:
                    fewest, chosen = high[query] - low[query], query
        held_from[pair + 1] = kept
        if whole_title[target] > 0 and present >= whole_title[target]:
            seed[chosen] = True
            rare_held |= high[chosen] > low[chosen]
        named[pair] = rare_held  # a seed held: a window may be built around it
        total += occurrences if named[pair] else 0
    codes, query_of = np.empty(total, np.int64), np.empty(total, np.int64)
    weights = np.zeros((term_weights.shape[0], total), term_weights.dtype)
    rare, seeds = np.zeros(total, np.bool_), np.zeros(total, np.bool_)
    titled, partial, own = np.zeros(total, np.bool_), np.zeros(total, np.bool_), np.zeros(total, np.bool_)
    made, bits, query_at = 0, np.zeros(words // 64 + 1, np.int64), np.empty(words, np.int64)
    for pair in range(len(targets)):
        if not named[pair]:
            continue
        start, base = made, pair * words
        made = _in_word_order(codes, query_of, made, base, held_queries[held_from[pair]:held_from[pair + 1]], low, high,
                              order, lowest[pair], highest[pair], bits, query_at)
        for match in range(start, made):
            word, query = codes[match] - base, query_of[match]
            first = last = word  # the word a reader sees it in: its words joined by dots
            while first > 0 and dotted_before[first] > dotted_before[first - 1]:
                first -= 1
            while dotted_before[last + 1] > dotted_before[last]:
                last += 1
            held = 1
            if first < last:  # a dotted word: are its content parts all matched?
                for other in range(match - 1, start - 1, -1):
                    if codes[other] < base + first:
                        break
                    held += 1
                for other in range(match + 1, made):
                    if codes[other] > base + last:
                        break
                    held += 1
            term = term_starts[targets[pair]] + query - first_query[pair]
            whole = held >= content_before[last + 1] - content_before[first] and (first < last or not term_in_number[term])
            if whole:
                weights[:, match] = term_weights[:, term]
            rare[match] = term_rare[term] and whole
            seeds[match], titled[match] = seed[query] and whole, term_titled[term] and whole
            partial[match], own[match] = not whole, own_title[word]
    return codes, weights, rare, seeds, titled, partial, own


@compiled
def names_held(targets: np.ndarray, pages: np.ndarray, name_starts: np.ndarray, term_starts: np.ndarray,
               name_terms: np.ndarray, run_keys: np.ndarray, terms: int) -> tuple[np.ndarray, np.ndarray]:
    """(j, name) of each name of pair j's target (targets[j], whose names are name_starts[t]:name_starts[t + 1], name
    n's terms name_terms[term_starts[n]:term_starts[n + 1]]: names.PageNames) whose every term pair j's source
    (pages[j] of some Phrases, whose run_keys these are) holds, by j."""
    asked = 0
    for pair in range(len(targets)):
        asked += name_starts[targets[pair] + 1] - name_starts[targets[pair]]
    pairs, names, held = np.empty(asked, np.int64), np.empty(asked, np.int64), 0
    run_of, page = np.full(terms + 1, -1, np.int64), -1  # the current page's run of each term, as in find_matches
    for pair in range(len(targets)):
        if pages[pair] != page:
            page = _mark_runs(run_of, run_keys, terms, page, pages[pair])
        for name in range(name_starts[targets[pair]], name_starts[targets[pair] + 1]):
            every = True
            for term in range(term_starts[name], term_starts[name + 1]):
                every &= run_of[name_terms[term]] >= 0
            if every:
                pairs[held], names[held] = pair, name
                held += 1
    return pairs[:held], names[:held]


@compiled
def runs_held(text_hashes: np.ndarray, text_starts: np.ndarray, name_hashes: np.ndarray, name_starts: np.ndarray,
              texts: np.ndarray, names: np.ndarray) -> np.ndarray:
    """Whether text texts[k]'s runs hold name names[k]'s one after the other, for each k, by their hashes
    (words.run_hashes: text t's are text_hashes[text_starts[t]:text_starts[t + 1]], name n's likewise): False says the
    text does not write the name out; True, that it may (AnchorFinder.names_said)."""
    held = np.zeros(len(texts), np.bool_)
    for asked in range(len(texts)):
        first, size = name_starts[names[asked]], name_starts[names[asked] + 1] - name_starts[names[asked]]
        for at in range(text_starts[texts[asked]], text_starts[texts[asked] + 1] - size + 1):
            same = True
            for offset in range(size):
                if text_hashes[at + offset] != name_hashes[first + offset]:
                    same = False
                    break
            if same:
                held[asked] = True
                break
    return held


@compiled
def _mark_runs(run_of: np.ndarray, run_keys: np.ndarray, terms: int, page: int, next_page: int) -> int:
    """Set run_of[term] back to -1 for each term of the page marked so far (-1: none), then to the run of each term of
    the next page (its key's place in the sorted Phrases.run_keys); returns the next page."""
    for marked, run_or_none in ((page, False), (next_page, True)):
        first = marked * (terms + 1) + 1
        for run in range(np.searchsorted(run_keys, first), np.searchsorted(run_keys, first + terms)):
            run_of[run_keys[run] - first] = run if run_or_none else -1
    return next_page


_DE_BRUIJN = 0x022FDD63CC95386D  # a de Bruijn sequence: its product with a lone bit says the bit's place (_BIT_AT)
_BIT_AT = np.argsort([((_DE_BRUIJN << place) & (2**64 - 1)) >> 58 for place in range(64)])


@compiled
def _in_word_order(codes: np.ndarray, query_of: np.ndarray, made: int, base: int, queries: np.ndarray, low: np.ndarray,
                   high: np.ndarray, order: np.ndarray, lowest: int, highest: int, bits: np.ndarray,
                   query_at: np.ndarray) -> int:
    """Write the occurrences of these queries (words order[low[q]:high[q]] of one page, distinct, lowest..highest) at
    codes[made:] as base + word, in word order, with their query; return the new end. A bit a word over the words they
    span, read back in order: no sort (an insertion sort of each pair's, or an argsort where they were many, was 30%
    of find_matches)."""
    blocks = ((highest - lowest) >> 6) + 1
    bits[:blocks] = 0
    for query in queries:
        for at in range(low[query], high[query]):
            query_at[order[at]] = query
            bits[(order[at] - lowest) >> 6] |= np.int64(1) << ((order[at] - lowest) & 63)
    for block in range(blocks):
        word_bits = bits[block]
        while word_bits != 0:
            bit = word_bits & -word_bits  # the lowest bit set
            word = lowest + (block << 6) + _BIT_AT[((bit * _DE_BRUIJN) >> 58) & 63]
            codes[made], query_of[made] = base + word, query_at[word]
            made += 1
            word_bits ^= bit
    return made


@compiled
def strong_windows(codes: np.ndarray, weights: np.ndarray, rare: np.ndarray, seeds: np.ndarray, titled: np.ndarray,
                   partial: np.ndarray, own: np.ndarray, sets_apart: np.ndarray, whole_title: np.ndarray,
                   sibling: np.ndarray, words: int, valid: np.ndarray, content_before: np.ndarray, article: np.ndarray,
                   when_before: np.ndarray, own_title_before: np.ndarray, previous_same: np.ndarray,
                   versioned_before: np.ndarray, best_only: bool):
    """(first word, last word, pair, strength, title only, ending) of every window of MIN_WORDS..MAX_WORDS words that
    holds a seed and reaches MIN_STRENGTH, by pair, then first word, then size; with best_only, only those that may be
    their pair's strongest (choose's best), the others skipped where their upper bound says they are not.

    codes (sorted) are the matches, pair * words + word, with their attributes (anchors.Matches). A window starts at
    most MAX_WORDS - 1 words before a seed whose nearby matched weight may reach MIN_STRENGTH, at a word whose next
    MAX_WORDS words' matched weight may, and spans the seed. Its upper bound (every match counted, a repeated term
    each time) is checked first; its strength counts each target term once, less EXTRA_WORD_PENALTY per other content
    word and for an article it starts on ("the AeroPress" weighs what "portable AeroPress" and "AeroPress brews" do),
    and is 0 for a window that holds no rare word and not every title word of a whole_title target, that holds a
    partial match, or whose words of the target are all words of its own page's title, some not the target's title
    words, or that says nothing but its own page's title words, not all the target's, or whose words of the target
    all say when (when_before counts such words before each word: "3pm GMT", "25 February", or "merged in August
    2018" for "What is Rust 2018?", name no page; "Rust 2018" does), or whose target is of its source's series
    (sibling, series.py) and that holds no match that sets it apart (anchors.Matches.sets_apart: "steering cycle" on
    the February steering cycle's page names no other month's, "sprint 1 post" on sprint 2's names sprint 1's). "Title
    only": the window holds no rare word
    (anchors.py keeps it only if it is the title). Ending
    (choose's last preference, among windows equal in all else): 1 for a window that starts on an article ("the
    AeroPress"), else 2 for one that ends on a word of its target ("portable AeroPress"), 0 for the others ("AeroPress
    brews").

    best_only: most candidates of a source never enter the queue, and their anchor search is wanted only for the
    strength it adds to their score (score.py): a window whose bound is under the strongest window found so far of
    its pair that surely counts cannot be the best. One surely counts if it is not title only and holds no version
    number (anchors.py may drop those; versioned_before counts the words of version numbers before each word), and
    starts on no article (choose does not count those).
    """
    count = len(codes)
    weight_before = np.zeros(count + 1)
    for at in range(count):
        weight_before[at + 1] = weight_before[at] + weights[at]
    capacity = WINDOWS_AT_FIRST
    firsts, lasts, pairs = np.empty(capacity, np.int64), np.empty(capacity, np.int64), np.empty(capacity, np.int64)
    strengths, title_only = np.empty(capacity, np.float32), np.empty(capacity, np.bool_)
    endings = np.empty(capacity, np.int8)
    state = np.zeros(_STATE, np.int64)  # where the scan stopped: it stops when the windows might not fit
    state[_LAST_START], state[_PAIR] = -1, -1
    surest = np.zeros(1, np.float32)  # with best_only: the strongest window of state[_PAIR] that surely counts
    while not _scan(state, surest, codes, weights, rare, seeds, titled, partial, own, sets_apart, whole_title, sibling,
                    words, valid, content_before, article, when_before, own_title_before, previous_same,
                    versioned_before, best_only, weight_before, firsts, lasts, pairs, strengths, title_only, endings):
        capacity *= 2
        firsts, lasts, pairs = _grown(firsts, capacity), _grown(lasts, capacity), _grown(pairs, capacity)
        strengths, title_only, endings = _grown(strengths, capacity), _grown(title_only, capacity), _grown(endings, capacity)
    kept = state[_KEPT]
    return firsts[:kept], lasts[:kept], pairs[:kept], strengths[:kept], title_only[:kept], endings[:kept]


_SEED, _KEPT, _LAST_START, _NEAR_LOW, _NEAR_HIGH, _LOW, _PAIR, _STATE = range(8)  # strong_windows' scan state, by place
WINDOWS_A_SEED = MAX_WORDS * (MAX_WORDS - MIN_WORDS + 1)  # the most windows one seed adds: each start before it, each size


@compiled
def _scan(state: np.ndarray, surest: np.ndarray, codes: np.ndarray, weights: np.ndarray, rare: np.ndarray,
          seeds: np.ndarray, titled: np.ndarray, partial: np.ndarray, own: np.ndarray, sets_apart: np.ndarray,
          whole_title: np.ndarray, sibling: np.ndarray, words: int, valid: np.ndarray, content_before: np.ndarray,
          article: np.ndarray, when_before: np.ndarray,
          own_title_before: np.ndarray, previous_same: np.ndarray, versioned_before: np.ndarray, best_only: bool,
          weight_before: np.ndarray,
          firsts: np.ndarray, lasts: np.ndarray, pairs: np.ndarray, strengths: np.ndarray, title_only: np.ndarray,
          endings: np.ndarray) -> bool:
    """strong_windows from the state on, into the arrays: True when every seed is done, False (the state kept) when
    the arrays may not hold a next seed's windows. Arrays are never replaced here: a grown array assigned in the loop
    had numba count references at every step (a third of the time)."""
    extra, least = np.float32(EXTRA_WORD_PENALTY), np.float32(MIN_STRENGTH)
    count, capacity = len(codes), len(firsts)
    kept, last_start, pair_now = state[_KEPT], state[_LAST_START], state[_PAIR]
    near_low, near_high, low = state[_NEAR_LOW], state[_NEAR_HIGH], state[_LOW]
    floor = MIN_STRENGTH  # a window whose bound is under this less BOUND_SLACK is skipped
    pair_base = pair_now * words if pair_now >= 0 else -words  # the code of the pair's word 0
    reach = low  # past the matches of the longest window from the start (MAX_WORDS words)
    for seed_at in range(state[_SEED], count):
        if not seeds[seed_at]:
            continue
        if capacity - kept < WINDOWS_A_SEED:
            state[_SEED], state[_KEPT], state[_LAST_START], state[_PAIR] = seed_at, kept, last_start, pair_now
            state[_NEAR_LOW], state[_NEAR_HIGH], state[_LOW] = near_low, near_high, low
            return False
        seed = codes[seed_at]
        if seed - pair_base >= words:  # the next pair's (the codes ascend): a division a pair, not one a seed and start
            pair_now, surest[0] = seed // words, 0
            pair_base = pair_now * words
        if best_only:
            floor = max(MIN_STRENGTH, np.float64(surest[0]))
        while codes[near_low] < seed - MAX_WORDS + 1:
            near_low += 1
        while near_high < count and codes[near_high] <= seed + MAX_WORDS - 1:
            near_high += 1
        if weight_before[near_high] - weight_before[near_low] < floor - BOUND_SLACK:
            continue
        back = min(seed - pair_base, MAX_WORDS - 1)
        for start in range(max(seed - back, last_start + 1), seed + 1):  # starts in order, each once, in the seed's pair
            last_start = start
            pair, first, base = pair_now, start - pair_base, pair_base
            while codes[low] < start:
                low += 1
            reach = max(reach, low)
            while reach < count and codes[reach] <= start + MAX_WORDS - 1:
                reach += 1
            if weight_before[reach] - weight_before[low] < floor - BOUND_SLACK:
                continue  # no window from here reaches it: a bound is no more than its matches' weight (weights >= 0)
            high = low
            for size in range(MIN_WORDS, MAX_WORDS + 1):
                while high < count and codes[high] <= start + size - 1:
                    high += 1
                if size < seed - start + 1 or not valid[first, size - MIN_WORDS]:
                    continue
                last = first + size - 1
                content = np.float32(content_before[last + 1] - content_before[first])
                bound = weight_before[high] - weight_before[low] + EXTRA_WORD_PENALTY * ((high - low) - np.float64(content))
                if bound < floor - BOUND_SLACK:
                    continue
                strength = -extra * (content + np.float32(article[first]))
                holds_rare = holds_partial = False
                all_own = all_titled = True
                title_words = hits = 0
                for index in range(low, high):  # the window's matches, in word order (one a word at most)
                    once = previous_same[codes[index] - base] < first
                    added = (np.float64(weights[index]) if once else 0.0) + EXTRA_WORD_PENALTY  # numpy: float64, then float32
                    strength = np.float32(np.float64(strength) + added)
                    holds_rare |= rare[index]
                    holds_partial |= partial[index]
                    title_words += once and titled[index]
                    hits += 1
                    all_own &= own[index]
                    all_titled &= titled[index]
                only_own = np.float32(own_title_before[last + 1] - own_title_before[first]) == content
                own_name = (all_own and not all_titled) or (only_own and hits < content)
                named = ((holds_rare or (whole_title[pair] > 0 and title_words >= whole_title[pair]))
                         and not holds_partial and not own_name)
                if named and when_before[last + 1] > when_before[first]:  # few windows hold a word that says when
                    named = _says_what(codes, low, high, base, when_before)
                if named and sibling[pair]:  # few pairs are of one series
                    named = sets_apart[low:high].any()
                strength = np.float32(np.rint(strength * np.float32(10000)) / np.float32(10000)) if named else np.float32(0)
                if strength < least:
                    continue
                firsts[kept], lasts[kept], pairs[kept] = first, last, pair
                strengths[kept], title_only[kept] = strength, not holds_rare
                endings[kept] = 1 if article[first] else 2 * (high > low and codes[high - 1] == start + size - 1)
                kept += 1
                if (best_only and holds_rare and not article[first] and strength > surest[0]
                        and versioned_before[last + 1] == versioned_before[first]):
                    surest[0] = strength
                    floor = max(MIN_STRENGTH, np.float64(strength))
    state[_KEPT] = kept
    return True


@compiled
def _says_what(codes: np.ndarray, low: int, high: int, base: int, when_before: np.ndarray) -> bool:
    """Whether one of the matches low..high (words codes - base) says more than when."""
    for index in range(low, high):
        word = codes[index] - base
        if when_before[word + 1] == when_before[word]:
            return True
    return False


@compiled
def _grown(values: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.empty(capacity, values.dtype)
    grown[:len(values)] = values
    return grown


@compiled
def cuts_a_collocation(first: int, last: int, collocated: np.ndarray) -> bool:
    """Whether the window from word first to word last cuts one of the site's collocations at either end (phrases.
    Phrases.collocated): "survey working" of "the survey working group", "generics and GATs" of "const generics and
    GATs". Beside choose, which calls it: numba recompiles a cached function when its own file changes, not another's."""
    return collocated[last] or (first > 0 and collocated[first - 1])


@compiled
def spoken_words(first: int, last: int, dotted_before: np.ndarray) -> int:
    """Words of the window from word first to word last as a reader counts them (phrases.Phrases.dotted_before): "Rust
    1.32.0" is two."""
    return last - first + 1 - (dotted_before[last] - dotted_before[first])


@compiled
def strongest(pair: np.ndarray, strength: np.ndarray, ending: np.ndarray, best: np.ndarray) -> None:
    """Fill each pair's strongest strength (best) from its windows (pair[w], strength[w]): every window but those that
    start on an article (ending 1) counts: the source names the target whether or not a phrase runs on, and "the
    advisory" says no more of it than "security issue in the advisory" does. A window that holds a word of a clause
    counts too, though choose never shows it."""
    for window in range(len(pair)):
        if ending[window] != 1:  # an article adds a word to show, not evidence: no stronger than the phrase without it
            best[pair[window]] = max(best[pair[window]], strength[window])


@compiled
def choose(pair: np.ndarray, strength: np.ndarray, first: np.ndarray, last: np.ndarray, ending: np.ndarray,
           word_starts: np.ndarray, word_ends: np.ndarray, dotted_before: np.ndarray, collocated: np.ndarray,
           clause_before: np.ndarray, shorter: float, best: np.ndarray, chosen_starts: np.ndarray,
           chosen_ends: np.ndarray, chosen_strengths: np.ndarray) -> None:
    """Fill each pair's most preferred windows that do not overlap, one a column of chosen_* (their character spans,
    from word first to word last: word_starts, word_ends; the earliest first among equals), greedily. The windows come
    by pair (strong_windows' order); a window's preference is its strength less `shorter` times the pair's best (the
    strongest of its windows: strongest) for each word a reader counts (spoken_words), and one that cuts none of the
    site's collocations (cuts_a_collocation) goes before any that does: "survey working group", not "survey working";
    among equals, by ending (strong_windows: "portable AeroPress", then "the AeroPress", then "AeroPress brews"). A
    window that holds a word of a clause (clause_before counts them before each word: "Compiler team had a planning
    meeting") is never chosen. Each window's words are read here, not by numpy passes over them all (~21 ns a window:
    1.8 CPU-s at 100,000 synthetic pages)."""
    count, slots = len(pair), chosen_starts.shape[1]
    run = 0
    while run < count:
        owner, end = pair[run], run
        while end < count and pair[end] == owner:
            end += 1
        step = np.float32(shorter) * best[owner]
        preference, whole = np.empty(end - run), np.empty(end - run, np.bool_)
        starts, ends = np.empty(end - run, word_starts.dtype), np.empty(end - run, word_ends.dtype)
        for at in range(run, end):
            spoken = spoken_words(first[at], last[at], dotted_before)
            preference[at - run] = np.float64(strength[at]) - np.float64(step) * np.float64(spoken)
            whole[at - run] = not cuts_a_collocation(first[at], last[at], collocated)
            starts[at - run], ends[at - run] = word_starts[first[at]], word_ends[last[at]]
        left = np.empty(end - run, np.bool_)
        for at in range(run, end):
            left[at - run] = clause_before[last[at] + 1] == clause_before[first[at]]  # a clause is shown nowhere
        for slot in range(slots):
            top = -1
            for at in range(end - run):
                if left[at] and (top < 0 or (whole[at], preference[at], ending[run + at])
                                 > (whole[top], preference[top], ending[run + top])):
                    top = at
            if top < 0:
                break
            start, stop = starts[top], ends[top]
            chosen_starts[owner, slot], chosen_ends[owner, slot] = start, stop
            chosen_strengths[owner, slot] = strength[run + top]
            for at in range(end - run):
                left[at] &= not (starts[at] < stop and start < ends[at])
        run = end


@compiled
def other_versions(first: np.ndarray, last: np.ndarray, pair: np.ndarray, targets: np.ndarray, version_first: np.ndarray,
                   version_last: np.ndarray, version_ids: np.ndarray, name_starts: np.ndarray,
                   name_versions: np.ndarray, qualified_ids: np.ndarray, qualified_starts: np.ndarray,
                   name_qualified: np.ndarray) -> np.ndarray:
    """Whether each window (first to last word, of pair[w], whose target is targets[pair[w]]) writes a version number
    (phrases.Phrases.version_*, sorted by first word, each an id: version_ids, -1 for one no name writes) that its
    target's name does not (its ids name_versions[name_starts[t]:name_starts[t + 1]]): "Rust 1.45.1" names no page
    "Announcing Rust 1.45.2", though 1, 45 and 1 are all words of its title, and "version 3.18" no command of CMake's,
    though many of their pages were new in one version or another (a number among a page's topic words). Or one
    written after a word as some page's name writes it, and the target's does not (qualified_ids, -1 for none;
    name_qualified[qualified_starts[t]:qualified_starts[t + 1]]): "Rust 1.24.0" is the release of "Announcing Rust
    1.24", not of "Announcing Rustup 1.24.0". A window holds a version number whole or not at all
    (phrases._valid_windows)."""
    other = np.zeros(len(first), np.bool_)
    for window in range(len(first)):
        target = targets[pair[window]]
        number = np.searchsorted(version_first, first[window])
        while number < len(version_first) and version_last[number] <= last[window] and not other[window]:
            unnamed = not _among_ids(version_ids[number], name_versions, name_starts[target], name_starts[target + 1])
            other[window] = unnamed or (qualified_ids[number] >= 0 and not _among_ids(
                qualified_ids[number], name_qualified, qualified_starts[target], qualified_starts[target + 1]))
            number += 1
    return other


@compiled
def _among_ids(wanted: int, ids: np.ndarray, start: int, end: int) -> bool:
    """Whether ids[start:end] holds wanted."""
    for place in range(start, end):
        if ids[place] == wanted:
            return True
    return False
