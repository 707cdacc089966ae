"""Writing a file so that a crash leaves either the old bytes or the new ones, never a mix."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8): a temp file beside it, fsync, rename.

    A plain open (not mkstemp) so the file gets the usual umask permissions, as a file the user
    edits by hand (a registry) or shares (a report) should.
    """
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
