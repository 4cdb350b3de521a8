"""Macro entry points for panel secretaries: one implementation, two workbook backends.

``calibrate_panel(book)`` reads the *Evaluations* sheet of a book, runs
:func:`xlcalib.calibrate`, and (re)writes the result sheets Values, Biases,
Residuals and Diagnostics.  ``book`` is either an openpyxl ``Workbook`` (CLI,
tests) or an xlwings ``Book`` (the *Run main* button in Excel); a small
adapter gives both the same three operations: read a sheet's cells, write a
table to a sheet (replacing only our own result sheets), add native charts.

Re-running replaces only the result sheets; input sheets are never touched.
Every result sheet starts with the run's settings and time, so a printout is
self-describing.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .calibration import DEFAULT_LEVELS, CalibrationResult, calibrate
from .errors import InputError
from .inputs import evaluations_from_rows, is_blank, parse_choice, parse_number

RESULT_SHEETS = ("Values", "Biases", "Residuals", "Diagnostics")


@dataclass
class CalibrationSettings:
    """What the run used; written on every result sheet."""

    gauge: str = "weighted"
    anomaly_threshold: float = 3.0
    per_component: bool = False
    levels: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_LEVELS))
    sheet: str = "Evaluations"

    def describe(self) -> str:
        return (f"gauge={self.gauge}; anomaly threshold={self.anomaly_threshold:g}; per_component={self.per_component}; "
                f"levels=" + ", ".join(f"{k}:{v:g}" for k, v in self.levels.items()))


# ----------------------------------------------------------------------------
# Backend adapters
# ----------------------------------------------------------------------------
class _OpenpyxlBook:
    def __init__(self, book):
        self.book = book

    def sheet_names(self) -> list[str]:
        return list(self.book.sheetnames)

    def read_rows(self, sheet: str) -> tuple[list[list[Any]], int, int]:
        from openpyxl.utils.cell import range_boundaries

        ws = self.book[self._name(sheet)]
        if ws.tables:
            min_col, min_row, max_col, max_row = range_boundaries(next(iter(ws.tables.values())).ref)
            # rows typed just below a table belong to it (Excel would have extended the table)
            max_row = max(max_row, ws.max_row)
        else:
            min_col, min_row, max_col, max_row = ws.min_column, ws.min_row, ws.max_column, ws.max_row
        rows = [list(r) for r in ws.iter_rows(min_row=min_row, max_row=max_row, min_col=min_col, max_col=max_col,
                                               values_only=True)]
        return rows, min_row, min_col

    def _name(self, sheet: str) -> str:
        for name in self.book.sheetnames:
            if name.lower() == sheet.lower():
                return name
        raise InputError(f"no sheet named '{sheet}' (sheets: {', '.join(self.book.sheetnames)})")

    def write_table(self, sheet: str, preamble: list[list[Any]], frame: pd.DataFrame):
        from openpyxl.styles import Font, PatternFill

        from .workbook.openpyxl_io import _write_cell

        if sheet in self.book.sheetnames:
            del self.book[sheet]
        ws = self.book.create_sheet(sheet)
        self._columns = getattr(self, "_columns", {})
        self._columns[sheet] = list(frame.columns)
        for i, row in enumerate(preamble, start=1):
            for j, value in enumerate(row, start=1):
                _write_cell(ws, i, j, value).font = Font(italic=True)
        top = len(preamble) + 2
        for j, column in enumerate(frame.columns, start=1):
            _write_cell(ws, top, j, column).font = Font(bold=True)
        values = frame.to_numpy(dtype=object)
        flag_col = list(frame.columns).index("anomalous") if "anomalous" in frame.columns else None
        fill = PatternFill("solid", fgColor="FFC7CE")
        for i, row in enumerate(values, start=top + 1):
            for j, value in enumerate(row, start=1):
                cell = _write_cell(ws, i, j, value)
                if flag_col is not None and bool(row[flag_col]):
                    cell.fill = fill
        for j, column in enumerate(frame.columns, start=1):
            ws.column_dimensions[_letter(j)].width = max(12, min(40, len(str(column)) + 4))
        ws.freeze_panes = ws.cell(row=top + 1, column=1)
        return ws, top

    def add_charts(self, result: CalibrationResult, raw_means: pd.Series, tops: dict[str, int]):
        from openpyxl.chart import BarChart, Reference, ScatterChart, Series
        from openpyxl.chart.error_bar import ErrorBars
        from openpyxl.chart.data_source import NumDataSource, NumRef

        ws_b = self.book["Biases"]
        top = tops["Biases"]
        n = len(result.biases)
        chart = BarChart()
        chart.title = "Assessor bias (score units) with robustness bound"
        chart.y_axis.title = "bias"
        data = Reference(ws_b, min_col=2, min_row=top, max_row=top + n)
        cats = Reference(ws_b, min_col=1, min_row=top + 1, max_row=top + n)
        chart.add_data(data, titles_from_data=True)
        chart.set_categories(cats)
        bound_ref = NumRef(f"'Biases'!$C${top + 1}:$C${top + n}")
        chart.series[0].errBars = ErrorBars(errDir="y", errBarType="both", errValType="cust", noEndCap=False,
                                            plus=NumDataSource(numRef=bound_ref), minus=NumDataSource(numRef=bound_ref))
        chart.width, chart.height = 24, 10
        ws_b.add_chart(chart, "H2")

        ws_v = self.book["Values"]
        top = tops["Values"]
        m = len(result.values)
        scatter = ScatterChart()
        scatter.title = "Raw mean vs calibrated value per object"
        scatter.style = 13
        scatter.x_axis.title = "raw mean score"
        scatter.y_axis.title = "calibrated value"
        columns = list(self._columns["Values"])
        xs = Reference(ws_v, min_col=columns.index("raw_mean") + 1, min_row=top + 1, max_row=top + m)
        ys = Reference(ws_v, min_col=columns.index("value") + 1, min_row=top + 1, max_row=top + m)
        series = Series(ys, xs, title="objects")
        series.marker.symbol = "circle"
        series.graphicalProperties.line.noFill = True
        scatter.series.append(series)
        scatter.width, scatter.height = 18, 10
        ws_v.add_chart(scatter, "I2")

        bars = BarChart()
        bars.title = "Robustness bound per object (score units)"
        bars.add_data(Reference(ws_v, min_col=3, min_row=top, max_row=top + m), titles_from_data=True)
        bars.set_categories(Reference(ws_v, min_col=1, min_row=top + 1, max_row=top + m))
        bars.width, bars.height = 24, 10
        ws_v.add_chart(bars, "I24")


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


class _XlwingsBook:
    """Thin adapter over an xlwings Book (used when the workbook's *Run main* calls us)."""

    def __init__(self, book):
        self.book = book

    def sheet_names(self) -> list[str]:
        return [s.name for s in self.book.sheets]

    def read_rows(self, sheet: str):
        ws = self.book.sheets[sheet]
        rng = ws.used_range
        values = rng.options(ndim=2).value
        return values, rng.row, rng.column

    def write_table(self, sheet: str, preamble, frame: pd.DataFrame):
        names = self.sheet_names()
        ws = self.book.sheets[sheet] if sheet in names else self.book.sheets.add(sheet, after=self.book.sheets[-1])
        ws.clear()
        from .workbook.openpyxl_io import safe_cell_value

        rows = [[safe_cell_value(v) for v in r] for r in preamble] + [[]] + [list(frame.columns)] + [
            [safe_cell_value(v) for v in r] for r in frame.to_numpy(dtype=object)]
        width = max(len(r) for r in rows)
        ws.range("A1").options(ndim=2).value = [r + [None] * (width - len(r)) for r in rows]
        # text that looks like a formula stays text: Excel's NumberFormat "@" on written label columns
        return ws, len(preamble) + 2

    def add_charts(self, result, raw_means, tops):
        """Native Excel charts through xlwings' chart API (error bars need Excel's object model: CLI/openpyxl only)."""
        for sheet, last_col, kind, title, anchor_col in (
                ("Biases", 2, "bar_clustered", "Assessor bias (score units)", 8),
                ("Values", 3, "column_clustered", "Calibrated value and robustness bound per object", 9)):
            ws = self.book.sheets[sheet]
            for old in list(ws.charts):  # a re-run replaces its charts too
                old.delete()
            n = len(result.biases if sheet == "Biases" else result.values)
            top = tops[sheet]
            chart = ws.charts.add(left=ws.range((2, anchor_col)).left, top=ws.range((2, anchor_col)).top,
                                  width=480, height=280)
            chart.chart_type = kind
            chart.set_source_data(ws.range((top, 1), (top + n, last_col)))
            chart.name = title


def _adapter(book):
    module = type(book).__module__
    if module.startswith("openpyxl"):
        return _OpenpyxlBook(book)
    if module.startswith("xlwings"):
        return _XlwingsBook(book)
    raise TypeError(f"unsupported book type {type(book).__name__}")


# ----------------------------------------------------------------------------
# Settings sheets written by the template
# ----------------------------------------------------------------------------
def _read_settings(adapter, defaults: CalibrationSettings) -> CalibrationSettings:
    settings = CalibrationSettings(**{**defaults.__dict__, "levels": dict(defaults.levels)})
    names = {n.lower(): n for n in adapter.sheet_names()}
    if "settings" in names:
        rows, first_row, _ = adapter.read_rows(names["settings"])
        for offset, row in enumerate(rows):
            if len(row) < 2 or is_blank(row[0]):
                continue
            key = str(row[0]).strip().lower()
            where = f"sheet Settings, row {first_row + offset}"
            if key.startswith("gauge"):
                settings.gauge = parse_choice(row[1], "gauge", ("weighted", "simple"), settings.gauge)
            elif key.startswith("anomaly"):
                settings.anomaly_threshold = parse_number(row[1], where + " (anomaly threshold)")
    if "levels" in names:
        rows, first_row, _ = adapter.read_rows(names["levels"])
        table = {}
        for offset, row in enumerate(rows[1:], start=1):
            if len(row) < 2 or is_blank(row[0]):
                continue
            table[str(row[0]).strip()] = parse_number(row[1], f"sheet Levels, row {first_row + offset}, column B (SD)")
        if table:
            settings.levels = table
    return settings


def run_calibration(rows, first_row: int, first_column: int, settings: CalibrationSettings):
    """Cells of an evaluations block -> (result, evaluations frame); core errors re-pointed at sheet rows."""
    frame, kind, sheet_rows = evaluations_from_rows(rows, settings.sheet, first_row, first_column)
    try:
        result = calibrate(frame, levels=settings.levels if kind == "level" else None, gauge=settings.gauge,
                           per_component=settings.per_component, anomaly_threshold=settings.anomaly_threshold)
    except InputError as exc:
        if "row" in exc.where and isinstance(exc.where["row"], int):
            sheet_row = sheet_rows[exc.where["row"]]
            message = re.sub(r"\brows? ([\d, ]+) of the evaluations",
                             lambda m: _sheet_rows_text(m.group(1), sheet_rows, settings.sheet), exc.message)
            raise InputError(message, {**exc.where, "sheet_row": sheet_row}) from None
        raise
    return result, frame


def _sheet_rows_text(numbers: str, sheet_rows: list[int], sheet: str) -> str:
    """'3, 5' (1-based positions in the evaluations) -> 'sheet S, rows 12, 14' (sheet rows)."""
    rows = [sheet_rows[int(n) - 1] for n in re.findall(r"\d+", numbers)]
    return f"sheet {sheet}, row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))}"


def result_frames(result: CalibrationResult, frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    frames = result.to_frames()
    raw = frame.groupby("object", sort=False)["score"].mean()
    values = frames["Values"]
    values["raw_mean"] = values["object"].map(raw).to_numpy()
    frames["Values"] = values
    return frames


def warnings_for(result: CalibrationResult) -> list[str]:
    """Plain-language warnings for the Diagnostics sheet."""
    out = []
    s = result.stats
    if s["n_components"] > 1:
        out.append(f"The panel splits into {s['n_components']} groups that share no objects: values of different groups "
                   "are not comparable.")
    C_o = result.values["total_confidence"]
    low = C_o < 0.25 * C_o.median()
    if low.any():
        out.append(f"{int(low.sum())} object(s) have under a quarter of the median total confidence: "
                   + ", ".join(map(str, C_o.index[low][:10])) + (" ..." if low.sum() > 10 else ""))
    mu2 = s["mu2"] if not isinstance(s["mu2"], list) else min(s["mu2"])
    if np.isfinite(mu2) and mu2 < 0.1:
        out.append(f"mu2 = {mu2:.3g} is small: assessors overlap little, so biases are poorly determined.")
    n_anom = int(result.residuals["anomalous"].sum())
    if n_anom:
        out.append(f"{n_anom} evaluation(s) are anomalous (see Residuals, highlighted).")
    return out


def compute_calibration(book, settings: CalibrationSettings | None = None, **overrides):
    """Read settings and evaluations from *book*; return (result, frames, settings) without writing.

    ``overrides`` (e.g. ``gauge="simple"`` from the command line) beat the book's Settings sheet.
    """
    adapter = _adapter(book)
    settings = _read_settings(adapter, settings or CalibrationSettings())
    for key, value in overrides.items():
        setattr(settings, key, value)
    rows, first_row, first_column = adapter.read_rows(settings.sheet)
    result, frame = run_calibration(rows, first_row, first_column, settings)
    frames = result_frames(result, frame)
    warn = warnings_for(result)
    if warn:
        frames["Diagnostics"] = pd.concat(
            [frames["Diagnostics"], pd.DataFrame({"statistic": ["warning"] * len(warn), "value": warn,
                                                  "meaning": [""] * len(warn)})], ignore_index=True)
    return result, frames, settings


def write_calibration(book, result: CalibrationResult, frames: dict[str, pd.DataFrame],
                      settings: CalibrationSettings, *, now: _dt.datetime | None = None) -> None:
    """(Re)write the result sheets and charts into *book*; input sheets are left alone."""
    adapter = _adapter(book)
    stamp = (now or _dt.datetime.now()).replace(microsecond=0).isoformat(sep=" ")
    preamble = [["xlcalib calibration", f"run {stamp}"], ["settings", settings.describe()]]
    tops = {}
    for name in RESULT_SHEETS:
        _, tops[name] = adapter.write_table(name, preamble, frames[name])
    adapter.add_charts(result, frames["Values"]["raw_mean"], tops)


def calibrate_panel(book, settings: CalibrationSettings | None = None, *, now: _dt.datetime | None = None):
    """Run the calibration exercise in *book* (openpyxl Workbook or xlwings Book); returns the result."""
    result, frames, settings = compute_calibration(book, settings)
    write_calibration(book, result, frames, settings, now=now)
    return result


def main():  # pragma: no cover - called by the xlwings "Run main" button via the template's .py
    import xlwings as xw

    calibrate_panel(xw.Book.caller())


# ----------------------------------------------------------------------------
# The other exercises: reliability, ordinal agreement, uncertain ground truth
# ----------------------------------------------------------------------------
def _preamble(title: str, settings: str, now) -> list[list[Any]]:
    stamp = (now or _dt.datetime.now()).replace(microsecond=0).isoformat(sep=" ")
    return [[f"xlcalib {title}", f"run {stamp}"], ["settings", settings]]


def _grid(adapter, sheet: str, first_data_column: int = 2):
    """A sheet whose first row names the columns and first column names the items -> (item names, values block)."""
    rows, first_row, first_column = adapter.read_rows(sheet)
    rows = [list(r) for r in rows]
    while rows and all(is_blank(c) for c in rows[-1]):
        rows.pop()
    if len(rows) < 2:
        raise InputError(f"sheet {sheet} has no data rows")
    body = rows[1:]
    return [r[0] for r in body], [r[first_data_column - 1:] for r in body], first_row


def _ratings_matrix(adapter, sheet: str) -> np.ndarray:
    from .inputs import number_grid

    names, block, first_row = _grid(adapter, sheet)
    keep = [i for i, row in enumerate(block) if not all(is_blank(c) for c in row)]
    if not keep:
        raise InputError(f"sheet {sheet} has no ratings")
    try:
        return number_grid([block[i] for i in keep], sheet)
    except InputError as exc:  # re-point "row r, column c of the Ratings range" at the sheet's cell
        from .inputs import column_letter

        def cell(m):
            r, c = int(m.group(1)), int(m.group(2))
            return f"sheet {sheet}, cell {column_letter(c + 1)}{first_row + 1 + keep[r - 1]}"

        raise InputError(re.sub(r"row (\d+), column (\d+) of the \S+ range", cell, exc.message), exc.where) from None


def reliability_report(book, *, now=None, n_boot: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Ratings (+ optional Replication2) -> sheets ICC, kRR, kRR curve (with a chart)."""
    from . import reliability as rel

    adapter = _adapter(book)
    x = _ratings_matrix(adapter, "Ratings")
    names = {n.lower(): n for n in adapter.sheet_names()}
    rep = None
    if "replication2" in names:
        try:
            rep = _ratings_matrix(adapter, names["replication2"])
        except InputError as exc:
            if "has no ratings" not in exc.message and "no data rows" not in exc.message:
                raise
    table = rel.icc_table(x).reset_index()
    boot = rel.krr_bootstrap(x, n_boot=n_boot, seed=seed)
    summary = pd.DataFrame({"statistic": ["items", "raters (columns)", "ratings", "ICC(1) single rating", "ICC(1k) mean rating",
                                          "kRR bootstrap (mean of item means)", "kRR CI low", "kRR CI high",
                                          "Krippendorff alpha (interval)", "note"],
                            "value": [x.shape[0], x.shape[1], int((~np.isnan(x)).sum()), table.loc[0, "ICC"],
                                      table.loc[3, "ICC"], boot.estimate, boot.ci_low, boot.ci_high,
                                      rel.krippendorff_alpha(x, "interval"), table.attrs.get("note") or ""]})
    curve_note = ""
    if rep is not None and rep.shape[0] != x.shape[0]:
        curve_note = f"Replication2 has {rep.shape[0]} items, Ratings {x.shape[0]}: empirical curve left out"
        rep = None
    if rep is not None and (np.isnan(x).any() or np.isnan(rep).any()):
        curve_note = "the empirical curve needs complete replications (a rating is missing): left out"
        rep = None
    curve = rel.krr_curve(x, replication=rep)
    if curve_note:
        summary.loc[len(summary)] = ["kRR curve", curve_note]
    frames = {"ICC": table, "kRR": summary, "kRR curve": curve}
    pre = _preamble("reliability", f"bootstrap replicates {n_boot}, seed {seed}, CI 95%", now)
    tops = {name: adapter.write_table(name, pre, frame)[1] for name, frame in frames.items()}
    if isinstance(adapter, _OpenpyxlBook):
        _line_chart(adapter.book["kRR curve"], tops["kRR curve"], len(curve), list(curve.columns),
                    "Reliability of the mean of k ratings", "k raters", "reliability")
    return frames


def _line_chart(ws, top: int, n: int, columns: list[str], title: str, x_title: str, y_title: str, anchor="H2"):
    from openpyxl.chart import Reference, ScatterChart, Series

    chart = ScatterChart()
    chart.title, chart.style = title, 13
    chart.x_axis.title, chart.y_axis.title = x_title, y_title
    xs = Reference(ws, min_col=1, min_row=top + 1, max_row=top + n)
    for j, name in enumerate(columns[1:], start=2):
        series = Series(Reference(ws, min_col=j, min_row=top + 1, max_row=top + n), xs, title=name)
        series.marker.symbol = "circle"
        chart.series.append(series)
    chart.width, chart.height = 18, 10
    ws.add_chart(chart, anchor)


def ordinal_report(book, *, now=None) -> dict[str, pd.DataFrame]:
    """Categories + Ratings (Object, Rater 1, Rater 2) -> sheets Svensson, MeanRanks, ROC (with a chart)."""
    from . import ordinal

    adapter = _adapter(book)
    cats_rows, _, _ = adapter.read_rows("Categories")
    categories = [str(r[0]).strip() for r in cats_rows[1:] if r and not is_blank(r[0])]
    _, block, _ = _grid(adapter, "Ratings")
    r1 = [None if is_blank(r[0]) else str(r[0]).strip() for r in block]
    r2 = [None if len(r) < 2 or is_blank(r[1]) else str(r[1]).strip() for r in block]
    result = ordinal.svensson(r1, r2, categories=categories or None)
    frames = {"Svensson": result.to_frame(),
              "MeanRanks": ordinal.mean_rank_table(r1, r2, categories or None),
              "ROC": ordinal.roc_points(r1, r2, categories or None)}
    pre = _preamble("ordinal agreement", f"categories in order: {', '.join(map(str, result.categories))}; "
                                         f"pairs used {result.n}, dropped (a rating missing) {result.n_dropped}", now)
    tops = {name: adapter.write_table(name, pre, frame)[1] for name, frame in frames.items()}
    if isinstance(adapter, _OpenpyxlBook):
        roc = frames["ROC"]
        from openpyxl.chart import Reference, ScatterChart, Series

        ws = adapter.book["ROC"]
        top = tops["ROC"]
        chart = ScatterChart()
        chart.title, chart.style = "ROC: cumulative category proportions", 13
        chart.x_axis.title, chart.y_axis.title = "rater 1", "rater 2"
        series = Series(Reference(ws, min_col=3, min_row=top + 1, max_row=top + len(roc)),
                        Reference(ws, min_col=2, min_row=top + 1, max_row=top + len(roc)), title="raters")
        series.marker.symbol = "circle"
        chart.series.append(series)
        ws.add_chart(chart, "F2")
    return frames


def ground_truth_report(book, *, now=None) -> dict[str, pd.DataFrame]:
    """Classes + Annotations (+ Predictions, Settings) -> sheets Certainty and UA metrics."""
    from . import ground_truth as gt

    adapter = _adapter(book)
    cls_rows, _, _ = adapter.read_rows("Classes")
    classes = [str(r[0]).strip() for r in cls_rows[1:] if r and not is_blank(r[0])]
    settings = {"reliability": 3.0, "samples": 1000, "seed": 0, "top k": 3}
    names = {n.lower(): n for n in adapter.sheet_names()}
    if "settings" in names:
        rows, first_row, _ = adapter.read_rows(names["settings"])
        for offset, row in enumerate(rows[1:], start=1):
            if len(row) >= 2 and not is_blank(row[0]) and str(row[0]).strip().lower() in settings:
                settings[str(row[0]).strip().lower()] = parse_number(row[1], f"sheet Settings, row {first_row + offset}")
    items, block, first_row = _grid(adapter, "Annotations")
    cases, kept = [], []
    for i, row in enumerate(block):
        case = [gt.parse_ranking(str(cell), classes, where=f"sheet Annotations, row {first_row + 1 + i}")
                for cell in row if not is_blank(cell)]
        if case:
            cases.append(case)
            kept.append(i)
    if not cases:
        raise InputError("sheet Annotations has no annotations")
    gamma, M, seed, k = settings["reliability"], int(settings["samples"]), int(settings["seed"]), int(settings["top k"])
    plaus = gt.irn(cases, len(classes))
    cert, labels = gt.certainty_from_concentration(gamma * plaus, M, seed)
    certainty = pd.DataFrame({"item": [items[i] for i in kept], "annotators": [len(c) for c in cases],
                              "IRN top-1": [classes[j] for j in plaus.argmax(axis=1)],
                              "certainty": cert, "most certain label": [classes[j] for j in labels]})
    frames = {"Certainty": certainty}
    summary_rows = [("items", len(cases)), ("mean annotation certainty", float(cert.mean())),
                    ("share of items with certainty < 0.5", float(np.mean(cert < 0.5))),
                    ("share of items with certainty < 0.9", float(np.mean(cert < 0.9)))]
    if "predictions" in names:
        _, pblock, prow = _grid(adapter, names["predictions"])
        lookup = {c.lower(): j for j, c in enumerate(classes)}
        preds = []
        for i in kept:
            row = [c for c in (pblock[i] if i < len(pblock) else []) if not is_blank(c)]
            unknown = [c for c in row if str(c).strip().lower() not in lookup]
            if unknown:
                raise InputError(f"sheet Predictions, row {prow + 1 + i}: unknown class '{unknown[0]}'")
            preds.append([lookup[str(c).strip().lower()] for c in row])
        if all(len(p) >= k for p in preds):
            draws = gt.sample_dirichlet(gamma * plaus, M, seed)
            top = np.array([p[:k] for p in preds])
            for kk in sorted({1, k}):
                ua = gt.ua_topk_accuracy(draws, top[:, :kk], kk)
                summary_rows += [(f"UA top-{kk} accuracy", ua.value), ("  SD over plausibility samples", ua.sd_over_samples),
                                 (f"top-{kk} accuracy against the IRN labels", gt.point_topk_accuracy(plaus, top[:, :kk], kk))]
        else:
            summary_rows.append(("note", f"UA metrics need {k} predictions on every annotated item"))
    frames["UA metrics"] = pd.DataFrame(summary_rows, columns=["statistic", "value"])
    pre = _preamble("uncertain ground truth", f"PrIRN, reliability {gamma:g}, samples {M}, seed {seed}, top k {k}", now)
    for name, frame in frames.items():
        adapter.write_table(name, pre, frame)
    return frames


REPORTS = {"calibration": calibrate_panel, "reliability": reliability_report, "ordinal": ordinal_report,
           "ground_truth": ground_truth_report}
