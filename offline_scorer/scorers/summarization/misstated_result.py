"""Whether a judge's explanation misstates the result it explains.

The explanation is the one text whose facts the product computed itself (the score, the axis
that limits it and the two axes' shares), so unlike a reason it can be checked exactly: "The
score is 1 because ..." for a score of 0 is refused however well it reads, and so is "the
summary answers 2 of 40,000 ..." where 2 of 3 questions were answered. These checks form
`MISSTATEMENT_CHECKS`; an explanation is first checked as every free text is (whole sentences,
known words, numbers of the figures), and `explanation_checks.EXPLANATION_CHECKS` joins both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from offline_scorer.scorers.summarization.grounding import content_words
from offline_scorer.scorers.summarization.lexicon import (
    AXES,
    JUDGING_WORDS,
    LETTER_RUN_PATTERN,
    NEGATIONS,
    WORD,
    number_pattern,
)
from offline_scorer.scorers.summarization.refusal import Refusal, first_refusal
from offline_scorer.scorers.summarization.stated_numbers import numbers_stated
from offline_scorer.scorers.summarization.stems import stem

_SCORE_STATED = re.compile(rf"\bscore (?:is|was|of) ({number_pattern(separators='.', groups='?')})")
"""A score stated: a number with one decimal point at most ("score is 0.5")."""
_COUNT = (
    rf"({number_pattern(separators='')})\s+(?:out\s+)?of\s+(?:the\s+|its\s+|all\s+)?"
    rf"({number_pattern(separators=',', group_run='{3}')})"
)
_SHARE_STATED = re.compile(
    rf"\b(answers|answered|supports|supported|covers|covered)\s+(?:only\s+)?{_COUNT}\b"
    rf"|\b{_COUNT}\s+(?:{LETTER_RUN_PATTERN}\s+)?(claims|questions)\b"
)
"""A count of claims or questions stated as "N of M": "answers 2 of 3 questions", "3 of 4
claims are supported". Numbers of the pair itself ("2 of 40,000 lamps were recalled") are not
shares unless a judging verb or a count noun frames them."""
_AXIS_OF = {"answers": 1, "answered": 1, "covers": 1, "covered": 1, "questions": 1}
"""Which share a count is of: questions answered are coverage's (1); claims supported are
alignment's (0)."""
_SAYS_UNSUPPORTED = re.compile(
    r"\b(?:unsupported|not supported|does not support|doesn't support|not backed"
    r"|contradict(?:s|ed|ion)?)\b"
)
"""An explanation saying a claim lacks the source's support: false when alignment is whole."""
_SAYS_UNANSWERED = re.compile(
    r"\b(?:does not answer|doesn't answer|not answered|unanswered|leaves out|left out|omits"
    r"|omitted|does not mention|doesn't mention|does not cover|doesn't cover)\b"
)
"""An explanation saying the summary leaves a question open: false when coverage is whole."""
_SAYS_ANSWERED = re.compile(r"\b(?:answers|answered|covers|covered)\b")
"""An explanation saying the summary answers a question: false when coverage is 0."""
_SAYS_SUPPORTED = re.compile(r"\b(?:supports|supported|backs|backed)\b")
"""An explanation saying the source supports a claim: false when alignment is 0."""
_SAYS_NONE_FAILS = re.compile(
    r"\bno (?:unsupported claims?|unanswered questions?)\b"
    r"|\b(?:every|each|all) (?:of the )?claims? (?:is |are )?supported\b"
)
"""An explanation saying no claim (question) fails: false when one does."""
RESTATED_WORDS = 3
"""Content words of one unsupported claim a sentence may take without saying it lacks
support: more, and the sentence presents that claim as if it were true."""
SHARE_TOLERANCE = 0.005
"""Mastra gives each axis rounded to two decimals: 2 of 3 is its 0.67."""


@dataclass(frozen=True)
class ExplainedResult:
    """The result an explanation explains: its `score` and `limiting_axis`; the axes' `shares`
    (alignment, then coverage; none: not checked); with `failing` (the unsupported claims and
    unanswered questions the result lists; None: not checked), the `figures` whose numbers an
    explanation may state, the judged texts (`pair`: source and summary) and the `unsupported`
    claims it may not restate as true."""

    score: float
    limiting_axis: str
    shares: Sequence[float] = ()
    failing: Sequence[str] | None = None
    figures: str = ""
    pair: str = ""
    unsupported: Sequence[str] = ()


