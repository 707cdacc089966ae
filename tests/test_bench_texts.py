"""benchmarks.texts counts each failure of a judge's texts, and only those."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import texts as bench_texts


def _run(tmp_path: Path, reasons: list[str], explanation: str) -> dict:
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps(
            {"id": "a", "source": "The fee is 12 dollars.", "summary": "It costs 12 dollars."}
        )
        + "\n",
        encoding="utf-8",
    )
    result = {
        "score": 0.5,
        "reason": "Score 0.5 of 1: alignment 0.5 (1 of 2 claims supported), coverage 1 (1 of 1 "
        f"questions answered). Judge's explanation: {explanation}",
        "preprocessStepResult": {
            "alignment": [
                {"claim": "It costs 12 dollars.", "supported": True, "reason": r} for r in reasons
            ],
            "questions": ["Is it true that the fee is 12 dollars?"],
        },
        "analyzeStepResult": {
            "coverage": [
                {
                    "question": "Is it true that the fee is 12 dollars?",
                    "answered": True,
                    "reason": "It says so.",
                }
            ]
        },
    }
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({"id": "a", "status": "ok", "result": result}) + "\n", encoding="utf-8"
    )
    return bench_texts.count(results, data)


def test_clean_texts_count_nothing(tmp_path: Path) -> None:
    table = _run(
        tmp_path,
        ["The source gives the same fee of 12 dollars."],
        "Alignment limits the score: one claim is not supported.",
    )
    for kind in table.values():
        assert {k: v for k, v in kind.items() if k != "texts"} == dict.fromkeys(
            bench_texts.COLUMNS[1:], 0
        )


def test_each_failure_is_counted(tmp_path: Path) -> None:
    cut = "1. The source says " + "x" * 80 + " abcdefghij"
    table = _run(tmp_path, [cut[:100], "The fee is 13 dollars \u210f."], "The score is")
    claims = table["claim reason"]
    assert claims["texts"] == 2
    assert claims["not_a_sentence"] == 1 and claims["cut_mid_word"] == 1
    assert claims["list_numbering"] == 1
    assert claims["foreign_characters"] == 1  # the symbol
    assert claims["wrong_numbers"] == 2  # 13, and the list number 1, are in no input
    explanation = table["explanation"]
    assert explanation["not_a_sentence"] == 1 and explanation["cut_mid_word"] == 0


def test_texts_at_the_bound_and_product_texts_are_counted(tmp_path: Path) -> None:
    at_bound = "The source says " + " ".join(["so"] * 17) + "."  # closed at the word bound
    assert len(at_bound.split()) == 20
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"id": "a", "source": "A fee.", "summary": "A fee."}) + "\n", encoding="utf-8"
    )
    result = {
        "score": 1,
        "reason": "Score 1 of 1. Explanation (written by offline-scorer): The judge found "
        "seven claims supported.",
        "preprocessStepResult": {
            "alignment": [
                {"claim": "A fee.", "supported": True, "reason": at_bound},
                {"claim": "A fee.", "supported": True, "reason": "The judge found it."},
            ],
            "questions": [],
        },
        "analyzeStepResult": {"coverage": []},
        "textAuthors": {
            "explanation": "product",
            "alignment": ["model", "product"],
            "coverage": [],
        },
    }
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({"id": "a", "status": "ok", "result": result}) + "\n", encoding="utf-8"
    )
    table = bench_texts.count(results, data)
    assert table["claim reason"]["cut_mid_word"] == 1
    assert table["claim reason"]["product_written"] == 1
    assert table["explanation"]["product_written"] == 1
    assert table["explanation"]["wrong_numbers"] == 1  # "seven" is not a figure of the headline


def test_quotes_and_those_sharing_one_word_are_counted(tmp_path: Path) -> None:
    source = "The kiln was installed in May. The kiln reaches 1,300 degrees in the firing room."
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"id": "a", "source": source, "summary": source}) + "\n", encoding="utf-8"
    )
    coverage = [
        {"question": q, "answered": True, "reason": f'The summary says: "{s}"'}
        for q, s in (
            ("Is it true that the kiln reaches 1,300 degrees?", "The kiln was installed in May."),
            (
                "Is it true that the kiln reaches 1,300 degrees?",
                "The kiln reaches 1,300 degrees in the firing room.",
            ),
        )
    ]
    result = {
        "score": 1,
        "reason": "Score 1 of 1.",
        "preprocessStepResult": {"alignment": [], "questions": []},
        "analyzeStepResult": {"coverage": coverage},
        "textAuthors": {"explanation": "model", "alignment": [], "coverage": ["model", "model"]},
    }
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({"id": "a", "status": "ok", "result": result}) + "\n", encoding="utf-8"
    )
    table = bench_texts.count(results, data)["coverage reason"]
    assert table["quotes"] == 2
    assert table["quotes_sharing_one_word"] == 1  # "kiln" alone; the other shares three
