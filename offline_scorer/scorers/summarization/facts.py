"""Facts: what a coverage question asks about, one piece of information each.

A source sentence often carries several facts ("The new shop will open at 6:30 a.m. on weekdays
and 7:30 a.m. on weekends, and will sell sandwiches and soup at lunchtime"); asked whole, it is
judged answered when the summary keeps one of them, so coverage counted sentences where people
count facts. Here a sentence is cut at its clauses: where a coordinating word joins two clauses
(", and existing appointments will be transferred"), or two predicates of one subject (", and
will sell sandwiches": the subject is repeated, "the new shop will sell sandwiches"). Each fact
is made only of the source's words, in their order, and is a whole statement: a cut is made
only where both sides state something (a verb, enough content words, balanced brackets and
quotes), else the sentence stays whole. A transcript line ("Gabriel: I'll bring the cake.")
is its speaker's statement, kept with the name. A sentence that asks states no fact.

The rules are a small closed lexicon (auxiliaries, coordinating words, common irregular past
forms), not a parser: a parser model's version would move every question, and so every
recorded coverage request, and none that covers the languages this product reads is published
on PyPI by its authors. Which facts are asked is chosen by their weight in the source
(`chosen`): SumBasic's rule, which prefers facts made of the words the source repeats and lowers
the weight of words already asked about, so the questions spread over what the source says most
rather than its first sentences.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from offline_scorer.scorers.summarization.grounding import QUESTION_FRAME, content_words, sentences
from offline_scorer.scorers.summarization.known_words import LATIN, is_word
from offline_scorer.scorers.summarization.lexicon import (
    ASKING,
    AUXILIARIES,
    COORDINATORS,
    FILLERS,
    FOLLOWS_A_VERB,
    IRREGULAR_PAST,
    NEVER_LAST,
    NOT_IN_A_SUBJECT,
    OPENERS,
    PRONOUNS,
    TOKEN,
    tokens,
)
from offline_scorer.scorers.summarization.stems import stem

MIN_FACT_CONTENT_WORDS = 3
"""A piece cut from a sentence must keep this many content words, or the cut is not made."""
_JOIN = re.compile(r"(?:;\s+|,\s+(?P<word>[A-Za-z]+)\s+|\s+and\s+(?=(?P<aux>[a-z]+)\b))")
"""Where a sentence may be cut: a semicolon; a comma and a coordinating word; "and" before an
auxiliary without a comma ("will open at six and will sell bread")."""
_SPEAKER = re.compile(r"^(?P<speaker>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}): (?P<said>\S.*)$")
"""A transcript line's speaker: one to four capitalised words and a colon ("Project Manager:")."""
_PAIRS = (("(", ")"), ("[", "]"), ("\u201c", "\u201d"))


@dataclass(frozen=True)
class Fact:
    """One fact of the source: `text`, a statement in the source's words; `speaker`, who said
    it, in a transcript; `order`, where it stands in the source."""

    text: str
    order: int
    speaker: str | None = None

    def statement(self) -> str:
        """The fact as a statement a question can be made of."""
        if self.speaker is None:
            return self.text
        return f'{self.speaker} said "{self.text}"'

    def question(self) -> str:
        """The closed question asking it: "Is it true that <statement>?", the statement as it
        is (its case set by `facts_of`; a time's "a.m." keeps its period)."""
        body = self.statement()
        return f"{QUESTION_FRAME}{body}{'.' if body.endswith(('a.m', 'p.m')) else ''}?"


def _verb_at(words: list[str], at: int) -> bool:
    """Whether words[at] can only be read as a verb that opens a predicate: an auxiliary, a
    common irregular past form, or a past form in -ed followed by a word that follows verbs."""
    word = words[at]
    if word in AUXILIARIES or word in IRREGULAR_PAST:
        return True
    regular = len(word) > 4 and word.endswith("ed") and not word.endswith("eed")
    return regular and at + 1 < len(words) and words[at + 1] in FOLLOWS_A_VERB


