"""Scorer kinds for offline-scorer's tests, registered like a third-party plugin's."""
