"""What a word and a number are, and every word list the summarization scorer reads by.

One word regex (`WORD`) and one number regex (`NUMBER`) serve the whole scorer, so its parts
cannot drift apart on what "a word" is. Where a part needs a different unit, the variant is
derived from the same pieces by `word_pattern` or `number_pattern`, and its docstring says why
it differs: the grounding token also keeps "U.S." and "3.5" whole (it counts what a sentence
says), the grammar's number is ASCII and bounded (a JSON-schema pattern every backend compiles).

The word lists come in two groups, and the group says what a change to a list costs:

- FROZEN lists shape what the judge is asked: where a sentence ends, which sentences state a
  fact, how a question is worded, how facts are cut, which words a grammar admits. Changing
  one changes prompts and schemas, so cassette keys, so every recording made before. They
  are pinned by hash in `tests/test_lexicon.py`: a change there is a new requests revision.
- VETTING-ONLY lists decide only whether a judge's text is shown to a person (a reason, a
  quote, an explanation). Changing one changes which texts are refused, never a key.

Two lists that look alike but differ, one of them frozen, stay two and are named for their
role (`STOPWORDS` and `FUNCTION_WORDS`; `NEVER_LAST` and `DANGLING`): merging them would move
either the keys or the refusals.
"""

from __future__ import annotations

import re

# ---------------------------------------------------------------------------------------------
# Patterns: one word, one number, and what is derived from them.


def letter_class(*, but: str = "") -> str:
    """A letter of any script: a word character that is neither a digit nor an underscore,
    nor one of `but` (`but="s"`: a letter other than "s", where a possessive's "s" is sought)."""
    return f"[^\\W\\d{but}_]"


LETTER = letter_class()
"""One letter of any script."""
_LETTER_OR_DIGIT = r"[^\W_]"
APOSTROPHES = "'\u2019"
"""The apostrophes a word may hold inside it ("don't", "don\u2019t")."""


def word_pattern(*, digits: bool = False, joined: bool = True, also: str = "") -> str:
    """The word pattern: runs of letters joined by an apostrophe or a hyphen ("don't",
    "re-register"). The variants the scorer needs are this pattern with its unit or joins
    changed, never another pattern: `digits` lets a run hold digits too ("3", "covid19");
    `also` adds joining marks ("." keeps "U.S." and "3.5" one token); `joined=False` gives the
    bare run (what a grammar counts as one word)."""
    unit = _LETTER_OR_DIGIT if digits else LETTER
    if not joined:
        return f"{unit}+"
    return f"{unit}+(?:[{APOSTROPHES}{also}-]{unit}+)*"


def number_pattern(
    *,
    digit: str = r"\d",
    run: str = "+",
    separators: str = ".,",
    groups: str = "*",
    group_run: str | None = None,
) -> str:
    """The number pattern: digits with inner separators ("7", "3,000", "1.5"). Variants change
    its pieces only: the grammar's number is ASCII digits in bounded runs with one separator
    at most (`digit="[0-9]"`, `run="{1,9}"`, `groups="?"`); the explanation checks read a
    score with one decimal point (`separators="."`, `groups="?"`), a count in thousands
    (`separators=","`, `group_run="{3}"`: "40,000" but not "40,0000") or bare digits
    (`separators=""`)."""
    if not separators:
        return f"{digit}{run}"
    grouped = run if group_run is None else group_run
    return f"{digit}{run}(?:[{separators}]{digit}{grouped}){groups}"


WORD_PATTERN = word_pattern()
WORD = re.compile(WORD_PATTERN)
"""A word: letters, with inner apostrophes or hyphens ("don't", "re-register"). THE word."""
NUMBER_PATTERN = number_pattern()
NUMBER = re.compile(NUMBER_PATTERN)
"""A number in digits, with inner separators ("7", "3,000", "1.5"). THE number."""

TOKEN = re.compile(word_pattern(digits=True, also="."))
"""A grounding token: a word or a number, "U.S." and "3.5" whole. Content words are counted
in these (FROZEN: it decides which source sentences state a fact, and how facts are cut)."""
LETTER_RUN_PATTERN = word_pattern(joined=False)
LETTER_RUN = re.compile(LETTER_RUN_PATTERN)
"""A run of letters: a word as the grammars count and admit it ("don't" is two)."""
LAST_TOKEN = re.compile(word_pattern(digits=True, joined=False) + r"(?=\W*$)")
"""The last word or number of a text: "fees rose to 55 dollars for 2025." ends on a number."""
WORD_OR_NUMBER = re.compile(f"{WORD_PATTERN}|{NUMBER_PATTERN}")
"""Words and numbers in order: a loop is read over both, or "voted 7 to 2 to close" would read
as "to to"."""
GRAMMAR_NUMBER_PATTERN = number_pattern(digit="[0-9]", run="{1,9}", groups="?")
"""A number as a grammar admits it: JSON-schema regex (ASCII digits, bounded runs) that the
llama.cpp GBNF compiler and outlines both translate. FROZEN: it is part of every "open" schema."""
GRAMMAR_NUMBER = re.compile(GRAMMAR_NUMBER_PATTERN)


