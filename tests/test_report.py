"""`offline-scorer report`: reading results files strictly, the aggregate, the table, the HTML."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from offline_scorer.cli.report import report
from offline_scorer.errors import InputError
from offline_scorer.report import aggregate, format_table, read_results, render_html, write_report
from offline_scorer.report.provenance import file_sha256, provenance


def axis_of(alignment, coverage):
    if alignment == coverage:
        return "none" if alignment >= 1 else "both"
    return "alignment" if alignment < coverage else "coverage"


def ok(item_id, alignment, coverage, line=None, claims=(), questions=(), result=True):
    """An ok summarization line (format 2), as read_results returns it."""
    score = min(alignment, coverage)
    return {
        "format": 2,
        "scorer": "summarization",
        "id": item_id,
        "line": line,
        "digest": "d" * 64,
        "status": "ok",
        "score": score,
        "axes": {"alignment": alignment, "coverage": coverage},
        "limiting_axis": axis_of(alignment, coverage),
        "result": {
            "score": score,
            "reason": "r",
            "preprocessStepResult": {
                "alignment": [{"claim": c, "supported": s, "reason": why} for c, s, why in claims],
                "questions": [q for q, _, _ in questions],
            },
            "analyzeStepResult": {
                "coverage": [
                    {"question": q, "answered": a, "reason": why} for q, a, why in questions
                ]
            },
        }
        if result
        else None,
        "error": None,
        "metadata": {},
    }


def failed(
    item_id, line=None, type_="GenerationError", message="boom", axes=("alignment", "coverage")
):
    """A failed line (format 2): score, every axis, limiting_axis and result null."""
    return {
        "format": 2,
        "scorer": "summarization",
        "id": item_id,
        "line": line,
        "digest": "e" * 64,
        "status": "error",
        "score": None,
        "axes": dict.fromkeys(axes),
        "limiting_axis": None,
        "result": None,
        "error": {"type": type_, "message": message},
        "metadata": {},
    }


def format_1(item, metadata=True):
    """A format 2 line as offline-scorer 0.2 wrote it: no format and scorer keys, the axes flat
    between score and limiting_axis (and, before rows kept extra fields, no metadata)."""
    line = {key: item[key] for key in ("id", "line", "digest", "status", "score")}
    line.update(item["axes"])
    line.update((key, item[key]) for key in ("limiting_axis", "result", "error"))
    if metadata:
        line["metadata"] = item["metadata"]
    return line


def write_jsonl(path, items, trailing_newline=True):
    text = "\n".join(json.dumps(item, ensure_ascii=False) for item in items)
    path.write_text(text + ("\n" if trailing_newline else ""), encoding="utf-8")
    return path


@pytest.fixture
def sample():
    return [
        ok("a", 0.9, 0.5, line=1),  # score 0.5, coverage limits
        failed("b", line=2, message="context overflow"),
        ok("c", 0.2, 0.8, line=3),  # 0.2, alignment
        ok("d", 1, 1, line=4),  # 1, none
        ok("e", 0.4, 0.4, line=5),  # 0.4, both
        ok("f", 0.7, 0.9, line=6),  # 0.7, alignment
    ]


# --------------------------------------------------------------------------- aggregate


def test_aggregate_numbers_by_hand(sample):
    agg = aggregate(sample)
    # The keys and order of the JSON that `report --json` and `eval --json` print.
    assert list(agg.to_dict()) == [
        "count",
        "ok",
        "failed",
        "mean",
        "median",
        "min",
        "max",
        "alignment_mean",
        "coverage_mean",
        "limited_by",
        "lowest",
        "failures",
        "quality",
    ]
    assert agg.quality is None  # no labels in the rows' metadata
    assert (agg.count, agg.ok, agg.failed) == (6, 5, 1)
    # scores 0.5, 0.2, 1, 0.4, 0.7: sum 2.8 / 5; sorted 0.2 0.4 0.5 0.7 1
    assert agg.mean == 0.56
    assert agg.median == 0.5
    assert (agg.min, agg.max) == (0.2, 1)
    assert agg.axis_means["alignment"] == 0.64  # (0.9+0.2+1+0.4+0.7)/5 = 3.2/5
    assert agg.axis_means["coverage"] == 0.72  # (0.5+0.8+1+0.4+0.9)/5 = 3.6/5
    assert agg.axes == ("alignment", "coverage")
    assert agg.limited_by == {"alignment": 2, "coverage": 1, "both": 1, "none": 1}
    assert list(agg.limited_by) == ["alignment", "coverage", "both", "none"]
    assert agg.to_dict()["failures"] == [
        {"id": "b", "line": 2, "error": {"type": "GenerationError", "message": "context overflow"}}
    ]
    assert agg.failures[0].error.message == "context overflow"


def test_json_keeps_number_types_and_extra_error_keys():
    """An int score prints as 1, not 1.0; an error's extra keys are printed as the line has
    them."""
    bad = failed("x", line=2)
    bad["error"]["detail"] = {"n": 1}
    agg = aggregate([ok("a", 1, 1), ok("b", 0.5, 1.0), bad])
    text = json.dumps(agg.to_dict())
    assert '"min": 0.5, "max": 1, ' in text
    assert '"lowest": [{"id": "b", "score": 0.5, "alignment": 0.5, "coverage": 1.0, ' in text
    assert agg.to_dict()["failures"][0]["error"] == {
        "type": "GenerationError",
        "message": "boom",
        "detail": {"n": 1},
    }


def test_means_round_half_away_from_zero_to_four_places():
    items = [ok("a", 0.0002, 1), ok("b", 0.0003, 1)]  # mean and median are 0.00025 exactly
    agg = aggregate(items)
    assert agg.mean == 0.0003 and agg.median == 0.0003  # banker's rounding gives 0.0002
    third = aggregate([ok("a", 0.1, 1), ok("b", 0.2, 1), ok("c", 0.2, 1)])
    assert third.mean == 0.1667
    assert third.median == 0.2
    # Decimal arithmetic: 0.1 + 0.2 is 0.3 here, not 0.30000000000000004.
    assert aggregate([ok("a", 0.1, 1), ok("b", 0.2, 1)]).mean == 0.15


def test_lowest_five_ties_in_input_order(sample):
    items = [
        ok("t1", 0.3, 1),
        failed("x"),
        ok("t2", 0.3, 1),
        ok("low", 0.1, 1),
        ok("hi", 0.9, 1),
        ok("t3", 0.3, 1),
        ok("t4", 0.3, 1),
        ok("t5", 0.3, 1),
        ok("zero", 0, 0.5),
    ]
    lowest = aggregate(items).lowest
    assert [row.id for row in lowest] == ["zero", "low", "t1", "t2", "t3"]
    assert lowest[0].to_dict() == {
        "id": "zero",
        "score": 0,
        "alignment": 0,
        "coverage": 0.5,
        "limiting_axis": "alignment",
    }
    assert len(aggregate(sample).lowest) == 5
    assert [r.id for r in aggregate(sample[:3]).lowest] == ["c", "a"]


def assert_no_statistics(items):
    agg = aggregate(items).to_dict()
    for key in ("mean", "median", "min", "max", "alignment_mean", "coverage_mean"):
        assert agg[key] is None
    assert agg["lowest"] == []
    assert agg["limited_by"] == {"alignment": 0, "coverage": 0, "both": 0, "none": 0}


def test_an_empty_file_keeps_the_default_kinds_axes():
    """`report --json` of an empty results file prints the summarization keys, null."""
    assert_no_statistics([])


def test_no_ok_items_gives_none_statistics():
    assert_no_statistics([failed("x", line=1)])
    assert "mean -" in format_table(aggregate([]))
    html = render_html([], aggregate([]), "empty")
    assert "No scored items" in html and "No failures" in html


# --------------------------------------------------------------------------- reading


def test_read_results_round_trips(tmp_path, sample):
    path = write_jsonl(tmp_path / "run.jsonl", sample)
    assert read_results(path) == sample
    assert read_results(str(path)) == sample
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read_results(tmp_path / "empty.jsonl") == []


def test_format_1_lines_are_read_as_the_current_format(tmp_path, sample):
    """Files of offline-scorer 0.2 (flat axes, no format and scorer keys, and before rows
    kept their extra fields, no metadata) still report: read as summarization lines."""
    for metadata in (True, False):
        old = [format_1(item, metadata) for item in sample]
        assert "format" not in old[0] and old[0]["alignment"] == 0.9 and "axes" not in old[0]
        path = write_jsonl(tmp_path / "old.jsonl", old)
        assert read_results(path) == [{**item, "format": 3} for item in sample]
    assert format_table(aggregate(read_results(path))) == format_table(aggregate(sample))


def consistency_line(item_id, line=None):
    """A valid line of the test-only "consistency" kind (tests/kinds)."""
    return {
        "format": 2,
        "scorer": "consistency",
        "id": item_id,
        "line": line,
        "digest": "c" * 64,
        "status": "ok",
        "score": 1,
        "axes": {"consistency": 1, "brevity": 1},
        "limiting_axis": "none",
        "result": {
            "score": 1,
            "consistent": True,
            "pConsistent": 0.9,
            "consistency": 1,
            "brevity": 1,
        },
        "error": None,
        "metadata": {},
    }


def test_a_file_mixing_scorer_kinds_is_refused_unless_one_is_named(tmp_path, sample):
    summary, other = sample[0], consistency_line("k", line=2)
    path = write_jsonl(tmp_path / "run.jsonl", [summary, other])
    with pytest.raises(InputError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path} ")
    assert "consistency" in message and "summarization" in message
    assert "--scorer" in message
    assert "\n" not in message
    assert read_results(path, kind="consistency") == [other]
    assert read_results(path, kind="summarization") == [summary]
    # One kind alone needs no name.
    alone = write_jsonl(tmp_path / "alone.jsonl", [other])
    assert read_results(alone) == [other]


def test_last_line_without_newline_but_valid_is_accepted(tmp_path, sample):
    path = write_jsonl(tmp_path / "run.jsonl", sample, trailing_newline=False)
    assert read_results(path) == sample


def without(item, key):
    return {name: value for name, value in item.items() if name != key}


@pytest.mark.parametrize(
    ("bad_line", "fragments"),
    [
        ("{not json", ["not valid JSON"]),
        ("[1, 2]", ["expected a JSON object, found an array"]),
        ("", ["the line is empty"]),
        # No "format" key: read as format 1, whose axes sit between score and limiting_axis.
        ('{"id": "x"}', ["missing key 'score' or 'limiting_axis' (a format 1 line)"]),
        (json.dumps(without(ok("x", 1, 1), "line")), ["missing key 'line'"]),
        (json.dumps({**ok("x", 1, 1), "extra": 1}), ["unknown key 'extra'"]),
        (
            json.dumps({**ok("x", 1, 1), "status": "done"}),
            ["'status': Input should be 'ok' or 'error', found \"done\""],
        ),
        (
            json.dumps({**ok("x", 1, 1), "score": "high"}),
            ["'score", 'Input should be a valid number, found "high"'],
        ),
        (
            json.dumps({**ok("x", 1, 1), "score": True}),
            ["'score", "Input should be a valid number, found true"],
        ),
        (
            json.dumps({**ok("x", 1, 1), "score": None}),
            ["'score' of an ok item must be a number >= 0"],
        ),
        (
            json.dumps({**ok("x", 1, 1), "axes": {"alignment": -1, "coverage": 1}}),
            ["'alignment' of an ok item must be a number >= 0"],
        ),
        (
            json.dumps({**ok("x", 1, 1), "limiting_axis": None}),
            ["'limiting_axis' of an ok item must be one of alignment, coverage, both, none"],
        ),
        (
            json.dumps({**ok("x", 1, 1), "line": "3"}),
            ["'line': Input should be a valid integer, found \"3\""],
        ),
        (
            json.dumps({**failed("x"), "error": None}),
            ["an error item must have an 'error' object"],
        ),
        (json.dumps({**failed("x"), "score": 0.5}), ['an error item must have "score": null']),
        (
            json.dumps({**ok("x", 1, 1), "result": {"score": 1}}),
            ["'result' lacks", "preprocessStepResult"],
        ),
        (
            json.dumps({**ok("x", 1, 1), "axes": {"coverage": 1, "alignment": 1}}),
            ["'axes' must be those of the summarization scorer (alignment, coverage)"],
        ),
        (
            json.dumps({**ok("x", 1, 1), "scorer": "nope"}),
            ["unknown scorer kind 'nope'", "consistency, summarization"],
        ),
        (json.dumps({**ok("x", 1, 1), "format": 4}), ["results line format 4", "upgrade"]),
        ('{"id": NaN}', ["NaN is not a number JSON allows"]),
    ],
)
def test_malformed_line_names_path_and_line(tmp_path, sample, bad_line, fragments):
    good = [json.dumps(item) for item in sample[:2]]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join([*good, bad_line, json.dumps(sample[2])]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path} line 3: ")
    for fragment in fragments:
        assert fragment in message
    assert "\n" not in message
    assert "cut off" not in message


def test_not_utf8_names_line_and_byte(tmp_path, sample):
    path = tmp_path / "run.jsonl"
    path.write_bytes(json.dumps(sample[0]).encode() + b'\n{"id": "\xff"}\n')
    with pytest.raises(InputError, match=r"line 2: not valid UTF-8 \(byte 0xff at column 9\)"):
        read_results(path)


def test_torn_last_line_is_reported_as_an_interrupted_run(tmp_path, sample):
    path = tmp_path / "run.jsonl"
    full = "".join(json.dumps(item) + "\n" for item in sample[:3])
    path.write_text(full + json.dumps(sample[3])[:25], encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path} line 4: the last line is cut off")
    assert "killed" in message and "\n" not in message
    # The same broken line followed by a newline is an ordinary malformed line.
    path.write_text(full + json.dumps(sample[3])[:25] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 4: not valid JSON") as caught:
        read_results(path)
    assert "cut off" not in str(caught.value)


def test_missing_results_file(tmp_path):
    with pytest.raises(InputError, match="no such results file"):
        read_results(tmp_path / "nope.jsonl")


# --------------------------------------------------------------------------- table


def test_format_table(sample):
    table = format_table(aggregate(sample))
    assert "items        6 (5 ok, 1 failed)" in table
    assert "mean 0.56   median 0.5   min 0.2   max 1" in table
    assert "alignment 2   coverage 1   both 1   none 1" in table
    lowest = table.split("lowest scores\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[1] for line in lowest[1:]] == ["c", "e", "a", "f", "d"]
    assert "GenerationError: context overflow" in table


def test_format_table_neutralises_control_characters():
    table = format_table(aggregate([ok("evil\x1b[31m\nid", 0.5, 0.5)]))
    assert "\x1b" not in table
    assert "evil\\x1b[31m\\x0aid" in table


# --------------------------------------------------------------------------- HTML


def rich_items():
    return [
        ok(
            "<script>alert(1)</script>",
            0.25,
            0.5,
            line=1,
            claims=[
                ("The <b>bridge</b> opened in 1961.", True, "stated"),
                ("It cost 9 million & more.", False, "source says 2.4 <million>"),
            ],
            questions=[("When did it close?", True, "yes"), ("Who voted?", False, "not mentioned")],
        ),
        ok("same-1", 0.8, 0.6, line=2),
        ok("same-2", 0.8, 0.6, line=3),
        ok("same-3", 0.8, 0.6, line=4),
        ok("perfect", 1, 1, line=5),
        ok("no-verdicts", 0.5, 0.5, line=8, result=False),
        ok("point-three", 0.3, 0.9, line=6),
        failed('"quoted" <id>', line=7, message="model said </td><td>"),
    ]


def test_html_is_self_contained_and_escaped():
    items = rich_items()
    html = render_html(items, aggregate(items), "Run <1> & co")
    assert html.startswith("<!DOCTYPE html>")
    assert html.count("<svg") == 2
    # The SVG namespace names, never loads, anything; nothing else may point outside.
    assert "https://" not in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for forbidden in ("<script", "<link", "<img", "@import", "url(", "<iframe"):
        assert forbidden not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<title>Run &lt;1&gt; &amp; co</title>" in html
    assert "&#34;quoted&#34; &lt;id&gt;" in html
    assert "model said &lt;/td&gt;&lt;td&gt;" in html
    assert "<b>bridge</b>" not in html


def test_html_lowest_table_lists_unsupported_claims_and_unanswered_questions():
    items = rich_items()
    html = render_html(items, aggregate(items), "t")
    lowest = html.split("<h2>Lowest scores (5)</h2>")[1].split("<h2>Failures")[0]
    assert "It cost 9 million &amp; more." in lowest
    assert "source says 2.4 &lt;million&gt;" in lowest
    assert "Who voted?" in lowest
    assert "bridge" not in lowest  # supported claims are not listed
    assert "When did it close?" not in lowest
    assert "no verdicts recorded" in lowest  # "no-verdicts" has a null result
    assert "perfect" not in lowest
    failures = html.split("<h2>Failures (1)</h2>")[1]
    assert "GenerationError" in failures and ">7<" in failures


def test_scatter_counts_exactly_overlapping_points():
    items = rich_items()
    html = render_html(items, aggregate(items), "t")
    groups = re.findall(r'<g class="point"><title>(.*?)</title>(.*?)</g>', html, re.S)
    assert len(groups) == 5  # three of the seven ok items share coverage 0.6 / alignment 0.8
    crowded = [g for g in groups if g[0].startswith("3 items")]
    assert len(crowded) == 1
    title, body = crowded[0]
    for name in ("same-1 (score 0.6)", "same-2 (score 0.6)", "same-3 (score 0.6)"):
        assert name in title
    assert '<text class="n"' in body and ">3</text>" in body
    assert "alignment = coverage" in html  # the diagonal
    assert "coverage limits (3)" in html  # legend with counts
    assert "alignment limits (2)" in html


def test_histogram_bins_use_exact_decimal_edges():
    items = [ok("a", 0.3, 1), ok("b", 1, 1), ok("c", 0, 0.2), ok("d", 0.7, 0.7)]
    html = render_html(items, aggregate(items), "t")
    assert "score in [0.3, 0.4): 1 item" in html  # 0.3 / 0.1 is 2.999... in binary floats
    assert "score in [0.9, 1]: 1 item" in html
    assert "score in [0, 0.1): 1 item" in html
    assert "score in [0.7, 0.8): 1 item" in html
    assert "score in [0.2, 0.3): 0 items" in html


def test_histogram_over_larger_scale():
    items = [ok("a", 7, 9.5), ok("b", 2, 3)]
    html = render_html(items, aggregate(items), "t")
    assert "score in [7, 8): 1 item" in html
    assert "score in [2, 3): 1 item" in html
    assert ">10</text>" in html


def test_html_bytes_are_deterministic(tmp_path):
    items = rich_items()
    results = write_jsonl(tmp_path / "run.jsonl", items)
    first = tmp_path / "one.html"
    second = tmp_path / "two.html"
    agg = write_report(results, first)
    write_report(results, second)
    assert agg == aggregate(items)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_text(encoding="utf-8") == render_html(
        items, aggregate(items), "Evaluation report: run.jsonl"
    )


def test_html_survives_lone_surrogates(tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_text(json.dumps(ok("bad\ud800id", 0.5, 0.5)) + "\n", encoding="utf-8")
    write_report(results, tmp_path / "run.html")
    assert "bad?id" in (tmp_path / "run.html").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- CLI


def test_cli_prints_table_and_writes_html_next_to_results(tmp_path, sample):
    results = write_jsonl(tmp_path / "run.jsonl", sample)
    result = CliRunner().invoke(report, [str(results)])
    assert result.exit_code == 0, result.output
    assert result.stdout == format_table(aggregate(sample))
    html = tmp_path / "run.html"
    digest = f"results  sha256:{file_sha256(results)}  {results}\n"
    assert result.stderr == f"{digest}wrote {html}\n"
    assert html.read_text(encoding="utf-8").count("<svg") == 2


def test_cli_json_and_custom_html_path(tmp_path, sample):
    results = write_jsonl(tmp_path / "run.jsonl", sample)
    out = tmp_path / "page.html"
    result = CliRunner().invoke(report, [str(results), "--json", "--html", str(out)])
    assert result.exit_code == 0, result.output
    origin = provenance(results, "summarization").to_dict()  # without --cassette: the sha256
    assert origin["cassette_digest"] is None and len(origin["commands"]) == 1
    document = {**aggregate(sample).to_dict(), "provenance": origin}
    assert result.stdout == json.dumps(document, indent=2) + "\n"
    assert out.is_file() and not (tmp_path / "run.html").exists()
    assert result.stderr == f"results  sha256:{file_sha256(results)}  {results}\nwrote {out}\n"


def test_cli_no_html(tmp_path, sample):
    results = write_jsonl(tmp_path / "run.jsonl", sample)
    result = CliRunner().invoke(report, [str(results), "--no-html"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"results  sha256:{file_sha256(results)}  {results}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]


def test_cli_errors_are_input_errors(tmp_path, sample):
    results = tmp_path / "run.jsonl"
    results.write_text(json.dumps(sample[0]) + "\n{oops\n", encoding="utf-8")
    result = CliRunner().invoke(report, [str(results)])
    assert isinstance(result.exception, InputError)
    assert str(result.exception).startswith(f"{results} line 2: not valid JSON")
    assert not (tmp_path / "run.html").exists()

    good = write_jsonl(tmp_path / "good.jsonl", sample)
    result = CliRunner().invoke(report, [str(good), "--no-html", "--html", "x.html"])
    assert isinstance(result.exception, InputError)
    assert "contradict" in str(result.exception)

    same = write_jsonl(tmp_path / "run.html", sample)
    result = CliRunner().invoke(report, [str(same)])
    assert isinstance(result.exception, InputError)
    assert "overwrite" in str(result.exception)

    result = CliRunner().invoke(report, [str(good), "--html", str(tmp_path / "no" / "x.html")])
    assert isinstance(result.exception, InputError)
    assert "does not exist" in str(result.exception)


def scored(item_id, **axes):
    """An ok item with other axes than alignment and coverage (no verdicts). Its lines name a
    registered kind, whose spec gives labels and verdict columns; the aggregate's axes come
    from the lines. Only for dicts handed to the aggregate, table and page: read_results
    refuses a line whose axes are not its kind's."""
    score = min(axes.values())
    lowest = [axis for axis, value in axes.items() if value == score]
    limiting = ("none" if score >= 1 else "both") if len(lowest) > 1 else lowest[0]
    return {
        "format": 2,
        "scorer": "summarization",
        "id": item_id,
        "line": None,
        "digest": "d" * 64,
        "status": "ok",
        "score": score,
        "axes": axes,
        "limiting_axis": limiting,
        "result": None,
        "error": None,
        "metadata": {},
    }


