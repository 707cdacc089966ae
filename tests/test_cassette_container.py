"""The cassette container: round trips, determinism, damage, fuzzing, crashes and concurrency.

Every damaged input must end in a CassetteError subclass (never another exception, never a hang),
and repair must always leave a file that opens and decodes cleanly.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offline_scorer.cassette.store import container
from offline_scorer.cassette.store.container import (
    MAGIC,
    MAX_DEPTH,
    OVERHEAD,
    CassetteCorruptError,
    CassetteError,
    CassetteFile,
    CassetteFormatError,
    blob_key,
    encode_header,
    repair,
    verify,
)
from offline_scorer.cassette.store.frames import frame

ROOT = Path(__file__).resolve().parents[1]
WRITER = "tests"


def key(name: object) -> bytes:
    return hashlib.sha256(str(name).encode()).digest()


def make(path: Path, exchanges: int = 6, *, blobs: int = 2) -> list[tuple[bytes, dict]]:
    """A small valid cassette: some blobs, then exchanges referencing them."""
    recorded = []
    with CassetteFile.open(path, create=True, writer=WRITER) as cas:
        refs = [cas.append_blob(f"shared prompt {j} " * 20).hex() for j in range(blobs)]
        for i in range(exchanges):
            payload = {
                "step": "preprocess",
                "request": {"prompt": refs[i % blobs], "sampling": {"temperature": 0.0}},
                "response": {"text": f"answer {i} ✓"},
                "i": i,
            }
            cas.append_exchange(key(i), payload)
            recorded.append((key(i), payload))
    return recorded


def frame_offsets(data: bytes) -> list[int]:
    """Start offsets of the frames of an intact file, header first."""
    offsets, pos = [], len(MAGIC)
    while pos < len(data):
        offsets.append(pos)
        (length,) = struct.unpack_from(">I", data, pos + 5)
        pos += OVERHEAD + length
    assert pos == len(data)
    return offsets


def everything(path: Path) -> tuple[list[tuple[bytes, dict]], int]:
    """Open and decode every exchange; also return the handle's blob count."""
    with CassetteFile.open(path, create=False) as cas:
        return list(cas.iter_exchanges()), cas.blob_count


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


# ---------------------------------------------------------------------------------------------
# Round trips and determinism


def test_round_trip(tmp_path):
    path = tmp_path / "c.cassette"
    payload = {
        "none": None,
        "bools": [True, False],
        "ints": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1],
        "floats": [0.1, -0.0, 1e308, float("inf")],
        "text": "héllo\x00wörld ✓ \U0001f600",
        "empty": {"list": [], "map": {}, "str": ""},
        "nested": {"a": [{"b": [1, 2, {"c": "d"}]}]},
    }
    with CassetteFile.open(path, create=True, writer=WRITER) as cas:
        assert (cas.format_version, cas.writer, cas.exchange_count) == (1, WRITER, 0)
        ref = cas.append_blob("a long prompt " * 100)
        cas.append_exchange(key(1), payload)
        cas.append_exchange(key(2), {"ref": ref.hex()})
        assert cas.get_exchange(key(1)) == payload
        size = cas.size_bytes
    assert size == path.stat().st_size
    with CassetteFile(path, create=False) as cas:
        assert cas.path == path
        assert cas.exchange_count == 2 and cas.blob_count == 1
        assert cas.get_exchange(key(1)) == payload
        assert cas.get_exchange(key(3)) is None
        ref_hex = cas.get_exchange(key(2))["ref"]
        assert cas.blob_text(ref_hex) == cas.get_blob(ref) == "a long prompt " * 100
        assert cas.has_blob(ref) and not cas.has_blob(key("nope"))
        with pytest.raises(KeyError):
            cas.get_blob(key("nope"))
        with pytest.raises(KeyError):
            cas.blob_text("not hex")
        assert [k for k, _ in cas.iter_exchanges()] == [key(1), key(2)]
    report = verify(path)
    assert report.ok and (report.records, report.exchanges, report.blobs) == (3, 2, 1)


