"""The summarization scorer: resolve texts, ask the judge three times, score, explain.

It knows nothing about where answers come from: a live model, a cassette and a scripted judge
all sit behind `Judge.complete`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from offline_scorer.errors import GenerationError
from offline_scorer.judging.ask import ask
from offline_scorer.judging.protocol import Completion, Judge, TextJudge, as_judge
from offline_scorer.scorers.summarization import prompts, readable
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.reason import (
    compose_reason,
    facts,
    figures_of,
    written_explanation,
)
from offline_scorer.scorers.summarization.result import (
    AnalyzeStepResult,
    PreprocessStepResult,
    ScorerResult,
    TextAuthors,
    VerdictProbabilities,
)
from offline_scorer.scorers.summarization.rule import AXES, align_verdicts, score_verdicts
from offline_scorer.scorers.summarization.runs import resolve_source, resolve_summary, split_run
from offline_scorer.scorers.summarization.schemas import (
    ReasonOutput,
    coverage_model,
    layout_of,
    preprocess_model,
    word_bounds,
)

REQUESTS_REVISION = 2
"""What the request builders send, revision by revision; it enters `identity()`, so `--resume`
re-scores lines an earlier revision made. 1: each verdict's reason beside it; 2: in the
"sentences" style every verdict before any reason."""


def _probabilities(step: str, completion: Completion, verdicts: int) -> tuple[float, ...] | None:
    """One P(true) per verdict of the answer, or None when the judge gave none."""
    found = completion.verdict_probabilities
    if found is not None and len(found) != verdicts:
        raise GenerationError(
            f"{step}: the judge gave {len(found)} verdict probabilities for {verdicts} verdicts"
        )
    return found


class SummarizationScorer:
    """Mastra's Summarization Scorer contract over any `Judge`."""

    name = "summarization"
    steps: tuple[str, ...] = ("preprocess", "analyze", "reason")
    axes: tuple[str, ...] = AXES

    def __init__(self, judge: Judge | TextJudge, options: ScorerOptions) -> None:
        self.judge: Judge = as_judge(judge)  # a user's judge may only have `complete`
        self.options = options

    def identity(self) -> dict[str, Any]:
        """Options and each step's sampling settings (fixed by the prompts)."""
        style, threshold = self.options.free_text, self.options.coverage_threshold
        sampling = {
            step: prompts.sampling(
                step, style, threshold if step == "analyze" else None
            ).normalized()
            for step in prompts.SAMPLING
        }
        return {
            "options": self.options.identity(),
            "sampling": sampling,
            "requests": REQUESTS_REVISION,
        }

    def _texts(self, run: Mapping[str, Any]) -> tuple[str, str]:
        """(source, summary) of a Mastra run, by the spec's resolution rules."""
        run_input, output = split_run(run)
        summary = resolve_summary(output)  # first, as before: its errors are reported first
        return resolve_source(run_input, output, self.options), summary

    def run(self, run: Mapping[str, Any]) -> ScorerResult:
        return self.score_texts(*self._texts(run))

    def claim_probabilities(self, run: Mapping[str, Any]) -> tuple[float, ...] | None:
        """P(supported) of each claim of the run's summary (preprocess step only), or None when
        the judge gives no probabilities: what calibrating a verdict threshold needs."""
        source, summary = self._texts(run)
        options = self.options
        request = prompts.preprocess_request(
            source, summary, options.max_questions, options.free_text
        )
        pre, completion = ask(self.judge, request, preprocess_model(layout_of(options.free_text)))
        return _probabilities("preprocess", completion, len(pre.alignment))

    def score_texts(self, source: str, summary: str) -> ScorerResult:
        """Score a summary against a source given as plain text."""
        max_questions, style = self.options.max_questions, self.options.free_text
        layout = layout_of(style)
        reason_words, explanation_words = word_bounds(style)
        pre, pre_completion = ask(
            self.judge,
            prompts.preprocess_request(source, summary, max_questions, style),
            preprocess_model(layout),
        )
        supported_p = _probabilities("preprocess", pre_completion, len(pre.alignment))
        # A blank summary makes no claims, whatever a judge answers (live grammars enforce it).
        claims, claim_authors = readable.claim_reasons(
            pre.verdicts() if summary.strip() else [],
            prompts.preprocess_vocabulary(source, summary),
            f"{source}\n{summary}",
            reason_words,
        )
        asked = pre.questions[:max_questions]
        cov, cov_completion = ask(
            self.judge,
            prompts.analyze_request(summary, asked, style, self.options.coverage_threshold),
            coverage_model(layout),
        )
        answered_p = _probabilities("analyze", cov_completion, len(cov.coverage))
        coverage, coverage_authors = readable.coverage_reasons(
            align_verdicts(asked, cov.verdicts()),
            prompts.analyze_vocabulary(summary, asked),
            summary,
            reason_words,
            judged=len(cov.coverage),
        )
        outcome = score_verdicts(claims, asked, coverage, self.options.scale)
        shown = facts(outcome)
        request = prompts.reason_request(shown, style, repr(outcome.score))
        explained, _ = ask(self.judge, request, ReasonOutput)
        explanation = explained.explanation
        figures = figures_of(outcome)
        by_judge = (
            readable.problem(
                explanation, explanation_words, prompts.reason_vocabulary(shown), figures, shown
            )
            or readable.misstates(explanation, outcome.score, outcome.limiting_axis)
        ) is None
        if not by_judge:
            explanation = written_explanation(outcome)
        probabilities = None
        if supported_p is not None or answered_p is not None:
            threshold = (
                pre_completion.verdict_threshold
                if supported_p is not None
                else cov_completion.verdict_threshold
            )
            probabilities = VerdictProbabilities.aligned(
                threshold,
                supported_p[: len(claims)] if supported_p is not None else None,
                answered_p,
                len(claims),
                len(asked),
                coverage_threshold=self.options.coverage_threshold,
            )
        return ScorerResult(
            score=outcome.score,
            reason=compose_reason(outcome, explanation, by_judge),
            preprocess_step_result=PreprocessStepResult(
                alignment=tuple(claims), questions=tuple(pre.questions)
            ),
            analyze_step_result=AnalyzeStepResult(coverage=tuple(coverage)),
            verdict_probabilities=probabilities,
            text_authors=TextAuthors(
                explanation="model" if by_judge else "product",
                alignment=claim_authors,
                coverage=coverage_authors,
            ),
            outcome=outcome,
        )


def create_summarization_scorer(
    *,
    judge: object = None,
    options: Mapping[str, Any] | ScorerOptions | None = None,
    model: object = None,
) -> SummarizationScorer:
    """Build a scorer; bad options raise here, before any model call.

    `model=` is the name Mastra's API uses for the judge; `judge=` says what it is. Any object
    with `complete(request) -> str | Completion` will do.
    """
    if (judge is None) == (model is None):
        raise TypeError("give the judge once: create_summarization_scorer(judge=...)")
    resolved = ScorerOptions.from_mapping(options)
    return SummarizationScorer(judge if judge is not None else model, resolved)  # type: ignore[arg-type]
