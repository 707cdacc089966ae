"""The three judging prompts, in one place, written for small local models.

Every call shares one system message (the matching rules), so a model runtime can keep that
prefix in its KV cache between calls. Each user message states its task, shows one worked
example in the exact compact JSON the grammar allows, then gives the real inputs. The coverage
prompt is built from the summary and the questions only: the source never reaches it.
"""

from __future__ import annotations

from collections.abc import Sequence

from offline_scorer.judge import JudgeRequest, Message, SamplingSettings
from offline_scorer.schemas import coverage_schema, preprocess_schema, reason_schema

SYSTEM = """You are a strict, careful judge of summaries. You answer with JSON only.
Rules you always follow:
- Judge only from the text you are given, never from prior knowledge.
- Dates, numbers, names and domain terms must match exactly: "about 2020" does not support "2020".
- Paraphrase is fine. A weaker or stronger claim is not the same claim."""

_PREPROCESS = """Task, in two parts.
Part 1: split the SUMMARY into short atomic claims. For each claim set "supported" to true only \
when the SOURCE states it or directly implies it; set it to false when the SOURCE contradicts it \
or does not contain it. Give a short reason.
Part 2: independently of the summary, write at most {max_questions} closed yes/no questions \
about the key facts of the SOURCE, each answerable "yes" from the SOURCE alone.

Example:
SOURCE: The Brindle Library opened in 1998 in Port Alder. It holds 40,000 books.
SUMMARY: The Brindle Library opened in 1998 and holds 50,000 books.
ANSWER: {{"alignment":[{{"claim":"The Brindle Library opened in 1998.","supported":true,\
"reason":"The source says it opened in 1998."}},{{"claim":"The library holds 50,000 books.",\
"supported":false,"reason":"The source says 40,000 books."}}],"questions":["Did the Brindle \
Library open in 1998?","Is the Brindle Library in Port Alder?","Does the library hold 40,000 \
books?"]}}

Now the real task.
SOURCE:
{source}

SUMMARY:
{summary}

ANSWER:"""

_ANALYZE = """Task: for each QUESTION, decide whether the SUMMARY alone answers it with "yes". \
Set "answered" to true only when the SUMMARY states the fact the question asks about; set it to \
false when the SUMMARY leaves the fact out or says something different. Answer every question, \
in the order given, copying each question exactly. Give a short reason.

Example:
SUMMARY: The Brindle Library opened in 1998 and holds 50,000 books.
QUESTIONS:
1. Did the Brindle Library open in 1998?
2. Is the Brindle Library in Port Alder?
ANSWER: {{"coverage":[{{"question":"Did the Brindle Library open in 1998?","answered":true,\
"reason":"The summary says it opened in 1998."}},{{"question":"Is the Brindle Library in Port \
Alder?","answered":false,"reason":"The summary does not say where the library is."}}]}}

Now the real task.
SUMMARY:
{summary}

QUESTIONS:
{questions}

ANSWER:"""

_REASON = """Task: explain this score to a reader in one or two sentences. Say which axis \
limits the score and why, using the unsupported claims and unanswered questions below. Do not \
write any digits: the numbers are reported separately.

Example:
SCORE: 0.5 (alignment 0.5, coverage 1)
LIMITING AXIS: alignment
UNSUPPORTED CLAIMS:
- The library holds 50,000 books.
UNANSWERED QUESTIONS:
- none
ANSWER: {{"explanation":"The summary changes the size of the collection, so alignment limits \
the score, while it keeps every key fact the questions asked about."}}

Now the real task.
{facts}

ANSWER:"""

# Output budgets in tokens. Each is above what the step's grammar can emit for typical text
# (reason: above its worst case, every character an escape pair); an answer that still reaches
# its budget fails the evaluation rather than being cut. They enter cassette keys.
PREPROCESS_MAX_TOKENS = 2048
ANALYZE_MAX_TOKENS = 1536
REASON_MAX_TOKENS = 512
SEED = 0


def _request(step: str, user: str, schema: dict, max_tokens: int) -> JudgeRequest:
    return JudgeRequest(
        step=step,
        messages=(Message("system", SYSTEM), Message("user", user)),
        output_schema=schema,
        sampling=SamplingSettings(temperature=0.0, seed=SEED, max_tokens=max_tokens),
    )


def preprocess_request(source: str, summary: str, max_questions: int) -> JudgeRequest:
    user = _PREPROCESS.format(source=source, summary=summary, max_questions=max_questions)
    # A blank summary makes no claims; the grammar says so, and a model cannot invent any.
    schema = preprocess_schema(max_questions, **({"max_claims": 0} if not summary.strip() else {}))
    return _request("preprocess", user, schema, PREPROCESS_MAX_TOKENS)


def analyze_request(summary: str, questions: Sequence[str]) -> JudgeRequest:
    listed = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1)) or "(no questions)"
    user = _ANALYZE.format(summary=summary, questions=listed)
    return _request("analyze", user, coverage_schema(questions), ANALYZE_MAX_TOKENS)


def reason_request(facts: str) -> JudgeRequest:
    return _request("reason", _REASON.format(facts=facts), reason_schema(), REASON_MAX_TOKENS)
