"""The live judge: local GGUF models through llama-cpp-python, constrained by llguidance.

Importing this package does not import llama-cpp-python; loading a model does.
"""
