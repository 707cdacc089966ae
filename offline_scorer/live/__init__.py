"""Deprecated home of the llama.cpp judge; kept for one release. Use `offline_scorer.backends`."""