class Explains(Protocol):
    """An explanation under check: its text and the result it explains."""

    @property
    def text(self) -> str: ...

    @property
    def result(self) -> ExplainedResult: ...


@dataclass(frozen=True)
class Explanation:
    """An explanation and the result it explains, as `MISSTATEMENT_CHECKS` read them."""

    text: str
    result: ExplainedResult


def misstates(text: str, result: ExplainedResult) -> Refusal | None:
    """Why an explanation misstates the result (None: it does not): it gives the score as
    another of the figures ("The score is 1" when it is 0), names only the axis that does not
    limit it ("coverage was the weaker axis" when alignment was), states a count of claims or
    questions that is not its axis's share, or says a claim is unsupported (a question left
    open) where every one is supported (answered), or supported (answered) where none is: "the
    summary answers 2019 ..., which is not supported by the source" for an alignment of 1, "the
    summary answers 2023 as the opening date" for a coverage of 0. With the result's failing
    claims and questions, what it says of the judged texts must be carried by them, and its
    numbers be theirs or the figures (`uncarried`), and it may not restate an unsupported
    claim as if it were true (`restates_unsupported`). The checks are `MISSTATEMENT_CHECKS`."""
    return first_refusal(MISSTATEMENT_CHECKS, Explanation(text, result))


def gives_another_score(e: Explains) -> Refusal | None:
    """ "The score is 1" when it is 0."""
    score = e.result.score
    stated = _SCORE_STATED.findall(e.text.lower())
    if any(float(value) != score for value in stated):
        return Refusal("gives another score", f"{stated[0]} where it is {score:g}")
    return None


def states_a_wrong_share(e: Explains) -> Refusal | None:
    """ "answers 2 of 4 questions" where the coverage is 2 of 3."""
    wrong_share = _wrong_share(e.text.lower(), e.result.shares)
    if wrong_share is not None:
        return Refusal("states a count of claims or questions the figures do not give", wrong_share)
    return None


def unsupported_where_all_are(e: Explains) -> Refusal | None:
    """An unsupported claim where the source supports every one."""
    shares = e.result.shares
    if shares and shares[0] >= 1 and _says(_SAYS_UNSUPPORTED, e.text.lower()):
        return Refusal("says a claim is unsupported where the source supports every claim")
    return None


def open_where_all_are_answered(e: Explains) -> Refusal | None:
    """A question left open where the summary answers every one."""
    shares = e.result.shares
    if shares and shares[1] >= 1 and _says(_SAYS_UNANSWERED, e.text.lower()):
        return Refusal("says the summary leaves a question open where it answers every one")
    return None


def none_fails_where_one_does(e: Explains) -> Refusal | None:
    """ "no unanswered questions" where one is."""
    shares = e.result.shares
    if shares and min(shares) < 1 and _SAYS_NONE_FAILS.search(e.text.lower()):
        return Refusal("says no claim or question fails where one does")
    return None


def supported_where_none_is(e: Explains) -> Refusal | None:
    """A supported claim where the source supports none."""
    shares = e.result.shares
    if shares and shares[0] == 0 and _says(_SAYS_SUPPORTED, e.text.lower(), affirmed=True):
        return Refusal("says a claim is supported where the source supports none")
    return None


def answered_where_none_is(e: Explains) -> Refusal | None:
    """An answered question where the summary answers none."""
    shares = e.result.shares
    if shares and shares[1] == 0 and _says(_SAYS_ANSWERED, e.text.lower(), affirmed=True):
        return Refusal("says the summary answers a question where it answers none")
    return None


def names_the_other_axis(e: Explains) -> Refusal | None:
    """ "coverage was the weaker axis" when alignment limits the score."""
    limiting_axis = e.result.limiting_axis
    if limiting_axis not in AXES:
        return None
    named = AXES.intersection(WORD.findall(e.text.lower()))
    if named and limiting_axis not in named:
        return Refusal(
            "names the axis that does not limit the score",
            f"{min(named)}, where {limiting_axis} limits it",
        )
    return None


