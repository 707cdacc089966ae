"""Everything that brings a file of an earlier release forward, in one place, so the paths that
read recordings and registries know only the current formats (as vcrpy keeps its migration in
one module): recordings without a recipe (`recordings`), registries of the earlier shape
(`registry`), cassettes of an older key format or decoder (`keys`), records of an earlier
decoder (`decoders`, with `vocabulary` to read how a prompt tokenizes).
`offline-scorer migrate cassette|results|registry` and `cassette upgrade` run them."""

from __future__ import annotations

from offline_scorer.assembly.migrate.keys import upgrade_cassette
from offline_scorer.assembly.migrate.recordings import (
    FORMER_DEFAULTS,
    Migrated,
    migrate_cassette,
    migrate_results,
    run_without_recipe,
)
from offline_scorer.assembly.migrate.registry import migrate_registry

__all__ = [
    "FORMER_DEFAULTS",
    "Migrated",
    "migrate_cassette",
    "migrate_registry",
    "migrate_results",
    "run_without_recipe",
    "upgrade_cassette",
]
