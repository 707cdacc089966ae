"""Asking a judge for a structured answer: the request's schema in, a parsed pydantic model out.

A scorer never parses text itself, so every answer that does not fit its model fails the same
way, with a one-line GenerationError that quotes where.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

from offline_scorer.errors import GenerationError
from offline_scorer.judging.protocol import Completion, Judge, JudgeRequest

Model = TypeVar("Model", bound=BaseModel)


def ask(judge: Judge, request: JudgeRequest, model: type[Model]) -> tuple[Model, Completion]:
    completion = judge.complete(request)
    text = completion.text
    try:
        return model.model_validate_json(text), completion
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        snippet = text[:120].replace("\n", " ")
        raise GenerationError(
            f"{request.step}: the judge's answer does not fit the schema ({where}: "
            f"{first['msg']}); answer starts {snippet!r}"
        ) from None
