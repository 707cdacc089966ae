"""The HTML report in a real browser (Debian's Chromium, headless): it renders, its charts are
drawn, it loads nothing, and hostile ids and reasons show as text.

The other report tests read the page as text; only a browser's parser says what a reader gets
(an id holding `</svg>` must not close the chart, a reason holding quotes must not end an
attribute). scripts/setup installs Chromium, so in CI (`CI` set) a missing one fails the test;
elsewhere it is skipped.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from offline_scorer.report import write_report
from tests.test_report import failed, ok, write_jsonl
from tests.test_report_quality import labelled

HOSTILE_ID = "<script>alert(1)</script>"
HOSTILE_REASON = "\"quotes\" & 'apostrophes'"
CLOSING_ID = "</svg>"
FAILED_ID = '"quoted" <id>'
FAILED_MESSAGE = "model said </td><td>"
# Where `OFFLINE_SCORER_SCREENSHOT=1` saves a picture of the judge-quality section (the README's).
QUALITY_SHOT = Path(__file__).resolve().parents[1] / "docs" / "report-quality-example.png"

# No network: any outside reference would show as a net::ERR_ line in the log.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr",
    "--v=0",
)
# What a page logs when it loads something or runs a script; D-Bus and GPU noise is harmless.
PAGE_PROBLEMS = ("net::ERR_", ":CONSOLE", "Uncaught", "Failed to load", "Not allowed to load")
LOADING_TAGS = {"script", "link", "iframe", "object", "embed", "img", "image", "use", "audio"}
LOADING_TAGS |= {"video", "source", "frame", "base"}
LOADING_ATTRS = {"src", "href", "xlink:href", "srcset", "action", "poster", "data"}
VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "source"})


def results_items():
    """A run whose ids, claims and reasons try to break out of the page's markup."""
    return [
        ok(
            HOSTILE_ID,
            0.25,
            0.5,
            line=1,
            claims=[
                ("The bridge opened in 1961.", True, "stated"),
                ("It cost <b>9</b> million.", False, HOSTILE_REASON),
            ],
            questions=[("Who voted?", False, f"{CLOSING_ID} not mentioned")],
        ),
        ok(CLOSING_ID, 0.8, 0.6, line=2),
        ok("same-1", 0.8, 0.6, line=3),
        ok("perfect", 1, 1, line=4),
        ok("low-coverage", 0.9, 0.3, line=5),
        failed(FAILED_ID, line=6, message=FAILED_MESSAGE),
    ]


# --------------------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing; scripts/setup installs Debian's chromium package")
        pytest.skip("chromium is not installed (scripts/setup installs Debian's package)")
    return found


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    results = write_jsonl(folder / "run.jsonl", results_items())
    write_report(results, folder / "run.html")
    return folder / "run.html"


def run_chromium(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            timeout=60,  # well under a second on an idle machine
        )
    except subprocess.TimeoutExpired:
        pytest.fail("chromium did not finish in 60 s: a script on the page (an alert) blocks it?")
    log = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, log
    problems = [line for line in log.splitlines() if any(p in line for p in PAGE_PROBLEMS)]
    assert problems == [], "the page loaded something or ran a script"
    return proc