def _subject(clause: str) -> str | None:
    """The words before the clause's first verb (`_verb_at`), when they read as a subject: a
    few words, not a lone pronoun, no infinitive or clause in them, brackets balanced."""
    matches = list(TOKEN.finditer(clause.lower().replace("\u2019", "'")))
    words = [m.group() for m in matches]
    for at in range(min(len(words), 14)):
        if _verb_at(words, at):
            subject = clause[: matches[at].start()].strip().rstrip(",")
            head = words[:at]
            if not head or (len(head) == 1 and head[0] in PRONOUNS):
                return None
            if NOT_IN_A_SUBJECT.intersection(head) or not _balanced(subject):
                return None
            return subject
    return None


def _balanced(text: str) -> bool:
    if text.count('"') % 2:
        return False
    return all(text.count(left) == text.count(right) for left, right in _PAIRS)


def _content(text: str) -> list[str]:
    """The words that say something: content words of three letters or more, other than
    contractions ("it's", "I'll") and fillers ("yeah", "lol")."""
    return [w for w in content_words(text) if len(w) >= 3 and "'" not in w and w not in OPENERS]


def _states(piece: str) -> bool:
    return len(_content(piece)) >= MIN_FACT_CONTENT_WORDS and _balanced(piece)


def _opens_clause(conjunct: str) -> bool:
    """Whether a conjunct is a clause of its own: a subject that is no pronoun and holds no
    comma, then an auxiliary or irregular past form within its first six words ("existing
    appointments will be transferred", not "drainage channels along the damaged section" nor
    "advanced analytics, EcoGenius can ...")."""
    head = conjunct.split(",", 1)[0]
    words = tokens(conjunct)[:6]
    if not words or words[0] in PRONOUNS or _verb_at(words, 0):
        return False
    return any(w in AUXILIARIES or w in IRREGULAR_PAST for w in tokens(head)[1:6])


def _has_verb(text: str) -> bool:
    """Whether a piece holds a word the rules read as a verb: a cut leaves a clause on its
    left, not a phrase ("with features such as real-time monitoring")."""
    words = tokens(text)
    return any(_verb_at(words, at) for at in range(len(words)))


def clauses(sentence: str) -> list[str]:
    """The facts of one sentence, each a statement in its words (see the module); the sentence
    whole, without its final mark, when it has no cut both sides of which state a fact."""
    body = sentence.rstrip().rstrip(".!;:").rstrip()
    cuts = [m for m in _JOIN.finditer(body) if _may_cut(m)]
    pieces: list[str] = []
    subject = _subject(body)
    start, prefix = 0, ""
    for index, cut in enumerate(cuts):
        end = cuts[index + 1].start() if index + 1 < len(cuts) else len(body)
        conjunct = body[cut.end() : end]
        words = tokens(conjunct)
        shares_subject = bool(words) and _verb_at(words, 0)
        if shares_subject and subject is not None and (cut.group("word") or "") != "while":
            piece = f"{subject} {conjunct}"
        elif not shares_subject and _opens_clause(conjunct):
            piece = conjunct
        else:
            continue
        left = prefix + body[start : cut.start()]
        if not (_states(left) and _states(piece) and _has_verb(left)):
            continue
        pieces.append(left)
        start = cut.end()
        prefix = f"{subject} " if shares_subject else ""
        if not shares_subject:
            subject = _subject(conjunct)
    pieces.append(prefix + body[start:])
    return [" ".join(p.split()).rstrip(",;") for p in pieces if p.strip()]


def _may_cut(match: re.Match[str]) -> bool:
    """Whether a `_JOIN` match may be a cut: a comma before a coordinating word, "and" before
    an auxiliary or irregular past form, or a semicolon."""
    word = match.group("word")
    if word is not None:
        return word.lower() in COORDINATORS
    following = match.group("aux")
    return following is None or following in AUXILIARIES or following in IRREGULAR_PAST


