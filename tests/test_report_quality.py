"""`offline-scorer report` with labelled rows: judge-quality figures, metadata and verdict
probabilities in results lines, from synthetic results files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from offline_scorer.cli.report import report
from offline_scorer.errors import InputError
from offline_scorer.report import aggregate, format_table, read_results, render_html
from offline_scorer.report.model import (
    BinaryQuality,
    Confusion,
    Excluded,
    Figure,
    NumericQuality,
)
from offline_scorer.report.quality import binary_label, judge_quality, numeric_label
from offline_scorer.scorers.registry import get_spec
from tests.test_report import failed, format_1, ok, write_jsonl

SUMMARIZATION = get_spec("summarization")


def labelled(item_id, alignment, coverage, metadata, probabilities=None, claims=None):
    """An ok item with metadata; `probabilities` are P(supported) per claim (or None)."""
    if claims is None:
        claims = [(f"claim {n}", True, "r") for n in range(len(probabilities or []))]
    item = ok(item_id, alignment, coverage, claims=claims)
    item["metadata"] = metadata
    if probabilities is not None:
        item["result"]["verdictProbabilities"] = {
            "threshold": 0.5,
            "alignment": probabilities,
            "coverage": [],
        }
    return item


@pytest.fixture
def binary():
    """Six labelled items, plus three that are left out (failed, unlabelled, unusable).

    alignment  label      alignment == 1
    1          true       tp
    1          true       tp
    0.5        true       fn
    1          false      fp
    0.5        false      tn
    0          false      tn
    """
    bad = failed("broken")
    bad["metadata"] = {"faithful": True}
    return [
        labelled("a", 1, 0.5, {"faithful": True, "domain": "x"}, [0.9, 0.8]),
        labelled("b", 1, 1, {"faithful": True}, [0.7]),
        labelled("c", 0.5, 1, {"faithful": True}, [0.6, None]),
        labelled("d", 1, 0.8, {"faithful": False}, [0.4]),
        labelled("e", 0.5, 0.5, {"faithful": False}, [None]),  # all null: no min P
        labelled("f", 0, 1, {"faithful": False}, []),  # no claims: no min P
        bad,
        labelled("g", 1, 1, {"domain": "y"}),
        labelled("h", 1, 1, {"faithful": "perhaps"}),
    ]


def test_binary_figures_by_hand(binary):
    quality = judge_quality(SUMMARIZATION, binary)
    assert isinstance(quality, BinaryQuality)
    assert quality.label == "faithful" and quality.kind == "binary"
    assert quality.axis == "alignment"  # summarization's judged axis
    assert quality.items == 6 and quality.positives == 3 and quality.negatives == 3
    assert quality.excluded == Excluded(failed=1, missing=1, invalid=1)
    # alignment: positives {1, 1, .5}, negatives {1, .5, 0}; pairs: 1 vs (1, .5, 0) counts
    # 1/2 + 1 + 1 twice, .5 vs (1, .5, 0) counts 0 + 1/2 + 1 -> 6.5 / 9 = 0.7222
    assert quality.auc_axis.value == 0.7222
    # score = min(alignment, coverage): positives {.5, 1, .5}, negatives {.8, .5, 0}
    # 1 beats all 3; each .5: 0 + 1/2 + 1 -> (3 + 1.5 + 1.5) / 9 = 0.6667
    assert quality.auc_score.value == 0.6667
    assert quality.rule == "alignment == 1"
    assert quality.confusion == Confusion(tp=2, fp=1, tn=2, fn=1)
    assert quality.balanced_accuracy.value == 0.6667  # (2/3 + 2/3) / 2
    # weakest P(supported) over a, b, c, d (e all null, f empty): positives {.8, .7, .6},
    # negatives {.4} -> 1
    assert quality.auc_weakest_p is not None
    assert quality.auc_weakest_p.items == 4
    assert quality.auc_weakest_p.value == 1.0
    for figure in (quality.auc_axis, quality.auc_score, quality.balanced_accuracy):
        assert figure.low <= figure.value <= figure.high
        assert 0 < figure.resamples <= 2000
    # The JSON's keys and order (kind-neutral names, the judged axis named by "axis"); the
    # figure over a subset names its size first.
    assert list(quality.model_dump()) == [
        "label",
        "kind",
        "items",
        "excluded",
        "level",
        "resamples",
        "seed",
        "axis",
        "positives",
        "negatives",
        "auc_axis",
        "auc_score",
        "rule",
        "balanced_accuracy",
        "confusion",
        "auc_weakest_p",
    ]
    assert list(quality.model_dump()["auc_weakest_p"]) == [
        "items",
        "value",
        "low",
        "high",
        "resamples",
    ]
    assert quality.model_dump()["confusion"] == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}


def test_the_figures_are_the_same_bytes_every_time(binary):
    first = json.dumps(aggregate(binary).to_dict())
    assert first == json.dumps(aggregate(list(reversed(list(reversed(binary))))).to_dict())
    quality = aggregate(binary).quality
    assert quality is not None
    assert json.loads(first)["quality"]["auc_axis"] == quality.auc_axis.model_dump()


@pytest.mark.parametrize(
    "value, expected",
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        ("true", True),
        (" False ", False),
        ("1", True),
        ("0", False),
        ("yes", None),
        (2, None),
        (None, None),
        ("", None),
    ],
)
def test_binary_labels_read_from_json_and_csv(value, expected):
    assert binary_label(value) is expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (3, 3.0),
        (2.5, 2.5),
        ("4.25", 4.25),
        (True, None),
        ("nan", None),
        ("high", None),
    ],
)
def test_numeric_labels(value, expected):
    assert numeric_label(value) == expected


def test_csv_strings_and_label_column():
    items = [
        labelled("a", 1, 1, {"label": "1"}),
        labelled("b", 0.5, 1, {"label": "0"}),
        labelled("c", 1, 1, {"label": 1}),
        labelled("d", 0, 1, {"label": False}),
    ]
    quality = judge_quality(SUMMARIZATION, items)
    assert isinstance(quality, BinaryQuality)
    assert quality.label == "label" and quality.items == 4
    assert quality.confusion == Confusion(tp=2, fp=0, tn=2, fn=0)
    assert quality.auc_axis.value == 1.0
    assert quality.auc_weakest_p is None  # no verdict probabilities in the results


def test_faithful_is_preferred_to_label_and_label_can_be_named():
    items = [
        labelled("a", 1, 1, {"label": 0, "faithful": True}),
        labelled("b", 0.5, 1, {"label": 1, "faithful": False}),
    ]
    by_faithful = judge_quality(SUMMARIZATION, items)
    by_label = judge_quality(SUMMARIZATION, items, "label")
    assert isinstance(by_faithful, BinaryQuality) and isinstance(by_label, BinaryQuality)
    assert by_faithful.auc_axis.value == 1.0
    assert by_label.auc_axis.value == 0.0


def test_numeric_label_gives_spearman():
    items = [
        labelled(str(n), a, c, {"human_score": h})
        for n, (a, c, h) in enumerate(
            [(1, 1, 5), (0.8, 0.5, "4"), (0.6, 0.9, 3), (0.4, 0.2, 2), (0.2, 0.1, 1)]
        )
    ]
    items.append(labelled("x", 1, 1, {"human_score": "n/a"}))
    quality = judge_quality(SUMMARIZATION, items)
    assert isinstance(quality, NumericQuality)
    assert quality.kind == "numeric" and quality.items == 5
    assert quality.axis == "alignment"
    assert quality.excluded == Excluded(failed=0, missing=0, invalid=1)
    assert quality.spearman_axis.value == 1.0
    # score ranks 5, 3, 4, 2, 1 against 5, 4, 3, 2, 1: 1 - 6 * 2 / (5 * 24) = 0.9
    assert quality.spearman_score.value == 0.9
    assert list(quality.model_dump())[-3:] == ["axis", "spearman_score", "spearman_axis"]
    table = format_table(aggregate(items))
    assert "Spearman rho, score" in table and "label 'human_score' (a number): 5 items" in table
    assert "Spearman rho, alignment" in table


def test_a_named_field_of_numbers_or_booleans_is_inferred():
    numbers = [
        labelled(str(n), a, 1, {"rating": r}) for n, (a, r) in enumerate([(1, 7), (0.5, 2), (0, 1)])
    ]
    assert isinstance(judge_quality(SUMMARIZATION, numbers, "rating"), NumericQuality)
    flags = [
        labelled(str(n), a, 1, {"ok": r}) for n, (a, r) in enumerate([(1, "true"), (0.5, "false")])
    ]
    assert isinstance(judge_quality(SUMMARIZATION, flags, "ok"), BinaryQuality)
    mixed = [
        labelled("a", 1, 1, {"note": "good"}),
        labelled("b", 1, 1, {"note": 2}),
        labelled("c", 0.5, 1, {"note": "1"}),
    ]
    quality = judge_quality(SUMMARIZATION, mixed, "note")
    assert isinstance(quality, NumericQuality) and quality.items == 2
    assert quality.excluded == Excluded(failed=0, missing=0, invalid=1)
    words = [labelled("a", 1, 1, {"note": "good"}), labelled("b", 1, 1, {"note": None})]
    with pytest.raises(
        InputError, match="must hold true/false, 0/1 or numbers; item 'a' has 'good'"
    ):
        judge_quality(SUMMARIZATION, words, "note")


def test_no_labels_means_no_quality(binary):
    plain = [ok("a", 1, 1), ok("b", 0.5, 1)]
    assert judge_quality(SUMMARIZATION, plain) is None
    agg = aggregate(plain)
    assert agg.quality is None and agg.to_dict()["quality"] is None
    assert "judge quality" not in format_table(agg)
    assert "Judge quality" not in render_html(plain, agg, "t")


def test_one_class_only_gives_no_auc_but_still_counts():
    items = [labelled("a", 1, 1, {"faithful": True}), labelled("b", 0.5, 1, {"faithful": True})]
    quality = judge_quality(SUMMARIZATION, items)
    assert isinstance(quality, BinaryQuality)
    assert quality.auc_axis == Figure(value=None, low=None, high=None, resamples=0)
    assert quality.confusion == Confusion(tp=1, fp=0, tn=0, fn=1)
    assert "needs both classes" in format_table(aggregate(items))


# --------------------------------------------------------------------------- output


def test_table_block(binary):
    table = format_table(aggregate(binary))
    block = table.split("judge quality\n")[1].split("\n\n")[0].splitlines()
    assert block[0] == "  label 'faithful' (true = positive): 6 items, 3 true, 3 false"
    assert block[1] == "  left out: 1 failed, 1 without the label, 1 with an unusable value"
    assert block[2].split() == ["figure", "value", "95%", "interval"]
    assert block[3].startswith("  ROC AUC, alignment ") and " 0.7222  [" in block[3]
    assert block[4].startswith("  ROC AUC, score ")
    assert block[5].startswith("  ROC AUC, weakest alignment P(true) ")
    assert "4 items with verdict probabilities" in block[5]
    # names padded to the longest, "ROC AUC, weakest alignment P(true)"
    assert block[6].startswith("  balanced accuracy, alignment == 1   0.6667  [")
    assert block[7] == (
        "  confusion, alignment == 1: tp 2   fn 1   fp 1   tn 2   (positive = judged/labelled true)"
    )
    assert block[8] == "  intervals: percentile bootstrap over items, 2000 resamples, seed 0"
    # The block sits between the summary and the lowest scores.
    assert table.index("limited by") < table.index("judge quality") < table.index("lowest")


def test_html_section_is_escaped(binary):
    for item in binary:
        if "metadata" in item and "faithful" in item["metadata"]:
            item["metadata"]["<b>ok</b>"] = item["metadata"].pop("faithful")
    agg = aggregate(binary, "<b>ok</b>")
    html = render_html(binary, agg, "t")
    assert "<h2>Judge quality</h2>" in html
    assert "label &#39;&lt;b&gt;ok&lt;/b&gt;&#39;" in html and "<b>ok</b>" not in html
    assert '<table class="confusion">' in html
    assert html.index("Judge quality") < html.index("<h2>Distribution</h2>")


def test_cli_json_and_label_option(tmp_path, binary):
    results = write_jsonl(tmp_path / "run.jsonl", binary)
    result = CliRunner().invoke(report, [str(results), "--json", "--no-html"])
    assert result.exit_code == 0, result.output
    quality = json.loads(result.stdout)["quality"]
    assert quality["auc_axis"]["value"] == 0.7222
    assert quality["axis"] == "alignment"
    plain = write_jsonl(tmp_path / "plain.jsonl", [ok("a", 1, 1)])
    result = CliRunner().invoke(report, [str(plain), "--json", "--no-html"])
    assert json.loads(result.stdout)["quality"] is None
    result = CliRunner().invoke(report, [str(results), "--no-html", "--label", "domain"])
    assert result.exit_code == 1  # 'domain' holds strings: refused
    assert isinstance(result.exception, InputError)
    result = CliRunner().invoke(report, [str(results), "--no-html", "--label", "human"])
    assert isinstance(result.exception, InputError)
    message = str(result.exception)
    assert (
        message.startswith("--label human: label field 'human' is in the metadata of no item")
        and "\n" not in message
    )


def test_cli_label_error_exits_2(tmp_path, binary):
    import subprocess
    import sys

    results = write_jsonl(tmp_path / "run.jsonl", binary)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "offline_scorer",
            "report",
            str(results),
            "--no-html",
            "--label",
            "human",
        ],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.decode().count("\n") == 1 and "--label human" in proc.stderr.decode()


# --------------------------------------------------------------------------- reading


def test_metadata_and_probabilities_are_read_and_old_lines_still_are(tmp_path, binary):
    old = ok("old", 1, 1)  # a line written before metadata and probabilities existed
    path = write_jsonl(tmp_path / "run.jsonl", [*binary, format_1(old, metadata=False)])
    assert read_results(path) == [*binary, {**old, "format": 3}]  # read as the current shape
    assert read_results(path)[-1]["metadata"] == {}
    item = labelled("n", 1, 1, {}, None, claims=[("c", True, "r")])
    item["result"]["verdictProbabilities"] = None  # a judge that gives none
    path = write_jsonl(tmp_path / "none.jsonl", [item])
    assert read_results(path)[0]["result"]["verdictProbabilities"] is None


def with_probabilities(value):
    item = labelled("p", 1, 1, {}, None, claims=[("c", True, "r")])
    item["result"]["verdictProbabilities"] = value
    return item


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (
            {**labelled("m", 1, 1, {}), "metadata": ["faithful"]},
            "'metadata': Input should be a valid dictionary, found [\"faithful\"]",
        ),
        (
            with_probabilities([0.5]),
            "verdictProbabilities': Input should be an object, found [0.5]",
        ),
        (with_probabilities({"alignment": [0.5], "coverage": []}), "'threshold'"),
        (
            with_probabilities({"threshold": "high", "alignment": [0.5], "coverage": []}),
            "verdictProbabilities.threshold': Input should be a valid number",
        ),
        (
            with_probabilities({"threshold": None, "alignment": [1.5], "coverage": []}),
            "verdictProbabilities.alignment.0': Input should be less than or equal to 1, found 1.5",
        ),
        (
            with_probabilities({"threshold": None, "alignment": [True], "coverage": []}),
            "verdictProbabilities.alignment.0': Input should be a valid number, found true",
        ),
        (
            with_probabilities({"threshold": None, "alignment": [0.5, 0.5], "coverage": []}),
            ".alignment has 2 entries for 1 alignment verdicts",
        ),
        (
            with_probabilities({"threshold": 0.5, "alignment": [0.5]}),
            "verdictProbabilities' lacks 'coverage'",
        ),
    ],
)
def test_malformed_metadata_and_probabilities_are_refused(tmp_path, bad, fragment):
    path = write_jsonl(tmp_path / "run.jsonl", [ok("a", 1, 1), bad])
    with pytest.raises(InputError) as caught:
        read_results(path)
    assert str(caught.value).startswith(f"{path} line 2: ")
    assert fragment in str(caught.value)


@pytest.mark.parametrize("label", ["faithful", "human_score"])
def test_eval_closing_summary_from_slim_lines_equals_the_report(tmp_path, label):
    """`eval` keeps only what the aggregate reads of each line (read_results(slim=True)); on a
    labelled run of the dev set (its first 20 lines), with and without a failed line, the
    figures are the same."""
    from tests.conftest import ROOT

    run = ROOT / "tests" / "data" / "judge-dev-first20.results.jsonl"
    lines = run.read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    if label == "human_score":
        for n, record in enumerate(records):
            record["metadata"] = {"human_score": n % 5, "note": "x" * 50}
    records.append(failed("broken", len(records) + 1))
    path = write_jsonl(tmp_path / "dev.jsonl", records)
    full = aggregate(read_results(path))
    assert full.quality is not None and full.failed == 1
    assert aggregate(read_results(path, slim=True)) == full