def test_axes_are_named_by_the_lines():
    gone = failed("c", type_="E", message="m", axes=("fluency", "accuracy"))
    items = [scored("a", fluency=0.5, accuracy=0.75), scored("b", fluency=1, accuracy=0.25), gone]
    agg = aggregate(items)
    assert agg.axis_means == {"fluency": 0.75, "accuracy": 0.5}
    assert "alignment_mean" not in agg.to_dict()
    assert agg.to_dict()["fluency_mean"] == 0.75
    assert agg.limited_by == {"fluency": 1, "accuracy": 1, "both": 0, "none": 0}
    assert agg.lowest[0].to_dict() == {
        "id": "b",
        "score": 0.25,
        "fluency": 1,
        "accuracy": 0.25,
        "limiting_axis": "accuracy",
    }
    table = format_table(agg)
    assert "fluency      mean 0.75\naccuracy     mean 0.5\n" in table
    assert "limited by   fluency 1   accuracy 1   both 0   none 0" in table
    assert "#  id  score  fluency  accuracy  limited by" in table
    assert "alignment" not in table and "coverage" not in table

    page = render_html(items, agg, "t", verdicts=())
    assert "alignment" not in page and "coverage" not in page
    assert '<th class="num">fluency</th><th class="num">accuracy</th>' in page
    assert ">Fluency against accuracy, one point per item</title>" in page
    assert "svg .zone-accuracy { fill: #0072b2;" in page
    assert "limited by accuracy and points below it by fluency" in page


