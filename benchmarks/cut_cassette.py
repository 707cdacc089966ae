"""Cut a cassette down to the exchanges one replayed command reads, without running a model.

    python -m benchmarks.cut_cassette BIG.oscas SMALL.oscas -- calibrate DATA.jsonl \\
        --record-mode replay --cassette BIG.oscas [...]

The command after `--` is an `offline-scorer` command line; it runs here, in this process, in
replay, so every answer comes from BIG. Each exchange it looks up is noted, and those exchanges
are then copied from BIG to SMALL (a new file) exactly as `offline-scorer cassette merge` copies
them, in BIG's order. SMALL replays that command (and any command over the same rows and
settings) as BIG did, at a fraction of its size: how a test gets a real recording of the few
rows it needs from a benchmark's large one (tests/data/README.md says which were cut so).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from offline_scorer.cassette.records import from_payload, to_payload
from offline_scorer.cassette.store.file import CassetteFile


@contextmanager
def noting_reads() -> Iterator[set[bytes]]:
    """Note the key of every exchange any open cassette is asked for, while in the block.

    Replay reads through `CassetteFile.get_exchange_fields` (and tools through
    `get_exchange`); wrapping both on the class sees every read whatever opened the file.
    """
    keys: set[bytes] = set()
    fields, whole = CassetteFile.get_exchange_fields, CassetteFile.get_exchange

    def get_exchange_fields(
        self: CassetteFile, key: bytes, names: tuple[str, ...]
    ) -> dict[str, object] | None:
        keys.add(key)
        return fields(self, key, names)

    def get_exchange(self: CassetteFile, key: bytes) -> dict[str, object] | None:
        keys.add(key)
        return whole(self, key)

    CassetteFile.get_exchange_fields = get_exchange_fields  # type: ignore[method-assign]
    CassetteFile.get_exchange = get_exchange  # type: ignore[method-assign]
    try:
        yield keys
    finally:
        CassetteFile.get_exchange_fields = fields  # type: ignore[method-assign]
        CassetteFile.get_exchange = whole  # type: ignore[method-assign]


def copy_exchanges(source: Path, target: Path, keys: set[bytes]) -> int:
    """Copy the exchanges of `source` whose key is in `keys` to the new file `target`, under
    the recipe `source` carries (so the cut replays as the whole one does, with no flags)."""
    copied = 0
    with CassetteFile(source, create=False) as big:
        recipe = big.recipe
    with (
        CassetteFile(source, create=False) as big,
        CassetteFile(target, create=True, recipe=recipe) as small,
    ):
        for key, payload in big.iter_latest_exchanges():
            if key not in keys:
                continue
            exchange = from_payload(big, key, payload)
            small.append_exchange(
                key,
                to_payload(
                    small, exchange.step, exchange.parts, exchange.completion, exchange.meta
                ),
            )
            copied += 1
    return copied


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    split = args.index("--") if "--" in args else len(args)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("source", type=Path, help="the large cassette the command replays")
    parser.add_argument("target", type=Path, help="the small cassette to write (must not exist)")
    paths = parser.parse_args(args[:split])
    command = args[split + 1 :]
    if "replay" not in command:
        parser.error("the command after -- must run with --record-mode replay")
    if paths.target.exists():
        parser.error(f"{paths.target} exists; the cut cassette is always a new file")

    from offline_scorer.cli import cli

    with noting_reads() as keys:
        status = cli.main(command, prog_name="offline-scorer", standalone_mode=False)
    if status not in (0, None):
        print(f"the command failed ({status}); nothing written", file=sys.stderr)
        return 1
    copied = copy_exchanges(paths.source, paths.target, keys)
    size = paths.target.stat().st_size
    print(f"wrote {paths.target}: {copied} of the exchanges read, {size:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
