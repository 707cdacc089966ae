"""The checks of a text the judge wrote in its own words, as ordered tables of named checks.

Each check is a function of the text under check (`FreeText`) that returns why it refuses the
text, or None; a table is run in order and the first refusal is the text's (`refusal.
first_refusal`), named by the check function that made it. Cheap checks come first: most texts
a small model writes fail one of them (the order decides only which problem is named, never
whether there is one). `FREE_TEXT_CHECKS` apply to every free text (a reason, an explanation);
`VERDICT_CHECKS` to a reason, which has a verdict and a subject; `REASON_CHECKS` is both, in
that order. See `readable` for what each kind of text is checked against and why.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from offline_scorer.scorers.summarization.grounding import QUESTION_FRAME
from offline_scorer.scorers.summarization.known_words import scripts_of, unknown_words
from offline_scorer.scorers.summarization.lexicon import (
    AFFIRMING,
    APOSTROPHES,
    DANGLING,
    DENYING,
    FACT_NOUNS,
    JUDGING_WORDS,
    LAST_TOKEN,
    LETTER,
    LETTER_RUN_PATTERN,
    NUMBER_PATTERN,
    REASON_MARKERS,
    WORD,
    WORD_OR_NUMBER,
    letter_class,
)
from offline_scorer.scorers.summarization.refusal import Refusal
from offline_scorer.scorers.summarization.sentence import (
    SEPARATORS,
    Vocabulary,
    allowed_words,
    counted_words,
)
from offline_scorer.scorers.summarization.stated_numbers import numbers_stated
from offline_scorer.scorers.summarization.stems import content_set, content_stems, stem, stems

MIN_WORDS = 4  # "The score is." says nothing; "The source does not mention it." does
MIN_SENTENCE_WORDS = 3  # "These." after a sentence adds nothing
MIN_CONTENT_WORDS = 2  # words that are not function words ("Is it true that about." has none)
LOOP_WORDS = 5
"""A run of this many words written twice is a loop; shorter runs recur in plain prose ("of the
summary")."""
MIN_ON_SUBJECT = 0.5
"""The share of a reason's own content words (not judging words) that its claim or question
must hold: a reason that speaks mostly of other facts is about another claim or question."""
_NEUTRAL = JUDGING_WORDS - FACT_NOUNS

_SHAPE = re.compile(
    rf"{LETTER_RUN_PATTERN}(?:(?:"
    + "|".join(re.escape(separator) for separator in SEPARATORS)
    + rf")(?:{LETTER_RUN_PATTERN}|{NUMBER_PATTERN})|\. {LETTER_RUN_PATTERN})*\."
)
"""Whole sentences of words and numbers: letter runs and numbers joined by one separator."""
_POSSESSIVE = re.compile(f"[{APOSTROPHES}]s$")
"""A name's possessive is the name: "Varga's statement" when the inputs name Ines Varga."""
_JOINED = re.compile(f"{LETTER}{{2,}}{letter_class(but='s')}[{APOSTROPHES}]{LETTER}{{3,}}")
"""Two words run together at an apostrophe ("the project lead'scale", "the treasurer'spring
report"): a judge writing a possessive whose "s" the next word swallowed. A contraction or a
name keeps a short part ("don't", "they're", "O'Brien", "o'clock"); a plural possessive the
grammar wrote without its space ("his friends'reaction") still reads as one."""


@dataclass(frozen=True)
class Allowance:
    """What a judge's text may use: at most `max_words` words, the words of `vocabulary`
    (and of the inputs' language), and the numbers `numbers_from` states."""

    max_words: int
    vocabulary: Vocabulary
    numbers_from: str


@dataclass(frozen=True)
class Judging:
    """What a text speaks of: its `subject` (the claim, the question, the facts explained), the
    `verdict` it gives a reason for, and `grounds`, the text an affirming reason says holds the
    fact (named `grounds_name`, "source" or "summary"). All None for a text judged alone."""

    subject: str | None = None
    verdict: bool | None = None
    grounds: str | None = None
    grounds_name: str | None = None


@dataclass(frozen=True)
class FreeText:
    """A judge's text with what it may use and what it speaks of, read once for its checks:
    its words, content words and numbers are computed on first use and kept."""

    text: str
    allowed: Allowance
    judging: Judging

    @functools.cached_property
    def words(self) -> list[str]:
        """Its words, in lower case."""
        return WORD.findall(self.text.lower())

    @functools.cached_property
    def meaningful(self) -> frozenset[str]:
        """Its content words."""
        return content_set(self.text)

    @functools.cached_property
    def stated(self) -> frozenset[str]:
        """The numbers it states, in one spelling (`stated_numbers`)."""
        return numbers_stated(self.text)


Check = Callable[[FreeText], Refusal | None]


def not_whole_sentences(t: FreeText) -> Refusal | None:
    """The grammar's shape: words and numbers joined by one separator, ending with a full stop.
    A cassette or a user's judge answers without the grammar, so it is checked here too."""
    if not _SHAPE.fullmatch(t.text):
        return Refusal("is not whole sentences of words and numbers")
    return None


def too_short(t: FreeText) -> Refusal | None:
    """ "The score is." says nothing: too few words, or too few content words."""
    if len(t.words) < MIN_WORDS or len(t.meaningful) < MIN_CONTENT_WORDS:
        return Refusal("is too short to say anything")
    return None


def ends_dangling(t: FreeText) -> Refusal | None:
    """A text ending on "and" or "the" was closed mid-thought."""
    last = LAST_TOKEN.search(t.text.lower())
    if last is not None and last.group() in DANGLING:
        return Refusal("ends on a word a sentence cut short ends on", repr(last.group()))
    return None


def says_nothing_of_judging(t: FreeText) -> Refusal | None:
    """A reason speaks of the texts or the verdict; a restated source sentence, or "The answer
    is yes.", does not."""
    if REASON_MARKERS.isdisjoint(t.words):
        return Refusal("says nothing about the source, the summary or the verdict")
    return None


def not_about_subject(t: FreeText) -> Refusal | None:
    """A text about a claim, question or facts shares at least one content word (stem) with it."""
    subject = t.judging.subject
    if subject is not None and stems(t.meaningful).isdisjoint(content_stems(subject)):
        return Refusal("is not about what it judges")
    return None


def copies_question(t: FreeText) -> Refusal | None:
    """A reason that opens as a question does is the question copied, not a reason."""
    if t.text.startswith(QUESTION_FRAME):
        return Refusal("copies a question instead of giving a reason")
    return None


def repeats_itself(t: FreeText) -> Refusal | None:
    """A loop: a run of words written twice (read over words and numbers)."""
    if _loops(WORD_OR_NUMBER.findall(t.text.lower())):
        return Refusal("repeats itself")
    return None


def ended_at_word_bound(t: FreeText) -> Refusal | None:
    """A text as long as its bound stopped because the bound came: its last sentence is likely
    cut."""
    if len(counted_words(t.text)) >= t.allowed.max_words:
        return Refusal("ended only at its word bound")
    return None


def short_sentence(t: FreeText) -> Refusal | None:
    """ "These." after a sentence adds nothing."""
    if any(len(counted_words(s)) < MIN_SENTENCE_WORDS for s in t.text.split(". ")):
        return Refusal("has a sentence too short to say anything")
    return None


def uncapitalised_sentence(t: FreeText) -> Refusal | None:
    """A sentence must start with a capital, or with a word the inputs write so."""
    starts, _ = allowed_words(t.allowed.vocabulary)
    for sentence in t.text[:-1].split(". "):
        first = counted_words(sentence)[:1]
        if not first or (first[0] not in starts and not first[0][:1].isupper()):
            return Refusal("has a sentence that does not start with a capital")
    return None


def runs_words_together(t: FreeText) -> Refusal | None:
    """A possessive whose "s" the next word swallowed (`_JOINED`)."""
    joined = next((w for w in WORD.findall(t.text) if _JOINED.fullmatch(w)), None)
    if joined is not None:
        return Refusal("runs words together at an apostrophe", repr(joined))
    return None


def unknown_word(t: FreeText) -> Refusal | None:
    """A word outside the inputs' and judging words must be a word of the inputs' scripts
    (`known_words`). The vocabulary's side is set lookups: texts decoded under a
    vocabulary-confined grammar pass on them alone, and never load the word list."""
    starts, body = allowed_words(t.allowed.vocabulary)
    outside = [
        word
        for word in (_POSSESSIVE.sub("", w) for w in WORD.findall(t.text))
        if any(part not in body and part not in starts for part in counted_words(word))
    ]
    if not outside:
        return None
    unknown = unknown_words(outside, scripts_of(t.allowed.vocabulary.words))
    if unknown:
        return Refusal("uses a word neither of the inputs nor of their language", repr(unknown[0]))
    return None


def number_beyond_inputs(t: FreeText) -> Refusal | None:
    """A text may state only numbers its inputs (for the explanation: the figures) state."""
    if t.stated and t.stated - numbers_stated(t.allowed.numbers_from):
        return Refusal("states a number the figures do not hold")
    return None


FREE_TEXT_CHECKS: tuple[Check, ...] = (
    not_whole_sentences,
    too_short,
    ends_dangling,
    says_nothing_of_judging,
    not_about_subject,
    copies_question,
    repeats_itself,
    ended_at_word_bound,
    short_sentence,
    uncapitalised_sentence,
    runs_words_together,
    unknown_word,
    number_beyond_inputs,
)
"""Every free text's checks, in order: its shape, then its words, then its numbers."""


def _denies(t: FreeText, subject: str) -> bool:
    """Whether the reason denies: a denying word the subject also writes is the subject's own
    ("patients will not need to re-register" restates a claim that says so)."""
    return bool(_denials(t.words) - _denials(WORD.findall(subject.lower())))


def denies_its_verdict(t: FreeText) -> Refusal | None:
    """A reason for a positive verdict that denies ("does not", "omits") says the opposite of
    it."""
    subject, verdict = t.judging.subject, t.judging.verdict
    if verdict and subject is not None and _denies(t, subject):
        return Refusal("denies what its verdict affirms")
    return None


def affirms_against_verdict(t: FreeText) -> Refusal | None:
    """A reason for a negative verdict that affirms ("The answer is yes.") and denies nothing
    says the opposite of it."""
    subject, verdict = t.judging.subject, t.judging.verdict
    if verdict is not False or subject is None or AFFIRMING.isdisjoint(t.words):
        return None
    if not _denies(t, subject):
        return Refusal("affirms what its verdict denies")
    return None


def mostly_off_subject(t: FreeText) -> Refusal | None:
    """A reason whose own content words (not judging words) are mostly not its subject's is
    about another claim or question."""
    subject = t.judging.subject
    if t.judging.verdict is None or subject is None:
        return None
    own = t.meaningful - JUDGING_WORDS
    on_subject = content_stems(subject)
    if own and sum(stem(w) in on_subject for w in own) < MIN_ON_SUBJECT * len(own):
        return Refusal("speaks mostly of something other than what it judges")
    return None


def holds_what_grounds_do_not(t: FreeText) -> Refusal | None:
    """An affirming reason speaking mostly of what `grounds` does not hold: "The summary states
    that engineers inspected the bridge in January" for a summary that names no engineer is
    false, however readable: a judge restating its question reads as one reporting the
    summary."""
    grounds = t.judging.grounds
    if not t.judging.verdict or grounds is None:
        return None
    own = t.meaningful - _NEUTRAL
    held = content_stems(grounds)
    if own and sum(stem(w) in held for w in own) < MIN_ON_SUBJECT * len(own):
        return Refusal("says its text holds what it does not")
    return None


def number_beyond_grounds(t: FreeText) -> Refusal | None:
    """An affirming reason may state only numbers of the text it says holds the fact."""
    grounds = t.judging.grounds
    if t.judging.verdict and grounds is not None and t.stated - numbers_stated(grounds):
        return Refusal("states a number its text does not hold")
    return None


def substitutes_number(t: FreeText) -> Refusal | None:
    """An affirming reason saying the texts agree while giving other numbers in place of its
    subject's: "the source states that the soup serves six ..., which matches the summary" for
    a claim that it serves eight. Without a word of agreement ("matches", "answers",
    "confirms", ...) a reason may well state numbers of other facts than its subject's, so it
    is not refused."""
    subject = t.judging.subject
    if not t.judging.verdict or t.judging.grounds is None or subject is None:
        return None
    own = numbers_stated(subject)
    if t.stated - own and own - t.stated and not AFFIRMING.isdisjoint(t.words):
        return Refusal("gives another number in place of one it judges")
    return None


VERDICT_CHECKS: tuple[Check, ...] = (
    denies_its_verdict,
    affirms_against_verdict,
    mostly_off_subject,
    holds_what_grounds_do_not,
    number_beyond_grounds,
    substitutes_number,
)
"""A reason's checks against its verdict and subject, then (affirming) against its grounds."""

REASON_CHECKS: tuple[Check, ...] = FREE_TEXT_CHECKS + VERDICT_CHECKS
"""The table a claim's or a question's reason in the judge's own words is checked by."""


def _loops(words: Sequence[str]) -> bool:
    """A run of LOOP_WORDS words written twice, or a run of up to three written twice in a row
    ("the the", "sailed and sailed and")."""
    runs = list(zip(*(words[i:] for i in range(LOOP_WORDS)), strict=False))
    if len(set(runs)) < len(runs):
        return True
    return any(
        words[i : i + n] == words[i + n : i + 2 * n]
        for n in (1, 2, 3)
        for i in range(len(words) - 2 * n + 1)
    )


def _denials(words: Sequence[str]) -> Counter[str]:
    return Counter(w for w in words if w in DENYING or w.endswith(("n't", "n\u2019t")))
