"""P(answered) read against the content-free baseline (contextual calibration).

A small judge answers some questions "yes" whatever the summary says: asked of an empty summary
("N/A"), Qwen2.5-Coder-1.5B's P(answered) runs from 0.10 to 0.54 by the question alone (452
questions of coverage-dev.jsonl). Taking
that leaning out, P' = sigmoid(logit P - logit P_empty), is the correction of Zhao et al.,
"Calibrate Before Use" (ICML 2021); one threshold on P' then suits every question. A verdict is
committed while decoding, so the threshold is carried to each question's own scale instead:
P' >= t exactly when P >= sigmoid(logit t + logit P_empty).
"""

from __future__ import annotations

import math

_EDGE = 1e-6  # a probability of exactly 0 or 1 has no logit


def _logit(p: float) -> float:
    p = min(max(p, _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def against_baseline(p: float, empty: float) -> float:
    """P(answered) with the question's content-free P(answered), `empty`, taken out."""
    return _sigmoid(_logit(p) - _logit(empty))


def threshold_on_question(threshold: float, empty: float) -> float:
    """The raw P(answered) at which this question's verdict is committed so that it counts as
    answered exactly when `against_baseline` reaches `threshold`."""
    return _sigmoid(_logit(threshold) + _logit(empty))
