"""Every environment variable and default path offline-scorer reads, in one place.

Other modules ask here, so a user can find in one file what the environment changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir, user_config_dir, user_data_dir

from offline_scorer.errors import ModelError

APP = "offline-scorer"

CASSETTE_ENV = "OFFLINE_SCORER_CASSETTE"  # default cassette path
RECORD_MODE_ENV = "OFFLINE_SCORER_RECORD_MODE"  # forces a record mode on every command (CI)
MODELS_ENV = "OFFLINE_SCORER_MODELS"  # the user's model registry file
MODEL_ENV = "OFFLINE_SCORER_MODEL"  # the model "default" means, over the registry's default
CACHE_DIR_ENV = "OFFLINE_SCORER_CACHE_DIR"  # where model digests and downloaded wheels go
DATA_DIR_ENV = "OFFLINE_SCORER_DATA_DIR"  # where `models install` assembles models
THREADS_ENV = "OFFLINE_SCORER_THREADS"  # CPU threads for live decoding
RAY_ADDRESS_ENV = "OFFLINE_SCORER_RAY_ADDRESS"  # the cluster `eval --executor ray` joins

ENVIRONMENT = (
    CASSETTE_ENV,
    RECORD_MODE_ENV,
    MODELS_ENV,
    MODEL_ENV,
    CACHE_DIR_ENV,
    DATA_DIR_ENV,
    THREADS_ENV,
)


def default_cassette() -> Path:
    env = os.environ.get(CASSETTE_ENV)
    return Path(env) if env else Path(user_data_dir(APP)) / "recordings.oscas"


def forced_record_mode() -> str | None:
    """The raw value of the record-mode override, if set (validated by `cassette.modes`)."""
    return os.environ.get(RECORD_MODE_ENV) or None


def user_registry_path() -> Path:
    env = os.environ.get(MODELS_ENV)
    return Path(env) if env else Path(user_config_dir(APP)) / "models.toml"


def user_registry_forced() -> bool:
    """True when the user named a registry file, which must then exist."""
    return bool(os.environ.get(MODELS_ENV))


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_DIR_ENV) or user_cache_dir(APP))


def data_dir() -> Path:
    """The user data dir, where installed models live: unlike the cache, deleting it loses
    something (a model assembled from its parts, costly to download again)."""
    return Path(os.environ.get(DATA_DIR_ENV) or user_data_dir(APP))


def default_threads() -> int:
    """$OFFLINE_SCORER_THREADS, else every core this process may run on."""
    env = os.environ.get(THREADS_ENV)
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise ModelError(f"{THREADS_ENV} must be a whole number >= 1, got {env!r}")
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_model_override() -> str | None:
    """$OFFLINE_SCORER_MODEL: a registry name every command's default judge means (a CI job or
    a test suite pins its judge without repeating --model)."""
    return os.environ.get(MODEL_ENV) or None
