"""Are the texts the judge wrote readable and honest? Counts over an eval results file.

    python -m benchmarks.texts RESULTS.jsonl --data DATA.jsonl [--free-text STYLE] [--json]

A text is a claim's reason, a coverage verdict's reason, or the explanation (the part of the
result's `reason` after "Judge's explanation: ", or after "Explanation (written by
offline-scorer): " where the product wrote it). For each kind of text it counts:

- not a sentence: does not end with . ! or ? (closing quotes or brackets may follow);
- cut mid-word: the text reached the step's bound, where decoding stops it (a reason that
  quotes a whole sentence of its input, `quote_evidence`, has no bound): for results of
  whole-sentence decoding (they carry `textAuthors`), it has the most words the grammar
  allows (`word_bounds` of the run's free-text style, `--free-text`), so its full stop was
  forced; for older results, it is not a sentence and ends in a letter or digit at the
  character bound (`MAX_REASON_CHARS` / `MAX_EXPLANATION_CHARS`);
- list numbering: starts with "1." / "2)" / "a." and the like, copied from the prompt's lists;
- foreign characters: a letter of a script no input letter is from (Latin, Cyrillic, CJK, ...
  as Unicode names them), or a symbol that is not ordinary punctuation (⅏, emoji, box drawing);
- wrong numbers: a number the text states in digits, or in words ("seven", "forty", "half"),
  that is not one of the figures it may state: for the explanation, the result's score, axis
  scores, counts and scale; for a reason, a number written in the pair's source or summary (or,
  for coverage, in the question);
- product-written: texts the product wrote instead of the model, as the result's `textAuthors`
  marks them (results from before that field count 0);
- quotes: reasons that quote a whole sentence of their text (`quote_evidence`), and of those,
  how many share a single content word with their claim or question: a quote is true of its
  text, and one that shares one word is weak evidence for its verdict, often a wrong verdict
  made visible (a question on a kiln's top temperature "answered" by the sentence that the kiln
  was installed).

The inputs come from DATA (the file the run scored, by id): results lines hold no texts.
"""

from __future__ import annotations

import argparse
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from offline_scorer.scorers.summarization.evidence import QUOTES_CLOCK_ALWAYS_ENDS, quoted
from offline_scorer.scorers.summarization.schemas import (
    MAX_EXPLANATION_CHARS,
    MAX_REASON_CHARS,
    word_bounds,
)
from offline_scorer.scorers.summarization.sentence import counted_words
from offline_scorer.scorers.summarization.stems import content_stems

CHECKS = (
    "not_a_sentence",
    "cut_mid_word",
    "list_numbering",
    "foreign_characters",
    "wrong_numbers",
)
"""The failures a text shown to a reader may have (any count above 0 is a failure)."""

COLUMNS = ("texts", *CHECKS, "product_written", "quotes", "quotes_sharing_one_word")
KINDS = ("claim reason", "coverage reason", "explanation")
EXPLANATION_MARKS = ("Judge's explanation: ", "Explanation (written by offline-scorer): ")
_SPELLED = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety"
)
_NUMBER_WORDS = dict(
    zip(
        _SPELLED.split(),
        [str(n) for n in range(21)] + [str(n) for n in range(30, 100, 10)],
        strict=True,
    )
)
_MAGNITUDES = frozenset(("hundred", "thousand", "million", "billion", "percent", "half", "dozen"))
_WORDS = re.compile(r"[a-z]+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u2019\u201d]*$")
_NUMBERING = re.compile(r"^\s*(?:\d{1,3}|[A-Za-z])[.)]\s")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ORDINARY = set(" \t\n.,;:!?'\"()[]-/%$&+*=<>@#\u2019\u2018\u201c\u201d\u2013\u2014\u2026\u00a0")


def script_of(char: str) -> str | None:
    """The Unicode script family of a letter ("LATIN", "CJK", "HIRAGANA", ...), else None."""
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


def scripts_in(texts: Iterable[str]) -> set[str]:
    return {script for text in texts for char in text if (script := script_of(char))}


def foreign(text: str, allowed: set[str]) -> bool:
    for char in text:
        category = unicodedata.category(char)
        if category.startswith("L"):
            if script_of(char) not in allowed:
                return True
        elif category.startswith("N"):
            if not char.isdigit() or not char.isascii():
                return True  # superscripts, fractions, circled and wide digits
        elif char not in _ORDINARY:
            return True
    return False


def numbers_in(text: str) -> set[str]:
    """Numbers in digits, and number words read as digits ("forty" is "40")."""
    found = {n.replace(",", "") for n in _NUMBER.findall(text)}
    for word in _WORDS.findall(text.lower()):
        if word in _NUMBER_WORDS:
            found.add(_NUMBER_WORDS[word])
        elif word in _MAGNITUDES:
            found.add(word)
    return found


def _split_reason(reason: str) -> tuple[str, str | None]:
    """(headline, explanation) of a result's reason."""
    for mark in EXPLANATION_MARKS:
        if mark in reason:
            head, explanation = reason.split(mark, 1)
            return head, explanation
    return reason, None


