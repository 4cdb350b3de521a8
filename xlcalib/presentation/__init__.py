"""How result sheets look: which sheets, in which order, with which formats, meanings, verdicts and charts.

One place for the CLI, the macros and the xlwings path: every function here
turns result objects into :class:`~xlcalib.workbook.base.SheetSpec` data
(pure pandas; no openpyxl, no xlwings), and each workbook backend renders the
descriptions the same way.  Why: a panel decides from, and pastes into its
minutes, what it *sees* — ranked objects with an honest ±, the funding line,
one final decision per object, plain-words verdicts — so how a number is shown
is part of getting it right.

Print rules, for every result sheet: a table prints on its own (its print
area is the table and the lines under it) one page wide, landscape (the
Summary and long narrow lists portrait), at 9 pt or larger on A4 and Letter
(:meth:`~xlcalib.workbook.base.SheetSpec.print_scale`; long headers wrap
rather than widen a column); every chart prints on a landscape page of its
own (a "... chart" sheet after the table it draws), never shrinking a table;
the header row repeats on every page, the page number is in the footer.

Words and symbols, for every result sheet: every ± is half the width of the
interval at the run's level (95% unless the Settings say otherwise) and its
header says so; true / false cells read "yes" / "no"; counts are whole numbers;
technical terms carry their plain name, with the technical name beside it on
Diagnostics; every column's meaning is a comment on its header.

The modules: :mod:`.common` (formats, the ± rule, chart pages), :mod:`.ranking`
(the Ranking and its chart), :mod:`.lottery` (the lottery's public record), :mod:`.rasch` (the ordinal model's
sheets: Measures, Severities, Categories, the Wright map and category curves), :mod:`.panel` (Biases, Values, Residuals, Checks,
Diagnostics, Design, Next reads), :mod:`.behaviour` (Fit, Unexpected, Groups,
the feedback letter), :mod:`.summary` (the Summary and the calibration
workbook's sheets in reading order), :mod:`.reports` (reliability, agreement,
ordinal, ground truth) and :mod:`.imports` (review exports).
"""
from .behaviour import BehaviourTables, behaviour_summary_rows, feedback_sheet, fit_sheet, groups_sheets, unexpected_sheet
from .common import COLUMNS, COUNT, MIXED, PROB, PVALUE, RELIAB, SCORE, SIGNED, chart_page, pm_header, verdict_reliability
from .imports import (
    import_preamble,
    import_report_sheet,
    import_sheet,
    import_summary_rows,
    imported_evaluations_sheet,
    with_import_rows,
)
from .panel import (
    assessor_sentence,
    assessors_sheet,
    bias_sentences,
    biases_chart,
    checks_from_warnings,
    checks_sheet,
    design_sheet,
    diagnostics_sheet,
    next_reads_sheet,
    residuals_sheet,
    stat_verdict,
    values_sheet,
)
from .lottery import lottery_frame, lottery_sheet
from .rasch import rasch_sheets
from .ranking import DECISION_COLOURS, decision_counts, ranking_chart, ranking_footer, ranking_sheet, ranking_table
from .reports import (
    AGREEMENT_BANDS,
    AGREEMENT_MEANINGS,
    DOMINANT_SHARE,
    KAPPA_MEANINGS,
    PROPHECY_MAX_K,
    WEIGHT_WORDS,
    agreement_band,
    agreement_pairs_sheet,
    agreement_sheet,
    ground_truth_sheets,
    headline_agreement,
    headline_reliability,
    krr_summary_sheet,
    ordinal_sheets,
    prophecy_k_max,
    reliability_sheets,
    standard_error_words,
    svensson_sheet,
    svensson_verdicts,
    verdict_agreement,
)
from .summary import calibration_sheets, decision_rows, reliability_of_averages, summary_sheet

__all__ = [
    "AGREEMENT_BANDS", "AGREEMENT_MEANINGS", "COLUMNS", "COUNT", "DECISION_COLOURS", "DOMINANT_SHARE",
    "KAPPA_MEANINGS", "MIXED", "PROB", "PROPHECY_MAX_K", "PVALUE", "RELIAB", "SCORE", "SIGNED",
    "WEIGHT_WORDS", "BehaviourTables", "agreement_band", "agreement_pairs_sheet", "agreement_sheet",
    "assessor_sentence", "assessors_sheet", "behaviour_summary_rows", "bias_sentences", "biases_chart",
    "calibration_sheets", "chart_page", "checks_from_warnings", "checks_sheet", "decision_counts", "decision_rows",
    "design_sheet", "diagnostics_sheet", "feedback_sheet", "fit_sheet", "ground_truth_sheets", "groups_sheets",
    "headline_agreement", "headline_reliability", "import_preamble", "rasch_sheets", "import_report_sheet", "import_sheet",
    "import_summary_rows", "imported_evaluations_sheet", "krr_summary_sheet", "lottery_frame", "lottery_sheet",
    "next_reads_sheet", "ordinal_sheets", "pm_header", "prophecy_k_max", "ranking_chart", "ranking_footer", "ranking_sheet",
    "ranking_table", "reliability_of_averages", "reliability_sheets", "residuals_sheet", "standard_error_words",
    "stat_verdict", "summary_sheet", "svensson_sheet", "svensson_verdicts", "unexpected_sheet", "values_sheet",
    "verdict_agreement", "verdict_reliability", "with_import_rows",
]