def states_what_no_verdict_carries(e: Explains) -> Refusal | None:
    """`uncarried`, when the result lists its failing claims and questions."""
    result = e.result
    if result.failing is None:
        return None
    return uncarried(e.text, result.failing, result.figures, result.pair)


def restates_an_unsupported_claim(e: Explains) -> Refusal | None:
    """`restates_unsupported`."""
    return restates_unsupported(e.text, e.result.unsupported)


def turns_a_verdict_around(e: Explains) -> Refusal | None:
    """`turns_failing_around`, when the result lists its failing claims and questions."""
    result = e.result
    if result.failing is None:
        return None
    left_out = [item for item in result.failing if item not in result.unsupported]
    return turns_failing_around(e.text, result.unsupported, left_out)


MISSTATEMENT_CHECKS: tuple[Callable[[Explains], Refusal | None], ...] = (
    gives_another_score,
    states_a_wrong_share,
    unsupported_where_all_are,
    open_where_all_are_answered,
    none_fails_where_one_does,
    supported_where_none_is,
    answered_where_none_is,
    names_the_other_axis,
    states_what_no_verdict_carries,
    restates_an_unsupported_claim,
    turns_a_verdict_around,
)
"""An explanation's checks against the result it explains, in order: the figures, the axis,
then what it says of the texts."""


def _says(phrase: re.Pattern[str], text: str, affirmed: bool = False) -> bool:
    """Whether `text` says `phrase` unnegated: "no claim contradicts the source" does not say
    a claim contradicts it (a negation among the five words before it); an `affirmed` verb is
    negated by what follows it too ("answers none of them", "answers 0 of 6")."""
    for match in phrase.finditer(text):
        before = WORD.findall(text[: match.start()])[-5:]
        after = text[match.end() :].split()[:2]
        if not NEGATIONS.isdisjoint(before):
            continue
        if affirmed and (not NEGATIONS.isdisjoint(after) or "0" in after):
            continue
        return True
    return False


def _wrong_share(text: str, shares: Sequence[float]) -> str | None:
    """The first "N of M" that is not its axis's share (alignment's for claims, coverage's for
    questions), None when each is or none is said. A share of none is 0 exactly: "answers 2 of
    40,000" is not a coverage of 0."""
    if not shares:
        return None
    for match in _SHARE_STATED.finditer(text):
        verb, part, whole, part2, whole2, noun = match.groups()
        said, of = (part, whole) if part is not None else (part2, whole2)
        axis = shares[_AXIS_OF.get(verb or noun, 0)]
        count, total = int(said), int(of.replace(",", ""))
        if count > total or not total or (count == 0) != (axis == 0):
            return f"{said} of {of}"
        if abs(count / total - axis) > SHARE_TOLERANCE:
            return f"{said} of {of}"
    return None


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


def _names(sentence: str) -> set[str]:
    """The names a sentence states: its capitalised words after the first, other than the
    judging words ("The score is 0 because ... Starbucks ... Italy" -> Starbucks, Italy)."""
    found = WORD.findall(sentence)[1:]
    return {w for w in found if w[:1].isupper() and w.lower() not in JUDGING_WORDS}


def _pair_words(text: str, pair: frozenset[str]) -> set[str]:
    """The words of `text` that are words of the judged pair (`pair`, stemmed content words)
    and not judging words: what an explanation says about the texts themselves."""
    return {
        stem(w)
        for w in content_words(text)
        if w not in JUDGING_WORDS and stem(w) in pair and not w[:1].isdigit()
    }


