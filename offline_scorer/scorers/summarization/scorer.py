"""The summarization scorer: resolve texts, ask the judge three times, score, explain.

It knows nothing about where answers come from: a live model, a cassette and a scripted judge
all sit behind `Judge.complete`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from offline_scorer.errors import GenerationError
from offline_scorer.formats import SUMMARIZATION_REQUESTS_REVISION, SUMMARIZATION_SHOWN_REVISION
from offline_scorer.judging.ask import ask
from offline_scorer.judging.protocol import Completion, Judge, JudgeRequest, TextJudge, as_judge
from offline_scorer.scorers.summarization import prompts, question_prompts, readable
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.baseline import against_baseline, threshold_on_question
from offline_scorer.scorers.summarization.explanation_checks import explanation_problem
from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.misstated_result import ExplainedResult
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.reason import (
    compose_reason,
    facts,
    failing_items,
    figures_of,
    written_explanation,
)
from offline_scorer.scorers.summarization.reason_checks import Allowance
from offline_scorer.scorers.summarization.refusal import noted
from offline_scorer.scorers.summarization.result import (
    AnalyzeStepResult,
    PreprocessStepResult,
    ScorerResult,
    TextAuthors,
    VerdictProbabilities,
)
from offline_scorer.scorers.summarization.rule import (
    AXES,
    ScoreOutcome,
    align_verdicts,
    score_verdicts,
)
from offline_scorer.scorers.summarization.runs import resolve_source, resolve_summary, split_run
from offline_scorer.scorers.summarization.schemas import (
    ClaimCheck,
    ClaimVerdict,
    QuestionCheck,
    QuestionsOutput,
    QuestionVerdict,
    ReasonOutput,
    coverage_model,
    layout_of,
    preprocess_model,
    word_bounds,
)


def _probabilities(step: str, completion: Completion, verdicts: int) -> tuple[float, ...] | None:
    """One P(true) per verdict of the answer, or None when the judge gave none."""
    found = completion.verdict_probabilities
    if found is not None and len(found) != verdicts:
        raise GenerationError(
            f"{step}: the judge gave {len(found)} verdict probabilities for {verdicts} verdicts"
        )
    return found


Verdict = TypeVar("Verdict", ClaimVerdict, QuestionVerdict)


REVISIONS: dict[str, int] = {
    "requests": SUMMARIZATION_REQUESTS_REVISION,
    **({"shown": SUMMARIZATION_SHOWN_REVISION} if SUMMARIZATION_SHOWN_REVISION > 1 else {}),
}
"""The revisions of what the scorer sends the judge and shows a person (`formats`), as its
identity and a recording's recipe carry them; a revision at 1 is left out (see
`SUMMARIZATION_SHOWN_REVISION`)."""


@dataclass(frozen=True)
class Judged(Generic[Verdict]):
    """One step's verdicts as the judge gave them, P(true) of each (None: the judge gives
    none) and the threshold they were committed at."""

    verdicts: list[Verdict]
    probabilities: tuple[float, ...] | None
    threshold: float | None


Asked = list[tuple[str, JudgeRequest]]
"""One-verdict requests, each with the claim or question it asks about (a summary may say
the same sentence twice: each is judged)."""


def _one_by_one(
    judge: Judge,
    requests: Asked,
    check: type[ClaimCheck | QuestionCheck],
    verdict: type[Verdict],
    subject: str,
) -> Judged[Verdict]:
    """Ask each one-verdict request; each answer joined to the claim or question (`subject`
    names the field) it was asked about, in the verdict shape of a whole answer."""
    answers = []
    for asked, request in requests:
        answer, completion = ask(judge, request, check)
        fields: dict[str, Any] = {subject: asked, **answer.__dict__}
        answers.append((verdict(**fields), completion))
    return _judged(answers)


def _judged(answers: list[tuple[Verdict, Completion]]) -> Judged[Verdict]:
    """The verdicts of one-verdict answers, in order, and their P(true) (None when the judge
    gave none for any of them)."""
    verdicts: list[Verdict] = []
    found: list[float] | None = []
    threshold = None
    for verdict, completion in answers:
        verdicts.append(verdict)
        given = _probabilities("one-verdict answer", completion, 1)
        found = None if given is None or found is None else found + list(given)
        threshold = completion.verdict_threshold
    return Judged(verdicts, None if found is None else tuple(found), threshold)


class SummarizationScorer:
    """Mastra's Summarization Scorer contract over any `Judge`."""

    name = "summarization"
    steps: tuple[str, ...] = ("preprocess", "analyze", "reason")
    axes: tuple[str, ...] = AXES

    def __init__(self, judge: Judge | TextJudge, options: ScorerOptions) -> None:
        self.judge: Judge = as_judge(judge)  # a user's judge may only have `complete`
        self.options = options
        self.asking = Asking.of(options)  # what the requests depend on, read once
        self._empty: dict[tuple[str, str], float] = {}  # content-free P(answered) by question

    def identity(self) -> dict[str, Any]:
        """Options and each step's sampling settings (fixed by the prompts)."""
        options = self.options
        thresholds = {"preprocess": options.claim_threshold, "analyze": options.coverage_threshold}
        sampling = {
            step: prompts.sampling(step, options.free_text, thresholds.get(step)).normalized()
            for step in prompts.SAMPLING
        }
        return {"options": self.options.identity(), "sampling": sampling, **REVISIONS}

    def _texts(self, run: Mapping[str, Any]) -> tuple[str, str]:
        """(source, summary) of a Mastra run, by the spec's resolution rules."""
        run_input, output = split_run(run)
        summary = resolve_summary(output)  # first, as before: its errors are reported first
        return resolve_source(run_input, output, self.options), summary

    def run(self, run: Mapping[str, Any]) -> ScorerResult:
        return self.score_texts(*self._texts(run))

    def claim_probabilities(self, run: Mapping[str, Any]) -> tuple[float, ...] | None:
        """P(supported) of each claim of the run's summary (the claims' verdicts only), or None
        when the judge gives no probabilities: what calibrating a verdict threshold needs."""
        source, summary = self._texts(run)
        if self.options.one_by_one:
            return self._claim_checks(source, summary).probabilities
        return self._preprocess(source, summary)[0].probabilities

    def _preprocess(self, source: str, summary: str) -> tuple[Judged[ClaimVerdict], list[str]]:
        """The claims' verdicts and the coverage questions, in one answer or (one by one) the
        questions first and then a request per claim; questions of facts, one by one, are
        chosen by their weight in the source and need no request."""
        options, asking = self.options, self.asking
        style, cut = asking.style, asking.clock_always_ends
        if options.one_by_one and asking.unit == "facts":
            asked = prompts.candidates_of(source, options.max_questions, "facts", cut)
            return self._claim_checks(source, summary), list(asked)
        if options.one_by_one:
            request = prompts.questions_request(source, options.max_questions, style, cut)
            chosen, _ = ask(self.judge, request, QuestionsOutput)
            return self._claim_checks(source, summary), list(chosen.questions)
        request = prompts.preprocess_request(source, summary, options.max_questions, asking)
        pre, completion = ask(self.judge, request, preprocess_model(layout_of(style)))
        found = _probabilities("preprocess", completion, len(pre.alignment))
        # A blank summary makes no claims, whatever a judge answers (live grammars enforce it).
        verdicts = pre.verdicts() if summary.strip() else []
        return Judged(verdicts, found, completion.verdict_threshold), list(pre.questions)

    def _claim_checks(self, source: str, summary: str) -> Judged[ClaimVerdict]:
        asking = self.asking
        requests = [
            (claim, prompts.claim_request(source, summary, claim, asking))
            for claim in claims_of(summary, clock_always_ends=asking.clock_always_ends)
        ]
        return _one_by_one(self.judge, requests, ClaimCheck, ClaimVerdict, "claim")

    def judge_coverage(self, summary: str, asked: list[str]) -> Judged[QuestionVerdict]:
        """The questions' verdicts, in one answer or one request per question."""
        style, threshold = self.options.free_text, self.options.coverage_threshold
        if self.options.one_by_one:
            return self._question_by_question(summary, asked)
        request = prompts.analyze_request(summary, asked, style, threshold)
        cov, completion = ask(self.judge, request, coverage_model(layout_of(style)))
        found = _probabilities("analyze", completion, len(cov.coverage))
        return Judged(cov.verdicts(), found, completion.verdict_threshold)

    def _question_by_question(self, summary: str, asked: list[str]) -> Judged[QuestionVerdict]:
        """One request per question. With `coverage_baseline` each question is asked of the
        empty summary first, its verdict committed at the threshold carried to its own scale
        (`baseline`), and the P(answered) given back are read against the baseline, on the
        scale of `coverage_threshold`."""
        options = self.options
        style, threshold = options.free_text, options.coverage_threshold
        empty = [self._empty_p(q, style) for q in asked] if options.coverage_baseline else None
        at = [threshold] * len(asked)
        if empty is not None:
            assert threshold is not None  # ScorerOptions requires it with coverage_baseline
            at = [threshold_on_question(threshold, e) for e in empty]
        requests = [
            (
                q,
                question_prompts.question_request(
                    summary, q, self.asking, t, stated=empty is not None
                ),
            )
            for q, t in zip(asked, at, strict=True)
        ]
        judged = _one_by_one(self.judge, requests, QuestionCheck, QuestionVerdict, "question")
        if empty is None:
            return judged
        raw = judged.probabilities
        if raw is None:
            raise GenerationError("coverage_baseline needs a judge that gives P(answered)")
        read = tuple(against_baseline(p, e) for p, e in zip(raw, empty, strict=True))
        return Judged(judged.verdicts, read, threshold)

    def _empty_p(self, question: str, style: str) -> float:
        """The question's content-free P(answered), asked once per scorer (a batch scores
        many summaries of one source); the memo is bounded like the request builders'."""
        key = (question, style)
        if key not in self._empty:
            if len(self._empty) >= 4 * prompts.REQUESTS_KEPT:
                self._empty.clear()
            completion = self.judge.complete(question_prompts.baseline_request(question, style))
            found = _probabilities("coverage baseline", completion, 1)
            if found is None:
                raise GenerationError("coverage_baseline needs a judge that gives P(answered)")
            self._empty[key] = found[0]
        return self._empty[key]

    def score_texts(self, source: str, summary: str) -> ScorerResult:
        """Score a summary against a source given as plain text."""
        max_questions, style = self.options.max_questions, self.options.free_text
        reason_words, explanation_words = word_bounds(style)
        judged_claims, questions = self._preprocess(source, summary)
        claims, claim_authors = readable.claim_reasons(
            judged_claims.verdicts,
            prompts.preprocess_vocabulary(source, summary),
            f"{source}\n{summary}",
            reason_words,
            source,
        )
        asked = questions[:max_questions]
        judged_questions = self.judge_coverage(summary, asked)
        coverage, coverage_authors = readable.coverage_reasons(
            align_verdicts(asked, judged_questions.verdicts),
            prompts.analyze_vocabulary(summary, asked),
            summary,
            reason_words,
            judged=len(judged_questions.verdicts),
        )
        outcome = score_verdicts(claims, asked, coverage, self.options.scale)
        explanation, by_judge = self._explain(outcome, style, explanation_words, source, summary)
        supported_p = judged_claims.probabilities
        answered_p = judged_questions.probabilities
        probabilities = None
        if supported_p is not None or answered_p is not None:
            threshold = (
                judged_claims.threshold if supported_p is not None else judged_questions.threshold
            )
            probabilities = VerdictProbabilities.aligned(
                threshold,
                (supported_p[: len(claims)] if supported_p is not None else None, answered_p),
                (len(claims), len(asked)),
                coverage_threshold=self.options.coverage_threshold,
            )
        return ScorerResult(
            score=outcome.score,
            reason=compose_reason(outcome, explanation, by_judge),
            preprocess_step_result=PreprocessStepResult(
                alignment=tuple(claims), questions=tuple(questions)
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

    def _explain(
        self, outcome: ScoreOutcome, style: str, words: int, source: str, summary: str
    ) -> tuple[str, bool]:
        """(the explanation shown, whether the judge wrote it): the judge's own when it is a
        readable sentence that states the computed figures rightly, else the product's, so a
        reader never gets a wrong or unreadable explanation."""
        shown = facts(outcome)
        request = prompts.reason_request(shown, style, repr(outcome.score))
        explained, _ = ask(self.judge, request, ReasonOutput)
        explanation = explained.explanation
        result = ExplainedResult(
            outcome.score,
            outcome.limiting_axis,
            (outcome.alignment, outcome.coverage),
            failing=tuple(failing_items(outcome)),
            figures=figures_of(outcome),
            pair=f"{source}\n{summary}",
            unsupported=tuple(c.claim for c in outcome.unsupported_claims),
        )
        allowed = Allowance(words, prompts.reason_vocabulary(shown), figures_of(outcome))
        problem = explanation_problem(explanation, allowed, shown, result)
        if noted(problem, explanation, shown) is not None:
            return written_explanation(outcome), False
        return explanation, True


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