def test_later_exchange_supersedes_but_both_stay(tmp_path):
    path = tmp_path / "c.cassette"
    with CassetteFile.open(path, create=True) as cas:
        cas.append_exchange(key(1), {"take": 1})
        cas.append_exchange(key(2), {"take": 1})
        cas.append_exchange(key(1), {"take": 2})
        assert cas.get_exchange(key(1)) == {"take": 2}
        assert cas.exchange_count == 2
    with CassetteFile.open(path, create=False) as cas:
        assert cas.get_exchange(key(1)) == {"take": 2}
        assert list(cas.iter_exchanges()) == [
            (key(1), {"take": 1}),
            (key(2), {"take": 1}),
            (key(1), {"take": 2}),
        ]
    assert verify(path).exchange_records == 3


def test_blob_written_once(tmp_path):
    path = tmp_path / "c.cassette"
    text = "the same prompt " * 50
    with CassetteFile.open(path, create=True) as one, CassetteFile.open(path, create=False) as two:
        assert one.append_blob(text) == blob_key(text)
        assert one.append_blob(text) == blob_key(text)
        size = path.stat().st_size
        assert two.append_blob(text) == blob_key(text)  # learns of it by catching up
        assert path.stat().st_size == size
    with CassetteFile.open(path, create=False) as cas:
        cas.append_blob(text)
    report = verify(path)
    assert (report.blob_records, report.blobs) == (1, 1)


def test_same_appends_give_identical_bytes(tmp_path):
    def record(path: Path, reverse: bool) -> bytes:
        with CassetteFile.open(path, create=True, writer=WRITER) as cas:
            for i in range(20):
                items = [("z", i), ("a", [0.5, {"y": 1, "b": 2}]), ("m", "text"), ("f", 1.0)]
                cas.append_blob(f"blob {i % 3}")
                cas.append_exchange(key(i), dict(reversed(items) if reverse else items))
        return path.read_bytes()

    first = record(tmp_path / "a.cassette", reverse=False)
    assert first == record(tmp_path / "b.cassette", reverse=True)
    # floats are always float64 (0xcb), even when float32 would hold them exactly
    assert b"\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00" in first


def test_header_bytes_are_the_documented_ones():
    payload = msgpack.packb({"format": 1, "writer": "w"})
    body = b"H" + struct.pack(">I", len(payload)) + bytes(32) + payload
    expected = b"OSCAS\x00\r\n" + b"\xabREC" + body + struct.pack(">I", zlib.crc32(body))
    assert encode_header("w") == expected


def test_documented_example_bytes():
    """docs/cassette-format.md shows a whole file as a hex dump; it must be what we write."""
    doc = (ROOT / "docs" / "cassette-format.md").read_text(encoding="utf-8")
    block = doc.split("<!-- example-hexdump")[1].split("```")[1]
    dumped = b"".join(
        bytes.fromhex(line[10:].split("|")[0]) for line in block.splitlines() if line.strip()
    )
    expected = (
        encode_header("example")
        + container.encode_blob("hi")
        + container.encode_exchange(
            hashlib.sha256(b"example").digest(), {"step": "reason", "response": {"text": "ok"}}
        )
    )
    assert dumped == expected


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"t": (1, 2)}, TypeError),
        ({"b": b"bytes"}, TypeError),
        ({"s": {1, 2}}, TypeError),
        ({1: "int key"}, TypeError),
        ({"big": 2**64}, ValueError),
        ({"small": -(2**63) - 1}, ValueError),
        ({"bad": "\ud800"}, ValueError),
        ([1, 2], TypeError),
    ],
)
def test_append_rejects_values_outside_the_type_rules(tmp_path, payload, error):
    path = tmp_path / "c.cassette"
    with CassetteFile.open(path, create=True) as cas:
        size = cas.size_bytes
        with pytest.raises(error):
            cas.append_exchange(key(1), payload)
        with pytest.raises(ValueError):
            cas.append_exchange(b"short", {})
        assert path.stat().st_size == size


