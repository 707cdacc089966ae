"""Are the coverage questions true, readable statements of their source? Counts, no model needed.

    python -m benchmarks.questions fixtures/pairs.jsonl
    python -m benchmarks.questions ../shared/data/judge-dev.jsonl --limit 40 [--model NAME]

The questions a judge's registry options make of each row's source (with `questions = facts`
they are chosen by the product, so no model runs), each checked by rules of this script's own,
not the product's:
- words not in the source: a word of the question's statement (after "Is it true that", and
  for a transcript line after "<speaker> said") that the source does not hold, in any case;
- fragments: a statement that ends with a word no statement ends with (an article, a
  preposition, a conjunction, an auxiliary, a filler), opens with a coordinating word, leaves a
  bracket or quote open, asks a question, ends with a colon, or holds fewer than three words of
  three letters or more;
- duplicates: the same question twice for one source.
Prints the counts and every question that fails, and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

FRAME = "Is it true that "
_WORD = re.compile(r"[^\W_]+")
_SPOKEN = re.compile(r'^(?P<speaker>[A-Z][\w\'.-]*(?: [A-Z][\w\'.-]*){0,3}) said "(?P<said>.*)"$')
_ENDS_NOT = frozenset(
    """a an the and or but nor of to for with from by at into about as than that which
    who whose whom if because while although so um uh er erm is are was were be been being has
    have had do does did will would can could should may might must my your our their his her
    its very""".split()  # noqa: SIM905
)
_OPENS_NOT = frozenset({"and", "but", "or", "so", "yet", "nor"})


def problems(question: str, source: str) -> list[str]:
    """What is wrong with one question of `source` (empty: nothing)."""
    if not (question.startswith(FRAME) and question.endswith("?")):
        return ["not in the question frame"]
    body = question[len(FRAME) : -1]
    spoken = _SPOKEN.match(body)
    statement = spoken.group("said") if spoken else body
    found = []
    known = {w.lower() for w in _WORD.findall(source)}
    said = _WORD.findall(spoken.group("speaker") if spoken else "")
    new = [w for w in _WORD.findall(statement) + said if w.lower() not in known]
    if new:
        found.append(f"words not in the source: {', '.join(new)}")
    words = [w.lower() for w in _WORD.findall(statement)]
    if not words or words[-1] in _ENDS_NOT:
        found.append("fragment: ends with " + (repr(words[-1]) if words else "nothing"))
    if words and words[0] in _OPENS_NOT:
        found.append(f"fragment: opens with {words[0]!r}")
    if statement.count("(") != statement.count(")") or statement.count('"') % 2:
        found.append("fragment: a bracket or quote left open")
    if "?" in statement or statement.rstrip().endswith(":"):
        found.append("fragment: asks a question or opens a list")
    if sum(len(w) >= 3 for w in words) < 3:
        found.append("fragment: fewer than three words of three letters")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="first N rows only")
    parser.add_argument("--model", default=None, help="whose registry options (default judge)")
    args = parser.parse_args()

    from offline_scorer.assembly.open import JudgeSettings
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.scorers.summarization.prompts import candidates_of

    options = RunSpec.of("summarization", {}, JudgeSettings(model=args.model)).options
    if options.questions != "facts":
        print(f"{args.model or 'the default judge'} asks questions = {options.questions}")
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    rows = rows[: args.limit] if args.limit else rows
    sources = list(dict.fromkeys(row["source"] for row in rows))
    asked = failed = duplicates = 0
    for source in sources:
        questions = candidates_of(
            source, options.max_questions, options.questions, options.clock_always_ends
        )
        asked += len(questions)
        duplicates += len(questions) - len(set(questions))
        for question in questions:
            found = problems(question, source)
            if found:
                failed += 1
                print(f"- {question}\n    {'; '.join(found)}")
    print(
        f"{len(rows)} rows, {len(sources)} sources, {asked} questions: {failed} not a "
        f"readable statement of their source, {duplicates} duplicates"
    )
    return 1 if failed or duplicates else 0


if __name__ == "__main__":
    sys.exit(main())