def test_axes_parameter_sets_order_and_choice(sample):
    agg = aggregate(sample, axes=("coverage", "alignment"))
    assert list(agg.to_dict())[7:9] == ["coverage_mean", "alignment_mean"]
    assert format_table(agg).index("coverage     mean") < format_table(agg).index("alignment")
    assert format_table(aggregate(sample), axes=("alignment",)).count("coverage     mean") == 0


def test_three_axes_draw_no_scatter_and_one_axis_works():
    three = [scored("a", x=0.5, y=1, z=0.75), scored("b", x=1, y=1, z=1)]
    page = render_html(three, aggregate(three), "t", verdicts=())
    assert page.count("<figure>") == 1 and "all at top" not in page
    one = [scored("a", only=0.5)]
    assert "only         mean 0.5" in format_table(aggregate(one))
    assert render_html(one, aggregate(one), "t").count("<figure>") == 1


def test_axis_names_from_the_file_are_escaped():
    items = [scored("a", **{"<b>up</b>": 0.5, "a\x1bb": 1})]
    page = render_html(items, aggregate(items), "t", verdicts=())
    assert "<b>up</b>" not in page and "&lt;b&gt;up&lt;/b&gt;" in page
    assert re.search(r'class="zone-[A-Za-z0-9_-]+"', page)
    assert "\x1b" not in page and "\x1b" not in format_table(aggregate(items))


def test_a_line_lacking_an_axis_is_an_input_error(sample):
    items = [scored("a", fluency=0.5, accuracy=1), sample[0]]
    with pytest.raises(InputError, match="results line 2 lacks the axis 'fluency'"):
        aggregate(items)
    with pytest.raises(InputError, match="cannot be called 'both'"):
        aggregate([scored("a", both=0.5, accuracy=1)])