# --------------------------------------------------------------------------- the parsed DOM


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None = None
    children: list[Element | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.walk()

    def all(self, tag: str, cls: str | None = None) -> list[Element]:
        return [
            e
            for e in self.walk()
            if e.tag == tag and (cls is None or cls in e.attrs.get("class", "").split())
        ]

    def within(self, tag: str) -> bool:
        node = self.parent
        while node is not None and node.tag != tag:
            node = node.parent
        return node is not None


class _Tree(HTMLParser):
    """Chromium's serialised DOM as a tree (void HTML elements have no end tag)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.node = Element("#document", {})

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: v or "" for k, v in attrs}, self.node)
        self.node.children.append(element)
        if tag not in VOID:
            self.node = element

    def handle_startendtag(self, tag, attrs):
        self.node.children.append(Element(tag, {k: v or "" for k, v in attrs}, self.node))

    def handle_endtag(self, tag):
        node = self.node
        while node.parent is not None and node.tag != tag:
            node = node.parent
        assert node.tag == tag, f"</{tag}> closes nothing"
        self.node = node.parent or self.root

    def handle_data(self, data):
        self.node.children.append(data)


@pytest.fixture(scope="module")
def dom(chromium, page, tmp_path_factory) -> Element:
    profile = tmp_path_factory.mktemp("profile")
    proc = run_chromium(chromium, profile, "--dump-dom", page.as_uri())
    tree = _Tree()
    tree.feed(proc.stdout.decode("utf-8"))
    tree.close()
    return tree.root


def test_the_page_renders_its_sections(dom):
    assert dom.all("title")[0].text() == "Evaluation report: run.jsonl"
    assert [h.text() for h in dom.all("h1")] == ["Evaluation report: run.jsonl"]
    assert [h.text() for h in dom.all("h2")] == [
        "Summary",
        "Distribution",
        "Lowest scores (5)",
        "Failures (1)",
    ]
    assert dom.all("p", "sub")[0].text() == "6 items: 5 scored, 1 failed."
    for table in ("summary", "limited", "lowest", "failures"):
        assert len(dom.all("table", table)) == 1, table
    lowest = dom.all("table", "lowest")[0]
    assert len(lowest.all("tbody")[0].all("tr")) == 5
    assert [card.text() for card in dom.all("div", "k")] == [
        "items",
        "ok",
        "failed",
        "mean score",
        "median score",
    ]


def test_the_charts_are_drawn(dom):
    svgs = dom.all("svg")
    assert len(svgs) == 2
    assert all(svg.within("figure") and svg.within("div") for svg in svgs)
    histogram, scatter = svgs
    assert histogram.all("title")[0].text() == "Histogram of scores, 10 bins"
    assert len(histogram.all("rect", "bar")) == 10
    counts = [int(t.text()) for t in histogram.all("text", "count")]
    assert sum(counts) == 5  # every ok item is in one bin
    assert scatter.all("title")[0].text() == "Alignment against coverage, one point per item"
    points = scatter.all("g", "point")
    assert len(points) == 4  # "</svg>" and "same-1" share a spot
    assert all(len(point.all("circle")) == 1 for point in points)
    assert [t.text() for t in scatter.all("text", "n")] == ["2"]
    assert len(dom.all("figcaption")) == 2


def test_nothing_runs_and_nothing_loads(dom):
    for element in dom.walk():
        assert element.tag not in LOADING_TAGS, element.tag
        for name in element.attrs:
            assert not name.startswith("on"), (element.tag, name)
            assert name not in LOADING_ATTRS, (element.tag, name)
    assert dom.all("script") == []


def test_hostile_text_shows_as_text(dom):
    # The lowest scores in order, then the failures table.
    ids = [cell.text() for cell in dom.all("td", "id")]
    assert ids == [HOSTILE_ID, "low-coverage", CLOSING_ID, "same-1", "perfect", FAILED_ID]
    reasons = [why.text() for why in dom.all("table", "lowest")[0].all("span", "why")]
    assert f"({HOSTILE_REASON})" in reasons
    assert f"({CLOSING_ID} not mentioned)" in reasons
    claims = dom.all("ul", "verdicts")[0].all("li")
    assert claims[0].text().startswith("It cost <b>9</b> million.")
    assert dom.all("b") == []
    failure = dom.all("table", "failures")[0].all("td")
    assert failure[-1].text() == FAILED_MESSAGE
    hover = [point.all("title")[0].text() for point in dom.all("g", "point")]
    assert any(f"\n{CLOSING_ID} (score 0.6)\nsame-1 (score 0.6)" in text for text in hover)
    assert any(f"\n{HOSTILE_ID} (score 0.25)" in text for text in hover)


# --------------------------------------------------------------------------- the picture


def _png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the decompressed scanlines of a PNG (enough to tell it is not blank)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, width, height, idat = 8, 0, 0, b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    return width, height, zlib.decompress(idat)


def test_a_screenshot_is_drawn(chromium, page, tmp_path):
    shot = tmp_path / "report.png"
    run_chromium(
        chromium,
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1200,2200",
        "--hide-scrollbars",
        page.as_uri(),
    )
    width, height, pixels = _png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 2200)
    # A blank or unstyled page has a handful of byte values; text, bars and points many.
    assert len(set(pixels)) > 100


# --------------------------------------------------------------------------- judge quality


def labelled_items(count: int = 80, seed: int = 3) -> list[dict]:
    """A judge that ranks faithful summaries higher but is overconfident, with tied P(true)
    (two places), a few items without a probability and one without a label."""
    rng = random.Random(seed)
    items = []
    for n in range(count):
        truth = rng.random() < 0.55
        p = min(1.0, max(0.0, round(rng.gauss(0.72 if truth else 0.45, 0.2), 2)))
        probabilities = None if n % 16 == 5 else [p, min(1.0, p + 0.1)]
        alignment = 1 if probabilities is None or p >= 0.5 else 0.5
        items.append(labelled(f"item-{n}", alignment, 1, {"faithful": truth}, probabilities))
    items.append(labelled("unlabelled", 1, 1, {}, [0.9]))
    return items


# Run inside a copy of the page only (the report itself holds no script): the boxes of the
# quality section's charts, as the browser laid them out, written into the DOM.
MEASURE = """<script>
const boxes = {};
for (const name of ["roc", "reliability"]) {
  const box = document.querySelector("svg." + name).getBoundingClientRect();
  boxes[name] = [box.width, box.height];
}
const section = document.getElementById("judge-quality").getBoundingClientRect();
boxes.section = [section.width, section.bottom];
const out = document.createElement("pre");
out.id = "boxes";
out.textContent = JSON.stringify(boxes);
document.body.append(out);
</script>"""
# Only the judge-quality section, for its picture.
ONLY_QUALITY = "<style>body > :not(#judge-quality) { display: none; }</style>"


def _measure(chromium: str, page: Path, profile: Path) -> tuple[Element, dict]:
    """The page's DOM after MEASURE ran in a copy of it, and the boxes it measured."""
    measured = page.with_name(f"measured-{page.name}")
    text = page.read_text(encoding="utf-8")
    measured.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    proc = run_chromium(
        chromium, profile, "--dump-dom", "--window-size=1120,900", measured.as_uri()
    )
    tree = _Tree()
    tree.feed(proc.stdout.decode("utf-8"))
    tree.close()
    return tree.root, json.loads(tree.root.all("pre")[-1].text())


def test_the_quality_charts_are_drawn(chromium, tmp_path):
    results = write_jsonl(tmp_path / "labelled.jsonl", labelled_items())
    page = tmp_path / "labelled.html"
    write_report(results, page)
    dom, boxes = _measure(chromium, page, tmp_path / "profile")
    section = next(s for s in dom.all("section") if s.attrs.get("id") == "judge-quality")
    roc, reliability = section.all("svg")
    assert roc.all("title")[0].text().startswith("ROC curve, AUC 0.")
    assert len(roc.all("polyline", "curve")) == 1 and len(roc.all("g", "marker")) == 1
    assert reliability.all("g", "bin")
    assert "left out for having none" in section.all("figcaption")[0].text()
    for name in ("roc", "reliability"):
        width, height = boxes[name]
        assert width > 300 and height > 300, (name, boxes)
    if os.environ.get("OFFLINE_SCORER_SCREENSHOT") == "1":
        alone = tmp_path / "quality.html"
        text = page.read_text(encoding="utf-8")
        alone.write_text(text.replace("</head>", ONLY_QUALITY + "</head>"), encoding="utf-8")
        _, laid_out = _measure(chromium, alone, tmp_path / "profile")
        width, height = 1120, math.ceil(laid_out["section"][1]) + 24
        run_chromium(
            chromium,
            tmp_path / "profile",
            f"--screenshot={QUALITY_SHOT}",
            f"--window-size={width},{height}",
            "--hide-scrollbars",
            alone.as_uri(),
        )
        assert _png_pixels(QUALITY_SHOT.read_bytes())[:2] == (width, height)
