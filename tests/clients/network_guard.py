"""Keep a Python eval framework on loopback: every connection or name lookup that would leave
the machine is refused and listed (the drivers print the list; the tests require it empty).

Imported by the client drivers (tests/clients/*/), which run in the client's own venv.
"""

from __future__ import annotations

import socket
from typing import Any

ATTEMPTS: list[str] = []
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "", None}


def _is_local(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return host in _LOCAL_HOSTS or (isinstance(host, str) and host.startswith("127."))


def _target(address: Any) -> Any:
    return address[0] if isinstance(address, tuple) and address else address


def install() -> None:
    """Refuse (and record in ATTEMPTS) every non-loopback connect and name lookup."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(_target(address)):
            ATTEMPTS.append(f"connect {address!r}")
            raise OSError("network access is disabled here (loopback only)")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(_target(address)):
            ATTEMPTS.append(f"connect {address!r}")
            raise OSError("network access is disabled here (loopback only)")
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_local(host):
            ATTEMPTS.append(f"getaddrinfo {host!r}")
            raise socket.gaierror(f"network access is disabled here ({host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo
