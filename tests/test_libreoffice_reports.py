"""The reports and the input templates printed as a reader sees them: LibreOffice Calc (headless) prints the
ordinal and reliability result workbooks and the Assignment template to PDF, and ``pdftotext -bbox`` measures
every page.

Checked by code: the median word height (the height of the words' boxes, in points) is 9 pt or more on every
report page (their first pages above all: Svensson, kRR, Agreement); the verdicts and the headline print whole;
the ROC chart's axes are both 0-100%; the Assignment template's numbers print inside their own header's columns.
Skipped, with the reason, when LibreOffice or poppler-utils is missing (.ci/run installs them).
"""
from __future__ import annotations

import html
import re
import shutil
import statistics
import subprocess
from dataclasses import dataclass

import openpyxl
import pytest

from xlcalib.cli import main
from xlcalib.templates import build

from .test_templates import filled_ordinal, filled_reliability

#: The smallest median word height (points) a printed table may have.
MIN_WORD_HEIGHT = 9.0

pytestmark = pytest.mark.skipif(
    (shutil.which("soffice") or shutil.which("libreoffice")) is None or shutil.which("pdftotext") is None,
    reason="LibreOffice (soffice) and poppler-utils (pdftotext) not installed; .ci/run installs them")


@dataclass
class Word:
    text: str
    x_min: float
    y_min: float
    x_max: float
    y_max: float

    @property
    def height(self) -> float:
        return self.y_max - self.y_min


@dataclass
class Page:
    sheet: str
    number: int
    words: list

    @property
    def median_height(self) -> float:
        return statistics.median(w.height for w in self.words)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>')


