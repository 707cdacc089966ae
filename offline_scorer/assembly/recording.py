"""A run's recipe read back from what it recorded, for a replay, a reproduction or a resume.

A recording carries its recipe (`RecordedRecipe`: a cassette's header, a results file's first
line), so the user passes no flags to replay it: the model, backend, verdict threshold, scorer
kind and every option come from the file, and a flag the user does give wins over the file's.
A cassette made before recipes were written names its model only by the sha256 in each
exchange's key; the registry entry with that sha256 is then the model, said in a note, and
`offline-scorer migrate cassette` writes the recipe into a copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.backends import get_backend
from offline_scorer.batch.results import file_header
from offline_scorer.cassette.records import recorded_models
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import InputError, ModelError
from offline_scorer.models.registry import load_registry
from offline_scorer.recorded_recipe import RecipeError, RecordedRecipe

__all__ = [
    "RecordedRun",
    "cassette_recipe",
    "model_named_by_records",
    "registry_name",
    "results_recipe",
    "run_from",
    "same_model",
]


@dataclasses.dataclass(frozen=True)
class RecordedRun:
    """What the user gave beside a recording: the flags that override its recipe."""

    kind: str | None  # --scorer, when given
    options: Mapping[str, Any]  # the option flags given
    settings: JudgeSettings  # --model is None when not given, --backend likewise


def cassette_recipe(path: Path) -> RecordedRecipe | None:
    """The recipe in the cassette's header (None: no file, or a file made before recipes)."""
    if not path.is_file():
        return None
    with CassetteFile(path, create=False) as cassette:
        found = cassette.recipe
    if found is None:
        return None
    try:
        return RecordedRecipe.from_map(found)
    except RecipeError as error:
        raise InputError(f"{path}: the recipe in its header is not readable: {error}") from None


def results_recipe(path: Path) -> RecordedRecipe | None:
    """The recipe in a results file's header (None: no file, or a format 2 or 1 file)."""
    if not path.is_file():
        return None
    header = file_header(path)
    if header is None:
        return None
    try:
        return RecordedRecipe.from_map(header.recipe)
    except RecipeError as error:
        raise InputError(
            f"{path} line 1: the recipe in its header is not readable: {error}"
        ) from None


def registry_name(recipe: RecordedRecipe, where: Path) -> str:
    """The name this machine's registry knows the recorded model by: its recorded name when
    that entry pins the recorded sha256, else the entry that pins it; a model given by path
    stays its path. A ModelError says what to do when none matches."""
    registry = load_registry()
    entry = registry.models.get(recipe.model)
    if entry is not None and recipe.model_sha256 in (None, entry.sha256):
        return recipe.model
    pinning = registry.names_pinning(recipe.model_sha256) if recipe.model_sha256 else []
    if pinning:
        return pinning[0]
    if recipe.model.endswith(".gguf"):
        return recipe.model
    pinned = f" (sha256 {recipe.model_sha256[:12]})" if recipe.model_sha256 else ""
    raise ModelError(
        f"{where} was recorded with model {recipe.model!r}{pinned}, which this machine's "
        "model registry does not hold; register it (docs/models.md) or pass --model"
    )


def model_named_by_records(path: Path) -> str | None:
    """The registry name of the one model a cassette without a recipe holds records of
    (None: no file, no records, or records of several models: the user must choose)."""
    if not path.is_file():
        return None
    with CassetteFile(path, create=False) as cassette:
        digests = recorded_models(cassette)
    if len(digests) != 1:
        return None
    (digest,) = digests
    names = load_registry().names_pinning(digest)
    return names[0] if names else None


def same_model(recipe: RecordedRecipe, model: str | None, where: Path) -> bool:
    """Whether `model` (--model; None: not given) is the recorded model: by name, or by the
    sha256 its registry entry pins."""
    if model is None or model == recipe.model:
        return True
    try:
        if model == registry_name(recipe, where):
            return True
    except ModelError:  # the recorded model is not registered here: the user chose another
        return False
    registry = load_registry()
    if model not in registry.models and model != "default":
        return False
    pinned = registry.resolve(model).sha256
    return pinned is not None and pinned == recipe.model_sha256


def run_from(recipe: RecordedRecipe, given: RecordedRun, where: Path) -> RunSpec:
    """The run a recording's recipe stands for, with the user's flags over it."""
    settings = given.settings
    model = settings.model or registry_name(recipe, where)
    same_model = settings.model is None
    if given.kind is not None and given.kind != recipe.scorer:
        raise InputError(
            f"{where} was recorded by the {recipe.scorer} scorer, not {given.kind}; drop "
            "--scorer (the recording says which)"
        )
    backend = settings.backend or recipe.backend
    answered_under = None  # a replay answers under the recorded backend id, if not today's
    replaying = not settings.mode.runs_model and backend == recipe.backend
    if replaying and recipe.backend_id != get_backend(backend).backend_id:
        answered_under = recipe.backend_id
    settings = dataclasses.replace(
        settings,
        model=model,
        backend=backend,
        verdict_threshold=recipe.verdict_threshold if same_model else None,
        recorded_backend=settings.recorded_backend or answered_under,
    )
    options = {**recipe.options, **given.options}
    return RunSpec.of(recipe.scorer, options, settings)
