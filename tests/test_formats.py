"""Every format and revision constant is defined once, in `offline_scorer.formats`, with a line
saying what it versions; the values are pinned here because a change to one changes the bytes
of cassettes or results lines (or what old ones mean)."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

from offline_scorer import formats

PACKAGE = Path(formats.__file__).resolve().parent


def test_each_constant_says_what_it_versions():
    tree = ast.parse(Path(formats.__file__).read_text(encoding="utf-8"))
    documented = set()
    for node, after in itertools.pairwise(tree.body):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if (
            isinstance(target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            documented.add(target.id)
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
            documented.add(node.name)  # a reader of an old format's shape says what it reads
    assert set(formats.__all__) <= documented


def test_no_other_module_defines_them():
    names = set(formats.__all__) | {"FORMAT_VERSION", "COMPILER", "REWRITER", "DECODER"}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "formats.py" and path.parent == PACKAGE:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in names:
                    offenders.append(f"{path.relative_to(PACKAGE)}: {target.id}")
    assert offenders == []


def test_the_values_are_the_ones_every_committed_file_was_written_with():
    assert (formats.CASSETTE_FORMAT, formats.KEY_FORMAT, formats.LEGACY_KEY_FORMAT) == (1, 3, 2)
    assert (formats.DIGEST_VERSION, formats.RESULTS_FORMAT) == (1, 3)
    assert formats.LLAMA_CPP_BACKEND_ID == (
        "llguidance-gbnf/greedy-argmax+forced-batch+verdict-threshold+free-text-guard"
        "+contents-as-text/3 schema-gbnf/1"
    )
    assert formats.OUTLINES_BACKEND_ID == (
        "outlines-llamacpp/llguidance-json-schema/greedy+contents-as-text-or-refused/2 "
        "outlines-schema/1"
    )
    assert formats.LLAMA_CPP_FORMER_IDS[-1] == "llguidance-gbnf/greedy-argmax+forced-batch/1"
    assert formats.OUTLINES_FORMER_IDS[-1] == "outlines-llamacpp/llguidance-json-schema/greedy/1"