def test_depth_limit(tmp_path):
    def nested(depth: int) -> dict:
        value: dict = {}
        for _ in range(depth - 1):
            value = {"n": value}
        return value

    with CassetteFile.open(tmp_path / "c.cassette", create=True) as cas:
        cas.append_exchange(key(1), nested(MAX_DEPTH))
        assert cas.get_exchange(key(1)) == nested(MAX_DEPTH)
        with pytest.raises(ValueError, match="deeper"):
            cas.append_exchange(key(2), nested(MAX_DEPTH + 1))


# ---------------------------------------------------------------------------------------------
# Damage: truncation, corruption in the middle, strict decoding


def test_truncated_tail_at_every_offset(tmp_path):
    path = tmp_path / "c.cassette"
    recorded = make(path)
    data = path.read_bytes()
    offsets = frame_offsets(data)
    last = offsets[-1]
    intact = len(offsets) - 2  # records before the last one (header excluded)
    path.write_bytes(data[:last])
    assert len(everything(path)[0]) == len(recorded) - 1
    for cut in range(last + 1, len(data)):
        path.write_bytes(data[:cut])
        with pytest.raises(CassetteCorruptError) as caught:
            CassetteFile.open(path, create=False)
        message = str(caught.value)
        assert f"at byte {last} (record {intact})" in message
        assert f"to keep the {intact} intact records" in message
        assert "\n" not in message and str(path) in message
        assert caught.value.offset == last
        report = repair(path)
        assert (report.kept_records, report.dropped_bytes) == (intact, cut - last)
        assert Path(f"{path}.bak").read_bytes() == data[:cut]
        assert path.read_bytes() == data[:last]
        exchanges, _ = everything(path)
        assert exchanges == recorded[:-1]


def test_truncation_inside_magic_or_header(tmp_path):
    path = tmp_path / "c.cassette"
    make(path, exchanges=1)
    data = path.read_bytes()
    header_end = frame_offsets(data)[1]
    for cut in range(header_end):
        path.write_bytes(data[:cut])
        expected = CassetteFormatError if cut < len(MAGIC) else CassetteCorruptError
        with pytest.raises(expected):
            CassetteFile.open(path, create=False)


def test_corruption_in_the_middle_keeps_frames_before_and_after(tmp_path):
    path = tmp_path / "c.cassette"
    recorded = make(path, exchanges=5, blobs=1)
    data = path.read_bytes()
    offsets = frame_offsets(data)
    middle, after = offsets[4], offsets[5]  # header, blob, x0, x1, [x2], x3, x4
    survivors = recorded[:2] + recorded[3:]
    for at in range(middle, after):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        path.write_bytes(bytes(damaged))
        with pytest.raises(CassetteCorruptError, match=f"at byte {middle} \\(record 3\\)"):
            CassetteFile.open(path, create=False)
        report = repair(path)
        assert report.kept_records == 5 and report.dropped_ranges == 1
        assert everything(path) == (survivors, 1)
        assert verify(path).ok


def test_garbage_between_frames_and_damaged_header(tmp_path):
    path = tmp_path / "c.cassette"
    recorded = make(path, exchanges=4, blobs=1)
    data = path.read_bytes()
    offsets = frame_offsets(data)
    # garbage that even contains a fake marker with a huge length
    junk = b"junk\xabREC" + b"X" + struct.pack(">I", 2**31) + b"more junk"
    path.write_bytes(data[: offsets[3]] + junk + data[offsets[3] :])
    with pytest.raises(CassetteCorruptError, match=f"at byte {offsets[3]} "):
        CassetteFile.open(path, create=False)
    assert repair(path).dropped_bytes == len(junk)
    assert everything(path) == (recorded, 1)
    # a damaged header is replaced by a fresh one; the records survive
    damaged = bytearray(path.read_bytes())
    damaged[len(MAGIC) + 20] ^= 0x01
    path.write_bytes(bytes(damaged))
    with pytest.raises(CassetteCorruptError, match=r"\(header\)"):
        CassetteFile.open(path, create=False)
    assert repair(path).kept_records == 5
    assert everything(path) == (recorded, 1)


