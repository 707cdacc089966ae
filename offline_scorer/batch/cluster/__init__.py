"""`eval` across a Ray cluster: long-lived scoring actors, one driver that owns every file.

Nothing here imports Ray until an executor starts, so the core install never needs it.
"""

from offline_scorer.batch.cluster.executor import RayExecutor

__all__ = ["RayExecutor"]
