"""The llama.cpp backend: local GGUF models through llama-cpp-python, constrained by llguidance.

Importing this package does not import llama-cpp-python; loading a model does.
"""

# The decoding method, as it enters cassette keys: GBNF grammars run by llguidance, greedy argmax
# over the masked logits, grammar-forced tokens evaluated as one batch; since /2, boolean verdicts
# committed by P(true) against the threshold and free text kept by the loop/copy guard. Replay
# needs this constant without importing the runtime, which is why it lives here.
BACKEND_ID = "llguidance-gbnf/greedy-argmax+forced-batch+verdict-threshold+free-text-guard/2"