def test_lost_header_keeps_the_records(tmp_path):
    path = tmp_path / "c.cassette"
    recorded = make(path, exchanges=3, blobs=1)
    data = path.read_bytes()
    path.write_bytes(MAGIC + data[frame_offsets(data)[1] :])
    with pytest.raises(CassetteCorruptError, match=r"byte 8 \(header\).*keep the 4 intact"):
        CassetteFile.open(path, create=False)
    assert repair(path).kept_records == 4
    assert everything(path) == (recorded, 1)


def test_errors_survive_pickling(tmp_path):
    path = tmp_path / "c.cassette"
    make(path, exchanges=1)
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(CassetteCorruptError) as caught:
        CassetteFile.open(path, create=False)
    clone = pickle.loads(pickle.dumps(caught.value))
    assert (str(clone), clone.offset, clone.intact_records) == (
        str(caught.value),
        caught.value.offset,
        2,  # the two blobs before the torn exchange
    )
    fmt = CassetteFormatError(path, "not a cassette (the file is empty)")
    assert str(pickle.loads(pickle.dumps(fmt))) == str(fmt)


def _bad_payloads() -> dict[str, bytes]:
    nested: dict[str, Any] = {}
    for _ in range(MAX_DEPTH):
        nested = {"n": nested}
    return {
        "bin": msgpack.packb({"b": b"raw"}, use_bin_type=True),
        "ext": msgpack.packb({"e": msgpack.ExtType(5, b"x")}),
        "timestamp": msgpack.packb({"t": msgpack.Timestamp(1, 0)}),
        "not a map": msgpack.packb([1, 2]),
        "too deep": msgpack.packb(nested),
        "int key": msgpack.packb({1: 2}),
        "bytes key": msgpack.packb({b"k": 2}, use_bin_type=True),
        "duplicate key": b"\x82\xa1a\x01\xa1a\x02",
        "trailing bytes": msgpack.packb({"a": 1}) + b"\x00",
        "truncated": msgpack.packb({"a": "text"})[:-2],
        "not utf-8": b"\x81\xa1a\xa2\xff\xfe",
        "empty": b"",
        "huge array claim": b"\x81\xa1a\xdd\xff\xff\xff\xff",
    }


@pytest.mark.parametrize("case", sorted(_bad_payloads()))
def test_strict_decoding_of_checksummed_frames(tmp_path, case):
    path = tmp_path / "c.cassette"
    bad = frame(b"X", key("bad"), _bad_payloads()[case])
    path.write_bytes(
        encode_header(WRITER)
        + container.encode_exchange(key(1), {"ok": 1})
        + bad
        + container.encode_exchange(key(2), {"ok": 2})
    )
    with CassetteFile.open(path, create=False) as cas:  # open does not decode
        assert cas.exchange_count == 3
        assert cas.get_exchange(key(2)) == {"ok": 2}
        with pytest.raises(CassetteCorruptError, match=r"\(record 1\).*keep the 2 intact records"):
            cas.get_exchange(key("bad"))
        with pytest.raises(CassetteCorruptError):
            list(cas.iter_exchanges())
    report = verify(path)
    assert not report.ok and report.records == 2 and "(record 1)" in report.problem
    assert repair(path).kept_records == 2
    assert everything(path) == ([(key(1), {"ok": 1}), (key(2), {"ok": 2})], 0)


def test_blob_whose_text_does_not_match_its_key(tmp_path):
    path = tmp_path / "c.cassette"
    forged = frame(b"B", blob_key("original"), msgpack.packb("forged"))
    path.write_bytes(encode_header(WRITER) + forged)
    with CassetteFile.open(path, create=False) as cas, pytest.raises(CassetteCorruptError):
        cas.get_blob(blob_key("original"))
    assert "sha256" in verify(path).problem


