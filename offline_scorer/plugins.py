"""Loading one entry point of a plugin group, the same way for backends and scorer kinds.

A plugin that fails to import (a stale install, a missing dependency) must not take down every
command, including those that never use it, and must never reach the user as a traceback: the
loader returns the object or one line naming the plugin, the group, what went wrong and what
to do.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

__all__ = ["load_plugin"]


def load_plugin(point: EntryPoint, what: str) -> tuple[object | None, str | None]:
    """(the loaded object, None), or (None, the one-line problem); `what` names the kind of
    plugin ("backend", "scorer kind") in the message."""
    try:
        return point.load(), None
    except Exception as error:  # any import failure of third-party code
        reason = " ".join(str(error).split()) or type(error).__name__
        return None, (
            f"{what} {point.name!r} ({point.value}, entry point of {point.group}) does not load "
            f"({type(error).__name__}: {reason[:160]}); reinstall or uninstall the package that "
            "declares it"
        )