def tokens(text: str) -> list[str]:
    """The grounding tokens of a text, in lower case, with a typographic apostrophe read as
    a plain one."""
    return TOKEN.findall(text.lower().replace("\u2019", "'"))


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ---------------------------------------------------------------------------------------------
# FROZEN: these lists shape the requests. Changing one changes cassette keys (see the module).

ABBREVIATIONS = _words(
    "mr mrs ms dr prof st jr sr vs etc inc ltd co corp no fig e.g i.e u.s u.k approx est"
)
"""Words whose period does not end a sentence ("Dr. Smith")."""
CLOCK = frozenset(("a.m", "p.m"))
"""Time-of-day marks: "at 6:30 a.m. on weekdays" goes on, "at 8:15 p.m. The next" ends."""
STOPWORDS = _words(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    true"""
)
"""Words that carry no content: what a sentence must have more than to state a fact, and what
content words are counted without. Shares 114 words with `FUNCTION_WORDS`, which has another
role (the words any grammar admits): each list is frozen as it is."""
FUNCTION_WORDS = _words(
    """a about above after again against all also although an and any are as at be because been
    before being below between both but by can cannot could did do does doing done down during
    each either else even every few for from further had has have having he her here hers him his
    how however i if in into is it its itself just least less many may might more most much must
    neither no nor not now of off on once only or other others our out over own rather same
    several she should since so some still such than that the their them themselves then there
    these they this those though through thus to too under unless until up upon very was we were
    what when where whether which while who whom whose why will with within without would yet
    you"""
)
"""The function words every free-text grammar admits, whatever its inputs."""
JUDGING_TERMS = _words(
    """source sources summary summaries text texts claim claims question questions fact facts
    detail details information evidence statement statements sentence sentences word words date
    dates number numbers figure figures amount amounts name names place places time times event
    events person people score scores alignment coverage axis verdict verdicts judge reason says
    say said states state stated stating mentions mention mentioned mentioning describes describe
    described reports report reported gives give given lists list listed named includes include
    included including adds add added omits omit omitted leaves leave left lacks lack lacking
    misses miss missing supports support supported supporting unsupported contradicts contradict
    contradicted contradiction contradictory conflicts conflict matches match matched agrees agree
    differs differ different difference changes change changed confirms confirm confirmed implies
    imply implied answers answer answered unanswered asks ask asked covers cover covered limits
    limit limited lowers lower lowered keeps keep kept drops drop found find finds invented
    invents invent wrong correct incorrect accurate inaccurate true false exact exactly directly
    explicitly clearly partly partially fully entirely only instead whereas rather nothing
    something anything everything none yes"""
)
"""The words of judging a text against another, which every free-text grammar admits."""
JUDGING_WORDS: frozenset[str] = FUNCTION_WORDS | JUDGING_TERMS
"""Words any reason may use besides those of its inputs. Changing them changes every request's
schema."""

AUXILIARIES = _words(
    """am is are was were be been being has have had do does did will would shall should can
    could may might must"""
)
"""Words that open a predicate: a conjunct starting with one shares the clause's subject."""
IRREGULAR_PAST = _words(
    """said found made took gave went came became began brought bought built kept left lost met
    paid put ran saw sent set sold spent stood thought won wrote held led grew knew fell rose
    told felt heard meant showed shown chose drove ate drank flew forgot got hid hung laid lay
    paid rode rang sang sat slept spoke stole struck swore swam taught tore threw understood
    woke wore withdrew"""
)
"""Common past forms that do not end in -ed: a conjunct opening with one is a predicate."""
COORDINATORS = frozenset({"and", "but", "while", "whereas", "yet"})
"""Words that, after a comma, may join two clauses."""
PRONOUNS = _words(
    """it its they them their he him his she her this that these those which who whom whose we
    us our i me my you your one"""
)
"""A clause opening with one of these says nothing readable on its own ("it will close")."""
FOLLOWS_A_VERB = _words(
    """a an the this that these those its their his her our my your to by in on at for with from
    into of up down out"""
)
"""Words that follow a past form used as a verb ("reported a balance"), not as an adjective
("the damaged section")."""
NOT_IN_A_SUBJECT = frozenset({"to", "that", "than", "when", "where", "if", "because", "not"})
"""A subject holds no infinitive or clause: words before a verb the rules cannot see ("The
students plan to repeat ...")."""
OPENERS = _words("and but so yet well uh um er erm hmm oh okay ok yeah yes lol")
"""Words that open a spoken or joined sentence without belonging to its fact ("And net income
...", "Well, but there are two parts ..."): a fact starts after them."""
NEVER_LAST = _words(
    """a an the and or but nor of to for with from by at in on into about as than that which
    who whose whom if because while although so um uh er erm my your our their his her its is
    are was were be been being has have had do does did will would can could should may might
    must very another any some each every"""
)
"""Words a fact cannot end with: a line cut off ("it's not very easy for", "um uh") is no fact.
Not `DANGLING`, which vets shown text and differs from it ("onto")."""
FILLERS = frozenset({"uh", "um", "er", "erm", "hmm", "mm", "uhm"})
"""Sounds of a speaker thinking, not words of what is said."""
ASKING = frozenset({"why", "how", "does", "do", "did", "is", "are", "can", "could", "would"})
"""Words a spoken question opens with, when its question mark was not written."""

CONTRACTION_ENDS = frozenset({"s", "t", "re", "ve", "ll", "d", "m"})
"""What may follow an apostrophe in an English word ("it's", "don't", "we're")."""
BRITISH_SPELLINGS = (
    ("isation", "ization"),
    ("isations", "izations"),
    ("ising", "izing"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("ise", "ize"),
    ("yse", "yze"),
    ("ysed", "yzed"),
    ("our", "or"),
    ("ours", "ors"),
    ("oured", "ored"),
    ("tre", "ter"),
    ("tres", "ters"),
    ("lled", "led"),
    ("lling", "ling"),
)
"""British spelling -> the US spelling the English word list holds (suffix swaps, in the order
tried). Frozen: the fact splitter asks whether a word is English (`known_words.is_word`)."""

# ---------------------------------------------------------------------------------------------
# VETTING-ONLY: these lists decide whether a judge's text is shown; no request depends on them.

NEGATIONS = _words("no not never nothing none neither nor")
"""Words that negate the phrase after them: "no claim contradicts the source" says none does."""
DENYING = NEGATIONS | _words(
    """cannot without unsupported unanswered contradicts contradicted contradiction contradictory
    conflicts conflict omits omit omitted lacks lack lacking misses miss missing wrong incorrect
    inaccurate false differs differ different instead whereas"""
)
"""Words that deny: a reason for a positive verdict holding one says the opposite of its
verdict ("The answer to the question is no." beside "answered": true). Contractions ("doesn't")
count too (`readable`)."""
AFFIRMING = _words(
    """yes true correct accurate supports supported answers answered confirms confirmed matches
    agrees"""
)
"""Words that affirm: a reason for a negative verdict with one of these and no denying word
("The answer is yes.") says the opposite of its verdict."""
DANGLING = _words("a an the and or but nor of to with for from as than into onto its their whose")
"""Words an English sentence does not end on: a text ending so was closed mid-thought."""
REASON_MARKERS = _words(
    """source summary claim claims question questions text states stated says said mentions
    mentioned mention supports supported support unsupported contradicts contradicted
    contradiction omits omitted answers answered unanswered confirms confirmed correct incorrect
    accurate inaccurate wrong alignment coverage score"""
)
"""A reason speaks of what is judged or of the verdict: at least one of these (a restated
source sentence, "The answer is yes." or "Yes, it is true that Um I'm not sure." does not)."""
FACT_NOUNS = _words(
    """number numbers date dates time times name names place places event events person people
    amount amounts figure figures change changes changed"""
)
"""Judging words that also name facts: in "the phone number will not change" they are what the
reason says the summary holds, so the check of what it holds counts them."""
AXES = frozenset({"alignment", "coverage"})
"""The axes an explanation may name as the one that limits the score."""

_ONES = """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
fifteen sixteen seventeen eighteen nineteen twenty"""
_TENS = "thirty forty fifty sixty seventy eighty ninety"
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_ONES.split())}
NUMBER_WORDS.update((word, 30 + 10 * index) for index, word in enumerate(_TENS.split()))
"""Numbers written as words, and their value: "seven" states the source's "7"."""
SCALE_WORDS = _words("hundred thousand million billion percent half dozen quarter")
"""Words of quantity a text states as they are ("million" against "million")."""
