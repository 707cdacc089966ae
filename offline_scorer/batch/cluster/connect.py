"""Joining a Ray cluster, or starting one on this machine, with one-line errors."""

from __future__ import annotations

import logging
from types import ModuleType

from offline_scorer.errors import ClusterError


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ClusterError(
            "--executor ray needs Ray: pip install 'offline-scorer[ray]' on the driver and on "
            "every node"
        ) from None
    return ray


def connect(ray: ModuleType, address: str | None) -> bool:
    """Connect this process; True when it started a local instance it must shut down.

    No address: a connection this process already has (a test's cluster, a notebook's), else
    a fresh local instance. `auto`, `host:port` or `ray://host:port`: that cluster.
    """
    if ray.is_initialized():
        return False
    options = {"logging_level": logging.ERROR, "log_to_driver": False}  # our own errors say enough
    try:
        if address is None:
            ray.init(address="local", include_dashboard=False, **options)
            return True
        ray.init(address=address, **options)
    except Exception as error:  # Ray raises ConnectionError, ValueError, RuntimeError...
        where = "a local Ray instance" if address is None else f"the Ray cluster at {address}"
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ClusterError(
            f"cannot start or reach {where}: {detail}; check `ray status`, or drop "
            "--ray-address to run on this machine"
        ) from None
    return False