def test_not_a_cassette_and_future_versions(tmp_path):
    path = tmp_path / "c.cassette"
    with pytest.raises(FileNotFoundError):
        CassetteFile.open(path, create=False)
    path.write_bytes(b"")
    with pytest.raises(CassetteFormatError, match=r"not a cassette.*empty"):
        CassetteFile.open(path, create=True)
    path.write_text('{"this": "is json"}\n')
    with pytest.raises(CassetteFormatError, match="not a cassette"):
        CassetteFile.open(path, create=False)
    with pytest.raises(CassetteFormatError):
        verify(path)
    with pytest.raises(CassetteFormatError):
        repair(path)
    payload = msgpack.packb({"format": 2, "writer": "offline-scorer 9"})
    path.write_bytes(MAGIC + frame(b"H", bytes(32), payload) + b"anything at all")
    with pytest.raises(
        CassetteFormatError, match="unsupported cassette format version 2"
    ) as caught:
        CassetteFile.open(path, create=False)
    assert "\n" not in str(caught.value)
    with pytest.raises(CassetteFormatError):
        repair(path)
    assert not Path(f"{path}.bak").exists()


# ---------------------------------------------------------------------------------------------
# Appending next to other handles


def test_refuses_to_append_after_a_damaged_tail(tmp_path):
    path = tmp_path / "c.cassette"
    make(path, exchanges=2)
    with CassetteFile.open(path, create=False) as cas:
        with path.open("ab") as raw:
            raw.write(b"\xabREC" + b"X" + b"\x00\x00\x00\x10" + b"torn")
        size = path.stat().st_size
        with pytest.raises(CassetteCorruptError, match="truncated frame"):
            cas.append_exchange(key("new"), {"a": 1})
        with pytest.raises(CassetteCorruptError):
            cas.append_blob("new blob")
        assert path.stat().st_size == size
    with pytest.raises(CassetteCorruptError):
        CassetteFile.open(path, create=True)


def test_refuses_to_append_after_the_file_shrank_or_was_replaced(tmp_path):
    path = tmp_path / "c.cassette"
    make(path, exchanges=3)
    data = path.read_bytes()
    with CassetteFile.open(path, create=False) as cas:
        os.truncate(path, frame_offsets(data)[-1])
        with pytest.raises(CassetteCorruptError, match="shrank"):
            cas.append_exchange(key("new"), {})
    path.write_bytes(data + b"torn tail")
    with pytest.raises(CassetteCorruptError):
        CassetteFile.open(path, create=False)
    path.write_bytes(data)
    with CassetteFile.open(path, create=False) as cas:
        with path.open("ab") as raw:
            raw.write(b"torn")
        repair(path)  # replaces the file under the open handle
        with pytest.raises(CassetteError, match="replaced"):
            cas.append_exchange(key("new"), {})
        assert cas.get_exchange(key(0)) is not None  # still reads what it indexed


def test_handles_catch_up_with_each_other(tmp_path):
    path = tmp_path / "c.cassette"
    with CassetteFile.open(path, create=True) as one, CassetteFile.open(path, create=True) as two:
        one.append_exchange(key(1), {"from": "one"})
        assert two.get_exchange(key(1)) is None
        assert two.refresh() == 1
        assert two.get_exchange(key(1)) == {"from": "one"}
        one.append_exchange(key(2), {"from": "one"})
        two.append_exchange(key(2), {"from": "two"})  # catches up first, so it wins
        assert two.get_exchange(key(2)) == {"from": "two"}
        assert one.refresh() == 1 and one.get_exchange(key(2)) == {"from": "two"}
    assert verify(path).ok