def _without_openers(text: str) -> str:
    """`text` from its first word that is not an opener (`OPENERS`), with the comma after one."""
    rest = text
    while True:
        first = TOKEN.match(rest)
        if first is None or first.start() != 0 or first.group().lower() not in OPENERS:
            return rest
        rest = rest[first.end() :].lstrip(" ,")


def is_fragment(fact: str) -> bool:
    """Whether a piece of text is no whole statement: too few words that say something
    (`_content`), a word it cannot end with (`NEVER_LAST`), or brackets or quotes left open."""
    words = tokens(fact)
    return not words or words[-1] in NEVER_LAST or not _states(fact)


def _clean_spoken(said: str) -> str:
    """A transcript's sentence as a clean-verbatim transcriber writes it: fillers ("uh"), false
    starts (a word cut off before the one it begins, "bec because"; a lone letter other than
    "a" and "I"), words said twice in a row ("for for") and the space a transcript leaves
    before a comma are dropped. What is left is the speaker's words, in their order."""
    tokens = said.replace(" ,", ",").split()
    kept: list[str] = []
    for index, token in enumerate(tokens):
        bare = token.strip(",.;:!?").lower()
        plain = token.lower() == bare  # no mark after it: a word said, not a clause's end
        following = tokens[index + 1].strip(",.;:!?").lower() if index + 1 < len(tokens) else ""
        if bare in FILLERS:
            continue
        if plain and len(bare) == 1 and bare.isalpha() and token not in ("a", "A", "I"):
            continue
        if plain and bare and following != bare and following.startswith(bare):
            continue
        if plain and kept and kept[-1].lower() == bare:
            continue
        kept.append(token)
    return " ".join(kept).replace(" ,", ",").strip(" ,")


def _asks(said: str) -> bool:
    words = tokens(said)
    return bool(words) and words[0] in ASKING


def _ends_in_a_word(said: str) -> bool:
    """Whether a spoken sentence ends in a whole word: a number, a name, or an English word
    (`known_words`), not a word cut off ("one exa")."""

    found = TOKEN.findall(said)
    last = found[-1] if found else ""
    latin = frozenset({LATIN})
    return bool(last) and (not last.isalpha() or last[:1].isupper() or is_word(last, latin))


def _speakers(every: Sequence[str], source: str) -> bool:
    """Whether the source is a transcript: two speakers or more, and nearly every line (in a
    text of several lines) or half the sentences (in a one-line chat log) opening with a
    speaker's name. An e-mail's "Subject:" and "Regular Price:" lines are not turns."""
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    units = lines if len(lines) > 1 else list(every)
    named = [m.group("speaker") for u in units if (m := _SPEAKER.match(u)) is not None]
    share = 0.8 if len(lines) > 1 else 0.5
    return len(set(named)) >= 2 and len(named) >= share * len(units)


_WRAPPED = re.compile(r"(?<=[^\s.!?:;\"')\]])[ \t]*\n[ \t]*(?=[a-z(])")
"""A line break inside a sentence: after no closing mark, before a lowercase word."""


def _unwrapped(source: str) -> str:
    """The source with lines wrapped inside a sentence joined again ("spaces with\na finite
    number"), so a sentence is not cut at its line breaks."""
    return _WRAPPED.sub(" ", source)


