"""Why the judge's texts are replaced: every refused text, counted by the check that refused it.

    python bench/bench_refusals.py DATA --model NAME --cassette FILE [--rows N] [--examples K]
        [--json]

`bench/bench_texts.py` counts how many texts the product wrote; this says why. It replays a
recorded eval of DATA (no model: every exchange must be in FILE) and watches the two functions
that decide whether a person sees the judge's text (`readable.problem` for every reason and
explanation, `misstated_result.misstates` for the explanation's figures), then prints, per
check, how many texts it refused and K of them with what they were about. Reading those
examples is how a check is judged: one that refuses a capable judge's true sentences costs it
its words, one that refuses its false ones is why the result stays true.

Watching wraps the two functions for the run (the scorer calls them through the module), so the
texts and their checks are exactly what `eval` decides; nothing else changes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from offline_scorer.assembly.open import JudgeSettings, open_judge  # noqa: E402
from offline_scorer.assembly.run_spec import RunSpec  # noqa: E402
from offline_scorer.cassette.judge import RecordMode  # noqa: E402
from offline_scorer.scorers.summarization import misstated_result, readable  # noqa: E402
from offline_scorer.scorers.summarization.refusal import Refusal  # noqa: E402
from offline_scorer.scorers.summarization.scorer import SummarizationScorer  # noqa: E402

Refused = dict[str, Any]


def _refused(found: Refusal, text: str, subject: str | None) -> Refused:
    return {"check": found.check, "detail": found.detail, "text": text, "subject": subject}


@contextmanager
def watching() -> Iterator[list[Refused]]:
    """Every refusal the readability checks make inside the block: (check, detail, text,
    subject)."""
    refusals: list[Refused] = []
    problem, misstates = readable.problem, misstated_result.misstates

    def watched_problem(text: str, *args: Any, **kwargs: Any) -> Refusal | None:
        found = problem(text, *args, **kwargs)
        if found is not None:
            subject = args[3] if len(args) > 3 else kwargs.get("subject")
            refusals.append(_refused(found, text, subject))
        return found

    def watched_misstates(text: str, score: float, limiting_axis: str) -> Refusal | None:
        found = misstates(text, score, limiting_axis)
        if found is not None:
            refusals.append(_refused(found, text, f"score {score:g}, limited by {limiting_axis}"))
        return found

    readable.problem = watched_problem  # type: ignore[assignment]
    misstated_result.misstates = watched_misstates
    try:
        yield refusals
    finally:
        readable.problem, misstated_result.misstates = problem, misstates


def refusals_of(data: Path, model: str, cassette: Path, rows: int | None) -> list[Refused]:
    settings = JudgeSettings(model=model, cassette=cassette, mode=RecordMode.REPLAY)
    options = RunSpec.of("summarization", {}, settings).options  # the judge's own, as eval has
    judge, _spec = open_judge(settings)
    scorer = SummarizationScorer(judge, options)
    pairs = [json.loads(line) for line in data.open(encoding="utf-8") if line.strip()]
    with judge, watching() as refusals:
        for pair in pairs[:rows]:
            scorer.score_texts(pair["source"], pair["summary"])
    return refusals


def one_line(text: str | None, width: int = 200) -> str:
    """A subject on one line (the explanation's is the result's facts, several lines)."""
    flat = " / ".join((text or "").splitlines())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def table(refusals: list[Refused], examples: int, show: Callable[[str], None]) -> None:
    counts = Counter(refusal["check"] for refusal in refusals)
    show(f"{len(refusals)} texts refused\n")
    show("| check that refused the text | texts |")
    show("| --- | ---: |")
    for check, count in counts.most_common():
        show(f"| {check} | {count} |")
    for check, _count in counts.most_common():
        show(f"\n{check}:")
        for refusal in [r for r in refusals if r["check"] == check][:examples]:
            show(f"  about: {one_line(refusal['subject'])}")
            show(f"  text:  {refusal['text']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("data", type=Path, help="the file the run scored")
    parser.add_argument("--model", required=True, help="the judge the cassette was recorded with")
    parser.add_argument("--cassette", type=Path, required=True)
    parser.add_argument("--rows", type=int, help="only the first N rows")
    parser.add_argument("--examples", type=int, default=3, help="texts shown per check")
    parser.add_argument("--json", action="store_true", help="every refusal as a JSON line")
    args = parser.parse_args()
    refusals = refusals_of(args.data, args.model, args.cassette, args.rows)
    if args.json:
        for refusal in refusals:
            print(json.dumps(refusal, ensure_ascii=False))
        return
    table(refusals, args.examples, print)


if __name__ == "__main__":
    main()