def test_concurrent_creation_and_appends_from_two_processes(tmp_path):
    path = tmp_path / "c.cassette"
    script = textwrap.dedent(
        """
        import hashlib, sys, time
        from offline_scorer.cassette.store.container import CassetteFile
        path, tag, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
        time.sleep(max(0.0, start - time.time()))
        with CassetteFile.open(path, create=True) as cas:
            for i in range(200):
                shared = cas.append_blob(f"shared prompt {i % 10} " * 30)
                own = cas.append_blob(f"prompt of {tag} {i % 3}")
                payload = {"tag": tag, "i": i, "blobs": [shared.hex(), own.hex()]}
                cas.append_exchange(hashlib.sha256(f"{tag}-{i}".encode()).digest(), payload)
        """
    )
    start = time.time() + 1.0
    children = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), tag, str(start)], env=subprocess_env()
        )
        for tag in ("a", "b")
    ]
    for child in children:
        assert child.wait(timeout=120) == 0
    report = verify(path)
    assert report.ok
    assert (report.exchange_records, report.exchanges) == (400, 400)
    assert (report.blob_records, report.blobs) == (16, 16)
    exchanges, blobs = everything(path)
    assert sorted(k for k, _ in exchanges) == sorted(
        key(f"{tag}-{i}") for tag in ("a", "b") for i in range(200)
    )
    assert blobs == 16
    assert frame_offsets(path.read_bytes())[0] == len(MAGIC)  # exactly one header