@functools.lru_cache(maxsize=256)
def facts_of(source: str, *, clock_always_ends: bool) -> tuple[Fact, ...]:
    """Every fact of the source, in source order, without repeats: the clauses of each sentence
    that states something (`clauses`), each a whole statement (not `is_fragment`); in a
    transcript (`_speakers`), each said sentence with its speaker."""
    found: list[Fact] = []
    every = sentences(_unwrapped(source), clock_always_ends=clock_always_ends)
    spoken = _speakers(every, source)
    names = _names(every)
    speaker: str | None = None
    seen: set[str] = set()
    for sentence in every:
        text = sentence
        if spoken:
            line = _SPEAKER.match(sentence)
            if line is not None:
                speaker, text = line.group("speaker"), line.group("said")
        if text.rstrip().endswith(("?", ":")):
            continue  # a question states no fact; "The package includes:" opens a list
        if spoken:
            text = _clean_spoken(text)
            if _asks(text) or not _ends_in_a_word(text) or len(_content(text)) <= 3:
                continue  # "Why does ..." asks; "... one exa" is cut off; "Sure, ask away"
        for piece in clauses(_without_openers(text)):
            if is_fragment(piece):
                continue
            said = speaker if spoken else None
            fact = Fact(_in_sentence_case(piece, names), len(found), said)
            if fact.statement() not in seen:
                seen.add(fact.statement())
                found.append(fact)
    return tuple(found)


def _names(every: Sequence[str]) -> frozenset[str]:
    """Words the source capitalises inside a sentence: names, which keep their capital when a
    fact opens with one."""
    found: set[str] = set()
    for sentence in every:
        found.update(w for w in TOKEN.findall(sentence)[1:] if w[:1].isupper())
    return frozenset(found)


def _in_sentence_case(piece: str, names: frozenset[str]) -> str:
    """A fact as it reads after "Is it true that": its first word in lower case unless it is a
    name (`_names`; a word no word list holds: "Ostravel Home ...") or an acronym ("Engineers
    from X inspected" -> "engineers from X ...")."""
    first = TOKEN.match(piece)
    if first is None or first.start() != 0:
        return piece
    word = first.group()
    head = piece.split(":", 1)[0].split() if ":" in piece else []
    label = 0 < len(head) <= 4 and all(w[:1].isupper() for w in head)  # "Regular Price: $50"
    if not word[:1].isupper() or word in names or word == "I" or word[1:2].isupper() or label:
        return piece
    return word[:1].lower() + piece[1:] if is_word(word, frozenset({LATIN})) else piece


POSITION_WEIGHT = 0.5
"""How much a fact's place lowers its weight: the last fact of the source weighs half of what
the same words would weigh first. Sources state their point early (news leads, an e-mail's
opening); on the faithful summaries of the dev sets, facts chosen by words alone were the ones
a summary keeps less often (17% against 20% with this, and 22% for the first ten facts)."""


def chosen(facts: Sequence[Fact], source: str, count: int) -> tuple[Fact, ...]:
    """The `count` facts of most weight, in source order. SumBasic's rule: a fact weighs the
    mean share of the source's content words its own words take, lowered by its place
    (`POSITION_WEIGHT`); once a fact is chosen, the share of each of its words is squared, so
    the next choice speaks of something else. Ties go to the earlier fact."""
    if len(facts) <= count:
        return tuple(facts)
    counts = Counter(stem(w) for w in content_words(source))
    total = sum(counts.values()) or 1
    share = {word: n / total for word, n in counts.items()}
    words = [frozenset(stem(w) for w in content_words(f.statement())) for f in facts]
    left = list(range(len(facts)))
    picked: list[int] = []

    def weight(i: int) -> float:
        mean = sum(share.get(w, 0.0) for w in words[i]) / max(len(words[i]), 1)
        return mean * (1 - POSITION_WEIGHT * i / len(facts))

    while left and len(picked) < count:
        best = max(left, key=lambda i: (weight(i), -i))
        picked.append(best)
        left.remove(best)
        for word in words[best]:
            share[word] = share.get(word, 0.0) ** 2
    return tuple(facts[i] for i in sorted(picked))


@functools.lru_cache(maxsize=256)
def fact_questions(source: str, count: int, *, clock_always_ends: bool) -> tuple[str, ...]:
    """The questions coverage asks of a source: its `count` facts of most weight, in source
    order, each as a closed question (cached: replay rebuilds every request)."""
    facts = facts_of(source, clock_always_ends=clock_always_ends)
    return tuple(f.question() for f in chosen(facts, source, count))