def figures_of(result: Mapping[str, Any]) -> set[str]:
    """The numbers an explanation may state: what the headline reports."""
    shown = _split_reason(result["reason"])[0]
    return numbers_in(shown) | numbers_in(str(result["score"]))


def check(
    text: str,
    bound: int,
    word_bound: int | None,
    allowed_scripts: set[str],
    allowed_numbers: set[str],
    quote: bool = False,
) -> Counter:
    """The failures of one text; a `quote` (a whole sentence of an input in `as_quote`'s frame,
    chosen from a list, so no word bound stopped it) is cut only if it is not a sentence."""
    found: Counter = Counter(texts=1)
    stripped = text.strip()
    sentence = bool(_SENTENCE_END.search(stripped))
    if not sentence:
        found["not_a_sentence"] += 1
    bounded = word_bound is not None and not quote
    at_word_bound = bounded and len(counted_words(text)) >= (word_bound or 0)
    if at_word_bound or (not sentence and stripped[-1:].isalnum() and len(text) >= bound - 1):
        found["cut_mid_word"] += 1
    if _NUMBERING.match(text):
        found["list_numbering"] += 1
    if foreign(text, allowed_scripts):
        found["foreign_characters"] += 1
    if numbers_in(text) - allowed_numbers:
        found["wrong_numbers"] += 1
    return found


def texts_of(
    result: Mapping[str, Any], style: str = "sentences"
) -> Iterator[tuple[str, str, int, int, str, bool]]:
    """(kind, text, character bound, word bound, extra text whose numbers it may state,
    product-written) of one result, decoded in free-text `style`."""
    authors = result.get("textAuthors") or {}
    reason_words, explanation_words = word_bounds(style)

    def by_product(key: str, index: int | None = None) -> bool:
        found = authors.get(key)
        if index is not None and isinstance(found, list):
            found = found[index] if index < len(found) else None
        return found == "product"

    for i, verdict in enumerate(result["preprocessStepResult"]["alignment"]):
        claim = verdict["claim"]
        product = by_product("alignment", i)
        yield "claim reason", verdict["reason"], MAX_REASON_CHARS, reason_words, claim, product
    for i, verdict in enumerate(result["analyzeStepResult"]["coverage"]):
        question = verdict["question"]
        product = by_product("coverage", i)
        reason = verdict["reason"]
        yield "coverage reason", reason, MAX_REASON_CHARS, reason_words, question, product
    explanation = _split_reason(result["reason"])[1]
    if explanation is not None:
        product = by_product("explanation")
        chars, words = MAX_EXPLANATION_CHARS, explanation_words
        yield "explanation", explanation, chars, words, "", product


def count(results: Path, data: Path, style: str = "sentences") -> dict[str, dict[str, int]]:
    inputs: dict[str, tuple[str, str]] = {}
    with data.open(encoding="utf-8") as rows:
        for row in rows:
            if row.strip():
                item = json.loads(row)
                inputs[str(item["id"])] = (str(item["source"]), str(item["summary"]))
    table: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    with results.open(encoding="utf-8") as lines:
        for line in lines:
            parsed = json.loads(line)
            result = parsed.get("result")
            if parsed.get("status") != "ok" or result is None:
                continue
            source, summary = inputs[str(parsed["id"])]
            scripts = scripts_in([source, summary])
            sentences = "textAuthors" in result  # decoded as whole sentences of known words
            for kind, text, bound, words, context, product in texts_of(result, style):
                word_bound = words if sentences else None
                if kind == "explanation":
                    allowed = figures_of(result)
                else:
                    allowed = numbers_in(source) | numbers_in(summary) | numbers_in(context)
                grounds = (source, "source") if kind == "claim reason" else (summary, "summary")
                sentence = (
                    None
                    if kind == "explanation"
                    else quoted(text, *grounds, clock_always_ends=QUOTES_CLOCK_ALWAYS_ENDS)
                )
                quote = sentence is not None
                table[kind] += check(text, bound, word_bound, scripts, allowed, quote)
                table[kind]["product_written"] += product
                if sentence is not None:
                    table[kind]["quotes"] += 1
                    shared = content_stems(sentence) & content_stems(context)
                    table[kind]["quotes_sharing_one_word"] += len(shared) == 1
    return {kind: {c: table[kind][c] for c in COLUMNS} for kind in KINDS}


def markdown(table: Mapping[str, Mapping[str, int]]) -> str:
    head = "| text | " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " |"
    rule = "| --- |" + " ---: |" * len(COLUMNS)
    rows = [
        f"| {kind} | " + " | ".join(str(v[c]) for c in COLUMNS) + " |" for kind, v in table.items()
    ]
    return "\n".join([head, rule, *rows])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path)
    parser.add_argument("--data", type=Path, required=True, help="the file the run scored")
    parser.add_argument("--free-text", default="sentences", help="the run's free-text style")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    table = count(args.results, args.data, args.free_text)
    print(json.dumps(table, indent=2) if args.json else markdown(table))


if __name__ == "__main__":
    main()