def test_kill_9_while_recording_loses_nothing_reported(tmp_path):
    path = tmp_path / "c.cassette"
    script = textwrap.dedent(
        """
        import hashlib, sys
        from offline_scorer.cassette.store.container import CassetteFile
        with CassetteFile.open(sys.argv[1], create=True) as cas:
            i = 0
            while True:
                ref = cas.append_blob(f"prompt {i % 4} " * 200)
                payload = {"i": i, "ref": ref.hex(), "text": "response " * 2000}
                cas.append_exchange(hashlib.sha256(str(i).encode()).digest(), payload)
                print(i, flush=True)
                i += 1
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    assert child.stdout is not None
    deadline = time.monotonic() + 60
    done = -1
    while done < 40 and time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line, "the recording child died on its own"
        done = int(line)
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()
    child.wait(timeout=10)
    done = max([done, *map(int, rest.split())])
    try:
        exchanges, _ = everything(path)
    except CassetteCorruptError:
        repair(path)
        exchanges, _ = everything(path)
    by_key = dict(exchanges)
    for i in range(done + 1):
        assert by_key[key(i)]["i"] == i


# ---------------------------------------------------------------------------------------------
# Fuzzing: whatever the bytes, only CassetteError or success, and repair always yields a valid file


@cache
def _valid_cassette() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "base.cassette"
        make(path, exchanges=4, blobs=2)
        with CassetteFile.open(path, create=False) as cas:
            cas.append_exchange(key(0), {"re": "recorded", "n": [1.5, None, {"deep": [True]}]})
        return path.read_bytes()


def _exercise(path: Path) -> None:
    try:
        with CassetteFile.open(path, create=False) as cas:
            for exchange_key, _ in cas.iter_exchanges():
                cas.get_exchange(exchange_key)
            for j in range(2):
                text = f"shared prompt {j} " * 20
                if cas.has_blob(blob_key(text)):
                    assert cas.get_blob(blob_key(text)) == text
    except CassetteError as error:
        assert "\n" not in str(error)
    try:
        report = verify(path)
    except CassetteFormatError:
        return
    repaired = repair(path)
    assert repaired.kept_records == report.records
    assert verify(path).ok
    exchanges, _ = everything(path)
    assert len(exchanges) == report.exchange_records


_FUZZ = settings(
    max_examples=150,
    deadline=3000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _run(data: bytes) -> None:
    tmp = tempfile.mkdtemp()
    try:
        path = Path(tmp) / "fuzzed.cassette"
        path.write_bytes(data)
        _exercise(path)
    finally:
        shutil.rmtree(tmp)


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 200)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.none()),
)


@_FUZZ
@given(st.lists(mutation, min_size=1, max_size=6))
def test_fuzzed_cassettes(mutations):
    data = bytearray(_valid_cassette())
    for op, where, arg in mutations:
        at = where % (len(data) + 1)
        if op == "flip" and at < len(data):
            data[at] ^= arg
        elif op == "insert":
            data[at:at] = arg
        elif op == "delete":
            del data[at : at + arg]
        elif op == "truncate":
            del data[at:]
    _run(bytes(data))


@_FUZZ
@given(st.binary(max_size=4096), st.booleans())
def test_random_bytes(data, with_magic):
    _run(MAGIC + data if with_magic else data)


msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=20)
    | st.binary(max_size=20)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=8))
    | st.builds(msgpack.Timestamp, st.integers(0, 2**34), st.integers(0, 999_999_999)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=5) | st.integers(-9, 9) | st.binary(max_size=5), inner, max_size=4
        )
    ),
    max_leaves=30,
)


@_FUZZ
@given(
    st.lists(
        st.tuples(
            st.sampled_from(b"XBH"),
            st.binary(min_size=32, max_size=32),
            st.one_of(
                msgpack_values.map(lambda value: msgpack.packb(value, use_bin_type=True)),
                st.binary(max_size=200),
            ),
        ),
        max_size=5,
    )
)
def test_checksummed_frames_with_arbitrary_payloads(frames):
    """Valid framing around arbitrary payloads: exercises strict decoding, not the CRC."""
    body = b"".join(frame(bytes([kind]), k, payload) for kind, k, payload in frames)
    _run(_valid_cassette() + body)


def test_flood_of_fake_markers_stays_bounded(tmp_path):
    """Each fake marker's claimed frame fits the file: 2 MB of checksum each, 100 GB in all."""
    fake = b"\xabREC" + b"X" + struct.pack(">I", 2_000_000) + bytes(32)
    path = tmp_path / "c.cassette"
    path.write_bytes(encode_header(WRITER) + fake * 100_000)
    started = time.monotonic()
    with pytest.raises(CassetteCorruptError):
        CassetteFile.open(path, create=False)
    assert repair(path).kept_records == 0
    assert time.monotonic() - started < 5


def test_replay_reads_one_field_as_strictly_as_the_whole_map():
    """`decode_exchange_fields` (replay's read) agrees with `decode` on every recorded exchange."""
    from offline_scorer.cassette.store.codec import decode, decode_exchange_fields

    with CassetteFile.open(ROOT / "fixtures/cassettes/fixtures.oscas", create=False) as cas:
        for exchange_key, whole in cas.iter_exchanges():
            got = cas.get_exchange_fields(exchange_key, ("response", "meta", "absent"))
            assert got == {"response": whole["response"], "meta": whole["meta"]}
            payload = msgpack.packb(whole, use_bin_type=True)
            assert decode_exchange_fields(payload, ("step",)) == {"step": decode(payload)["step"]}
        assert cas.get_exchange_fields(key(99), ("response",)) is None


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (msgpack.packb([1, 2]), "exchange payload is not a map"),
        (msgpack.packb({"a": 1}) + b"\x01", "extra data after the map"),
        (b"\x82\xa1a\x01\xa1a\x02", "duplicate map key"),
        (b"\x81\xc4\x01a\x01", "map key of type bytes"),
        (msgpack.packb({"response": {"t": b"x"}}, use_bin_type=True), "payload['response']"),
        (b"\x81", "not valid msgpack"),
    ],
)
def test_replay_field_read_turns_every_defect_into_damage(payload, message):
    from offline_scorer.cassette.store.codec import decode_exchange_fields
    from offline_scorer.cassette.store.errors import Damage

    with pytest.raises(Damage) as caught:
        decode_exchange_fields(payload, ("response",))
    assert message in caught.value.what


def test_a_response_breaking_the_type_rules_is_corruption_on_replay(tmp_path):
    """A well-framed record (valid CRC) whose response holds bytes: replay names the damage."""
    from offline_scorer.cassette.store.frames import KIND_EXCHANGE, frame

    path = tmp_path / "c.cassette"
    with CassetteFile.open(path, create=True):
        pass
    bad = msgpack.packb({"response": {"text": b"x"}, "step": "s"}, use_bin_type=True)
    with path.open("ab") as out:
        out.write(frame(KIND_EXCHANGE, key(1), bad))
    with (
        CassetteFile.open(path, create=False) as cas,
        pytest.raises(CassetteCorruptError, match="type rules"),
    ):
        cas.get_exchange_fields(key(1), ("response",))
