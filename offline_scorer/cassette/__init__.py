"""Cassettes: append-only recordings of model exchanges, replayable byte for byte."""