def printed_pages(pdf) -> list[Page]:
    """Each page's words with their boxes, named by the footer every sheet prints ('<sheet> - page i of n')."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for body in re.findall(r"<page[^>]*>(.*?)</page>", xml, re.S):
        words = [Word(html.unescape(t), float(a), float(b), float(c), float(d))
                 for a, b, c, d, t in _WORD.findall(body)]
        bottom = max(w.y_min for w in words)
        footer = " ".join(w.text for w in words if w.y_min > bottom - 1)
        found = re.search(r"(.+) - page (\d+) of \d+$", footer)
        assert found, footer
        pages.append(Page(found.group(1), int(found.group(2)), [w for w in words if w.y_min <= bottom - 1]))
    return pages


def _flat(text: str) -> str:
    return " ".join(text.split())


def column_text(pages: list[Page], header: str, next_header: str) -> str:
    """The text printed in one column of a table, line by line (the PDF's words run across the columns of a
    line): the words between the column's header and the next one's."""
    out = []
    for page in pages:
        left = next(w for w in page.words if w.text == header)
        right = next(w for w in page.words if w.text == next_header and abs(w.y_min - left.y_min) < 1)
        inside = [w for w in page.words if left.x_min - 2 <= w.x_min < right.x_min - 2 and w.y_min > left.y_min + 1]
        out += [w.text for w in sorted(inside, key=lambda w: (round(w.y_min), w.x_min))]
    return " ".join(out)


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """The ordinal and reliability result workbooks (the raters under their own headers) and the Assignment
    template, printed to PDF by one LibreOffice start."""
    tmp = tmp_path_factory.mktemp("print")
    ordinal = filled_ordinal(tmp / "ordinal.xlsx")
    book = openpyxl.load_workbook(ordinal)
    book["Ratings"]["B1"], book["Ratings"]["C1"] = "Radiologist A", "Radiologist B"
    book.save(ordinal)
    reliability = filled_reliability(tmp / "reliability.xlsx")[0]
    files = {"ordinal": tmp / "ordinal_result.xlsx", "reliability": tmp / "reliability_result.xlsx"}
    assert main(["report", "ordinal", str(ordinal), "-o", str(files["ordinal"])]) == 0
    assert main(["report", "reliability", str(reliability), "-o", str(files["reliability"])]) == 0
    files["assignment"] = build("panel_calibration", tmp / "assignment.xlsx", assessors=12, objects=60,
                                assignment=True)[0]
    out = tmp / "pdf"
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    proc = subprocess.run([soffice, f"-env:UserInstallation={(tmp / 'profile').as_uri()}", "--headless", "--convert-to",
                           "pdf", "--outdir", str(out), *map(str, files.values())], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {kind: (path, printed_pages(out / (path.stem + ".pdf"))) for kind, path in files.items()}


REPORT_SHEETS = {"ordinal": ("Svensson", "MeanRanks", "ROC", "Agreement"),
                 "reliability": ("kRR", "ICC", "kRR curve", "Agreement", "Agreement pairs")}


@pytest.mark.parametrize("kind", list(REPORT_SHEETS))
def test_report_pages_print_at_a_readable_size(printed, kind):
    """Every page of every result table, the first pages included, has a median word height of 9 pt or more."""
    _, pages = printed[kind]
    heights = {(p.sheet, p.number): p.median_height for p in pages if p.sheet in REPORT_SHEETS[kind]}
    assert {sheet for sheet, _ in heights} == set(REPORT_SHEETS[kind])
    small = {page: round(h, 1) for page, h in heights.items() if h < MIN_WORD_HEIGHT}
    assert not small, f"printed smaller than {MIN_WORD_HEIGHT} pt: {small}"


def test_svensson_page_prints_its_verdicts_whole(printed):
    path, pages = printed["ordinal"]
    rows = list(openpyxl.load_workbook(path)["Svensson"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "measure")
    verdicts = [r[5] for r in rows[header + 1:] if r[0] and r[5]]
    svensson = [p for p in pages if p.sheet == "Svensson"]
    text = _flat(" ".join(p.text for p in svensson))
    printed_verdicts = column_text(svensson, "verdict", "meaning")
    assert any("Radiologist B uses lower categories than Radiologist A" in v for v in verdicts)
    missing = [v for v in verdicts if _flat(v) not in printed_verdicts]
    assert not missing, missing
    assert "67.8%" in text.split() and "59" in text.split()  # PA as a percentage, the count as an integer
    assert "59.000" not in text and "67.797" not in text


def test_roc_chart_axes_agree_and_the_table_prints_alone(printed):
    """Both ROC axes in percent from 0 to 100%; the chart on a page of its own, the ROC table without it."""
    path, pages = printed["ordinal"]
    chart = openpyxl.load_workbook(path)["ROC chart"]._charts[0]
    assert (chart.x_axis.scaling.min, chart.x_axis.scaling.max) == (chart.y_axis.scaling.min, chart.y_axis.scaling.max)
    assert chart.x_axis.number_format.formatCode == chart.y_axis.number_format.formatCode == "0%"
    chart_words = " ".join(p.text for p in pages if p.sheet == "ROC chart").split()
    assert chart_words.count("100%") == 2 and chart_words.count("0%") == 2
    assert "Radiologist B (cumulative share)" in _flat(" ".join(chart_words))  # the series keeps its name
    assert len([p for p in pages if p.sheet == "ROC chart"]) == 1


def test_krr_page_leads_with_one_headline(printed):
    _, pages = printed["reliability"]
    first = [p for p in pages if p.sheet in REPORT_SHEETS["reliability"]][0]
    assert first.sheet == "kRR" and first.number == min(p.number for p in pages if p.sheet == "kRR")
    text = _flat(first.text)
    assert text.count("(quote this)") == 1 and "Why the cross-checks differ from the headline" in text
    assert "why Spearman-Brown" not in text


def test_assignment_numbers_print_under_their_own_headers(printed):
    """Each number of the Max load and Reads wanted columns prints within its header's width, never under the
    next column's header; the page is readable."""
    _, pages = printed["assignment"]
    page = next(p for p in pages if p.sheet == "Assignment")
    assert page.median_height >= MIN_WORD_HEIGHT
    header_y = min(w.y_min for w in page.words)
    headers = [w for w in page.words if abs(w.y_min - header_y) < 1]
    for first, second in (("Max", "load"), ("Reads", "wanted")):
        left = next(w for w in headers if w.text == first)
        right = next(w for w in headers if w.text == second and w.x_min > left.x_min)
        numbers = [w for w in page.words if w.text.isdigit() and w.y_min > header_y + 1
                   and left.x_min - 2 < w.x_max < right.x_max + 40]
        assert numbers, first
        assert all(left.x_min - 1 <= w.x_min and w.x_max <= right.x_max + 1 for w in numbers), first