def uncarried(text: str, failing: Sequence[str], figures: str, pair: str = "") -> Refusal | None:
    """Why an explanation states a fact the verdicts do not carry (None: it does not). Each
    sentence's numbers and names (other than the result's `figures`) must be stated together
    by one failing claim or question, and every word it takes from the judged texts (`pair`:
    source and summary) must be a word of a failing claim or question: "The summary answers
    2030 as the year when Starbucks opened its first branch in Italy" is refused where 2030 is
    a year of another question, and "the group did not discuss ways to reduce costs" where no
    failing claim or question speaks of costs. Each number and name being somewhere in the
    inputs does not make a sentence one the verdicts say."""
    known = numbers_stated(figures)
    items = [(numbers_stated(item), set(WORD.findall(item))) for item in failing]
    pair_stems = frozenset(stem(w) for w in content_words(pair))
    said = frozenset(stem(w) for item in failing for w in content_words(item))
    for sentence in _SENTENCE_BREAK.split(text.strip()):
        numbers = set(numbers_stated(sentence)) - known
        names = _names(sentence)
        if (numbers or names) and not any(
            numbers <= found and names <= words for found, words in items
        ):
            stated = sorted(numbers | names)
            return Refusal(
                "states a fact no failing claim or question carries", ", ".join(stated[:4])
            )
        beyond = sorted(_pair_words(sentence, pair_stems) - said)
        if beyond:
            return Refusal(
                "speaks of the texts beyond the failing claims and questions",
                ", ".join(beyond[:4]),
            )
    return None


def restates_unsupported(text: str, unsupported: Sequence[str]) -> Refusal | None:
    """Why an explanation presents an unsupported claim as true (None: it does not): a sentence
    that takes more than `RESTATED_WORDS` content words of one such claim and does not say it
    lacks the source's support. "The score is 0 because the group did not discuss any ways to
    reduce costs, ..." restates the very claim the judge found unsupported as the reason;
    "... because the claim that the group did not discuss ways to reduce costs is not supported
    by the source" says what the verdict says."""
    claims = [frozenset(stem(w) for w in content_words(c)) for c in unsupported]
    for sentence in _SENTENCE_BREAK.split(text.strip()):
        taken = frozenset(stem(w) for w in content_words(sentence) if w not in JUDGING_WORDS)
        if any(len(taken & claim) > RESTATED_WORDS for claim in claims) and not _says(
            _SAYS_UNSUPPORTED, sentence.lower()
        ):
            return Refusal("presents a claim the source does not support as true")
    return None


_ANSWERS_WHAT = re.compile(r"\b(?:answers|covers|states|mentions|includes)((?:\s+\S+){1,4})")
"""What an explanation says the summary answers: the few words after the verb."""
_CLAIM_ABOUT = re.compile(
    r"\bclaims?\s+(?:about|that|of|on)\b(.*?)"
    r"(?=\b(?:contradicts?|is not|are not|does not|which)\b|$)"
)
"""What an explanation says a claim states: the words after "the claim about" up to its verb."""
_SOURCE_SAYS = re.compile(r"\bsource\b[^.;]*?\b(?:reports|says|states|gives|lists|shows)\b(.*)")
"""What an explanation says the source states."""


def turns_failing_around(
    text: str, unsupported: Sequence[str], left_out: Sequence[str]
) -> Refusal | None:
    """Why an explanation says the opposite of a verdict (None: it does not): the summary
    "answers" a number or name only a question it leaves out states ("the summary answers 2019
    and 2019, but ..."), or the source "reports" a number of the very claim it is said to
    contradict ("the claim about 50 minutes contradicts the source, which reports 50 minutes")."""
    open_numbers = frozenset().union(*(numbers_stated(q) for q in left_out))
    claim_numbers = frozenset().union(*(numbers_stated(c) for c in unsupported))
    for sentence in _SENTENCE_BREAK.split(text.strip()):
        lowered = sentence.lower()
        for match in _ANSWERS_WHAT.finditer(lowered):
            before = WORD.findall(lowered[: match.start()])[-5:]
            if NEGATIONS.isdisjoint(before) and _digits(match.group(1)) & open_numbers:
                return Refusal("says the summary answers what a question it leaves out states")
        for about in _CLAIM_ABOUT.finditer(lowered):
            if unsupported and not _digits(about.group(1)) <= claim_numbers:
                return Refusal("says a claim states a number no claim it lists states")
        said = _SOURCE_SAYS.search(lowered)
        source_numbers = numbers_stated(said.group(1)) if said else frozenset()
        if source_numbers & claim_numbers and _says(_SAYS_UNSUPPORTED, lowered):
            return Refusal("says the source states what the claim it contradicts states")
    return None


def _digits(text: str) -> frozenset[str]:
    """The numbers `text` writes in digits ("answers one of six" states a count, not a fact)."""
    return frozenset(n for n in numbers_stated(text) if n in text.replace(",", ""))
