"""Are the judge's answers about the input? Counts over an `eval` results file and its data.

    python -m benchmarks.grounding fixtures/pairs.jsonl fixtures/golden/results.jsonl
    python -m benchmarks.grounding ../shared/data/judge-dev.jsonl dev.jsonl --limit 60

For every ok item it checks the answers against the texts they judged:
- worked-example text: any phrase of the worked examples the prompts used to carry (they leaked
  into half the answers), in a claim, question, verdict reason or explanation;
- repeats: a claim or question that occurs twice within one answer;
- claims grounded in the summary: every content word of the claim occurs in the summary;
- questions grounded in the source: at least 80% of the question's content words occur in it;
- explanation copied from the prompt: a run of 6 or more words of the fixed prompt text (system
  message and reason instructions) inside the judge's explanation.
Content words are `grounding.content_words` of the summarization scorer (lower-cased words,
stopwords out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from offline_scorer.report import read_results
from offline_scorer.scorers.summarization.grounding import content_words, words
from offline_scorer.scorers.summarization.prompts import _REASON, instructions

# The worked examples of the earlier prompts (offline-scorer 0.1), whose words leaked.
WORKED_EXAMPLE_PHRASES = (
    "brindle library",
    "port alder",
    "50,000 books",
    "40,000 books",
    "changes the size of the collection",
    "the library holds",
)
COPY_RUN = 6
QUESTION_SHARE = 0.8


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("results", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="first N data rows only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [
        json.loads(line)
        for line in args.data.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ][: args.limit]
    texts = {str(r["id"]): (r["source"], r["summary"]) for r in rows}
    prompt_runs = set().union(*(_runs(t, COPY_RUN) for t in instructions(_REASON)))
    counts = dict(
        items=0,
        example_answers=0,
        claims=0,
        repeated_claims=0,
        grounded_claims=0,
        questions=0,
        repeated_questions=0,
        grounded_questions=0,
        copied_explanations=0,
    )
    for item in read_results(args.results):  # checked lines, the recipe header left out
        if item["id"] not in texts or item["status"] != "ok":
            continue
        source, summary = texts[item["id"]]
        result = item["result"]
        counts["items"] += 1
        claims = [c["claim"] for c in result["preprocessStepResult"]["alignment"]]
        questions = result["preprocessStepResult"]["questions"]
        reasons = [c["reason"] for c in result["preprocessStepResult"]["alignment"]] + [
            v["reason"] for v in result["analyzeStepResult"]["coverage"]
        ]
        explanation = result["reason"].partition("Judge's explanation: ")[2]
        answer = " ".join([*claims, *questions, *reasons, explanation]).lower()
        source_words, summary_words = set(content_words(source)), set(content_words(summary))
        if any(
            phrase in answer and phrase not in (source + summary).lower()
            for phrase in WORKED_EXAMPLE_PHRASES
        ):
            counts["example_answers"] += 1
        counts["claims"] += len(claims)
        counts["repeated_claims"] += len(claims) - len(set(claims))
        counts["grounded_claims"] += sum(set(content_words(c)) <= summary_words for c in claims)
        counts["questions"] += len(questions)
        counts["repeated_questions"] += len(questions) - len(set(questions))
        for question in questions:
            found = content_words(question)
            share = sum(w in source_words for w in found) / len(found) if found else 1.0
            counts["grounded_questions"] += share >= QUESTION_SHARE
        counts["copied_explanations"] += bool(_runs(explanation, COPY_RUN) & prompt_runs)
    if args.json:
        print(json.dumps(counts, indent=2))
        return 0
    c = counts

    def pct(part: int, whole: int) -> str:
        return f"{100 * part / whole:.1f}%" if whole else "n/a"

    print(f"items judged                         {c['items']}")
    print(f"answers with worked-example text     {c['example_answers']}")
    print(f"repeated claims                      {c['repeated_claims']} of {c['claims']}")
    print(f"repeated questions                   {c['repeated_questions']} of {c['questions']}")
    print(
        f"claims grounded in the summary       {c['grounded_claims']} of {c['claims']} "
        f"({pct(c['grounded_claims'], c['claims'])})"
    )
    print(
        f"questions grounded in the source     {c['grounded_questions']} of {c['questions']} "
        f"({pct(c['grounded_questions'], c['questions'])}, >= 80% of content words)"
    )
    print(
        f"explanations copying the prompt      {c['copied_explanations']} "
        f"(a run of {COPY_RUN}+ words)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
