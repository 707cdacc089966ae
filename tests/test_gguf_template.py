"""A model given by path replays on its own fingerprint: the chat template its GGUF metadata
holds is read without llama-cpp-python, and gives the digest the registry pins for that file."""

from __future__ import annotations

import struct

import pytest

from offline_scorer.assembly.open import file_identity, resolve
from offline_scorer.backends.gguf import gguf_chat_template
from offline_scorer.models.registry import load_registry, template_sha256
from tests.conftest import MECHANICS_MODEL


def _installed():
    spec = load_registry().resolve(MECHANICS_MODEL)
    try:
        return spec, spec.locate()
    except Exception:  # the model's package is not installed here
        pytest.skip(f"{MECHANICS_MODEL} is not installed")


def test_the_template_read_from_the_file_is_the_one_the_registry_pins():
    spec, path = _installed()
    template = gguf_chat_template(path)
    assert template is not None and template_sha256(template) == spec.chat_template_sha256


def test_a_bare_path_has_the_identity_a_live_judge_of_it_would_key_with():
    spec, path = _installed()
    bare, backend = resolve(str(path), None)
    identity = file_identity(bare, backend, backend.backend_id)
    assert identity is not None
    assert (identity.model_sha256, identity.chat_template_sha256) == (
        spec.sha256,
        spec.chat_template_sha256,
    )
    assert identity.verdict_threshold == bare.verdict_threshold  # the bare entry's, not the pins'


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"GGUF not the recorded model",
        b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 10**12),
        b"GGUF" + struct.pack("<IQQ", 3, 0, 0),
    ],
)
def test_a_file_that_is_not_a_gguf_with_a_template_has_none(tmp_path, data):
    path = tmp_path / "x.gguf"
    path.write_bytes(data)
    assert gguf_chat_template(path) is None
    assert gguf_chat_template(tmp_path / "absent.gguf") is None
