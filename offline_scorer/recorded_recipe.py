"""`RecordedRecipe`: the run a recording was made by, written into the file it made.

A cassette's header and a results file's first line carry it, so that replaying, reproducing
or resuming a recording needs no flags and a default can move without stranding the files made
under the old one: the file says which model (by registry name and by sha256), which backend
and verdict threshold, which scorer kind with every option resolved (defaults included, so a
later default does not reinterpret it) and the revisions of what the scorer sends and shows.

Defined once here, at the bottom of the house, because the storage (cassette headers), the
batch layer (results headers) and the assembly (which applies it) all read it; it is a plain
pydantic model and imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["RecipeError", "RecordedRecipe"]


class RecipeError(ValueError):
    """A recipe map that is not a recipe; its message says what is wrong in one phrase."""


class RecordedRecipe(BaseModel):
    """What a recording was made with: everything a replay needs to ask the same requests."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    scorer: str
    """The scorer kind."""
    options: dict[str, Any]
    """Every option of the kind the user can set, defaults resolved (JSON values)."""
    model: str
    """The judge's registry name (or the path of a GGUF given by path), as it was resolved."""
    model_sha256: str | None
    """The model file's sha256 as the registry pinned it (None: unpinned; the cassette's
    exchanges name the file's own digest)."""
    backend: str
    """The backend's name (llama_cpp, outlines)."""
    backend_id: str
    """The backend's id: its decoder and schema compiler revision, as keys hold it."""
    verdict_threshold: float | None
    """The judge's verdict threshold for the kind (None: a backend without probabilities)."""
    revisions: dict[str, int]
    """Revisions of what the scorer sends and shows (`formats`), by name."""

    def to_map(self) -> dict[str, Any]:
        """The recipe as a plain map, keys in field order (what files hold)."""
        return self.model_dump(mode="python")

    @classmethod
    def from_map(cls, value: Mapping[str, Any] | Any) -> RecordedRecipe:
        """A recipe from a file's map; RecipeError names the first thing wrong with it."""
        if not isinstance(value, Mapping):
            raise RecipeError("the recipe is not a map")
        try:
            return cls.model_validate(dict(value))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"]) or "recipe"
            raise RecipeError(f"recipe field {where!r}: {first['msg']}") from None

    def describe(self) -> str:
        """One phrase for messages: the model and the scorer, as a user would pass them."""
        return f"model {self.model!r} ({self.backend}), {self.scorer} scorer"

    def option_flags(self) -> list[str]:
        """The recipe's options as command-line flags (`--max-questions 10`, `--one-by-one
        false`; unset ones left out), sorted: how a script runs a live recording again under
        the recipe of the one it stands for, whatever today's defaults are."""
        flags: list[str] = []
        for name, value in sorted(self.options.items()):
            if value is None:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags += [f"--{name.replace('_', '-')}", text]
        return flags
