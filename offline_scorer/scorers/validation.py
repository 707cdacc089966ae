"""Checking a serialised result against its kind's result model, with a one-line verdict.

A results file is read back by `report` and `--resume`; a result that does not fit its model
is named by its first problem, in the words of the model's own rules.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from offline_scorer import jsontext


def result_problem(model: type[BaseModel], data: Any) -> str | None:
    """What is wrong with a serialised result, or None; checked strictly, as JSON."""
    try:
        model.model_validate_json(jsontext.line(data), strict=True)
    except ValidationError as error:
        problems = error.errors(include_url=False)
        first = problems[0]
        where = ".".join(str(part) for part in first["loc"])
        if first["type"] == "missing":
            parent = first["loc"][:-1]
            lacking = [
                repr(str(p["loc"][-1]))
                for p in problems
                if p["type"] == "missing" and p["loc"][:-1] == parent
            ]
            owner = ".".join(str(part) for part in parent)
            return f"'result{'.' + owner if owner else ''}' lacks {', '.join(lacking)}"
        message = first.get("ctx", {}).get("error", first["msg"])
        shown = first["type"] not in ("missing", "value_error")
        found = f", found {jsontext.line(first['input'])[:80]}" if shown else ""
        return f"'result{'.' + where if where else ''}': {message}{found}"
    return None
