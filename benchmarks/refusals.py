"""Why the judge's texts are replaced: every refused text, counted by the check that refused it.

    python -m benchmarks.refusals DATA --model NAME --cassette FILE [--rows N] [--examples K]
        [--json]

`benchmarks/texts.py` counts how many texts the product wrote; this says why. It replays a
recorded eval of DATA (no model: every exchange must be in FILE) and watches every refusal the
scorer makes (`refusal.watch`: each reason and the explanation pass their check's verdict
through `refusal.noted`), then prints, per check, how many texts it refused and K of them with
what they were about. Reading those
examples is how a check is judged: one that refuses a capable judge's true sentences costs it
its words, one that refuses its false ones is why the result stays true.

Watching changes nothing the scorer does, so the texts and their checks are exactly what
`eval` decides.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import read_jsonl
from offline_scorer.assembly.open import JudgeSettings, open_judge
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.cassette.judge import RecordMode
from offline_scorer.scorers.summarization.refusal import watch
from offline_scorer.scorers.summarization.scorer import SummarizationScorer

Refused = dict[str, Any]


def refusals_of(data: Path, model: str, cassette: Path, rows: int | None) -> list[Refused]:
    settings = JudgeSettings(model=model, cassette=cassette, mode=RecordMode.REPLAY)
    options = RunSpec.of("summarization", {}, settings).options  # the judge's own, as eval has
    judge, _spec = open_judge(settings)
    scorer = SummarizationScorer(judge, options)
    pairs = read_jsonl(data)
    with judge, watch() as refused:
        for pair in pairs[:rows]:
            scorer.score_texts(pair["source"], pair["summary"])
    return [
        {"check": r.refusal.check, "detail": r.refusal.detail, "text": r.text, "subject": r.subject}
        for r in refused
    ]


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
