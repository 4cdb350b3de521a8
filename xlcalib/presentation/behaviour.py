"""Assessor behaviour: the tables computed once per result (fit, unexpected reads, separation, agreement,
groups), the Summary's lines on them, the Fit, Unexpected, Groups and Group bias sheets, and the printable
feedback letter per assessor."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..calibration.behaviour.verdict import is_pooled
from ..workbook.base import Column, SheetSpec
from .common import (
    COLUMNS,
    COUNT,
    PROB,
    PVALUE,
    SCORE,
    SIGNED,
    fmt_number,
    half_width,
    level_text,
    pm_header,
    words_for_flags,
)
from .panel import assessor_sentence


class BehaviourTables:
    """The assessor-behaviour tables of one result, computed once for every sheet that shows them.

    A table that cannot be computed for this result (e.g. separation of a panel fitted per component) is
    ``None`` with the reason in ``notes``.
    """

    def __init__(self, result, groups=None):
        from ..errors import InputError

        self.notes: dict[str, str] = {}
        self.groups = groups

        def attempt(key, make):
            try:
                return make()
            except InputError as exc:
                self.notes[key] = exc.message
                return None

        # readers pooled into the noise read one object each: no reader's consistency can be judged
        self.fit = None if is_pooled(result) else attempt("fit", result.fit_statistics)
        self.unexpected = attempt("unexpected", result.unexpected_reads)
        if self.unexpected is None:
            self.unexpected = pd.DataFrame(columns=["assessor", "object", "score", "expected", "value", "residual",
                                                    "z", "chance", "other_scores", "flagged", "in_words"])
        self.separation = attempt("separation", result.separation)
        self.exact_agreement = attempt("agreement", result.exact_agreement)
        self.group_bias = attempt("group_bias", lambda: result.group_bias(groups)) if groups is not None else None
        self.group_audit = attempt("group_audit", lambda: result.group_audit(groups)) if groups is not None else None

    @classmethod
    def of(cls, result, groups=None) -> "BehaviourTables":
        """The tables of *result*, with the group tables when the run read groups (object -> group)."""
        return cls(result, groups)


def behaviour_summary_rows(result, behaviour: BehaviourTables) -> list[tuple[str, str]]:
    """Summary lines on assessor behaviour: how finely the panel can rank, consistency, agreement, groups."""
    rows = []
    sep = behaviour.separation
    if sep is not None and is_pooled(result):  # readers pooled into the noise: no reader to separate, no Fit sheet
        words = sep.loc["objects", "in_words"]
        rows.append(("How finely the panel can rank", f"{words[0].upper()}{words[1:]}."))
    elif sep is not None:
        obj, ass = sep.loc["objects"], sep.loc["assessors"]
        rows.append(("How finely the panel can rank", f"{obj['in_words'][0].upper()}{obj['in_words'][1:]}; "
                                                      f"{ass['in_words']}. (See Fit.)"))
    fit = behaviour.fit
    if fit is not None:
        erratic = fit.index[fit["reading"].str.startswith("erratic")].astype(str).tolist()
        muted = fit.index[fit["reading"].str.startswith("too predictable")].astype(str).tolist()
        parts = []
        if erratic:
            parts.append(f"{len(erratic)} assessor(s) score erratically, beyond chance ({', '.join(erratic[:6])}"
                         f"{' ...' if len(erratic) > 6 else ''})")
        if muted:
            parts.append(f"{len(muted)} score too predictably, muted or halo-like ({', '.join(muted[:6])}"
                         f"{' ...' if len(muted) > 6 else ''})")
        rows.append(("Assessors' consistency", ("; ".join(parts) + ". See Fit and the flagged reads on Unexpected.")
                     if parts else "Every assessor's scores scatter about as the model expects (infit and outfit "
                                   "near 1; see Fit)."))
    agree = behaviour.exact_agreement
    if agree is not None and np.isfinite(agree.attrs.get("observed", np.nan)):
        rows.append(("Exact agreement", f"Two reads of the same object gave the same score in "
                                        f"{agree.attrs['observed']:.0%} of {agree.attrs['pairs']} pairs; the model "
                                        f"expects {agree.attrs['expected']:.0%}."))
    audit = behaviour.group_audit
    if audit is not None:
        rows.append(("Groups", audit.attrs["in_words"]))
    bias = behaviour.group_bias
    if bias is not None:
        flagged = bias[bias["flagged"]]
        rows.append(("Assessor x group bias", "; ".join(flagged["in_words"].head(4)) + (" ..." if len(flagged) > 4
                                                                                         else "") + ". See Group bias."
                     if len(flagged) else f"No assessor scores a group out of line with the panel beyond chance "
                                          f"({bias.attrs.get('tests', 0)} assessor x group cells tested, Holm-adjusted)."))
    for key, note in behaviour.notes.items():
        if key in ("group_bias", "group_audit"):
            rows.append(("Groups", f"not analysed: {note}"))
    return rows


def fit_sheet(result, behaviour: BehaviourTables, preamble) -> SheetSpec:
    """Fit: per assessor, infit and outfit mean-squares with their ZSTD and a reading, exact agreement, flagged
    reads, and (when modelled) the gain; below the table the panel's separation lines."""
    fit = behaviour.fit
    b = result.biases
    out = pd.DataFrame({"assessor": b.index.astype(str)})
    cols = {"assessor": Column("assessor", None, "the assessor as entered")}
    if fit is not None:
        for key, name, meaning in (
                ("n", "reads judged", "reads whose residual could be judged (a read fitted exactly by itself is left out)"),
                ("infit", "infit", "information-weighted mean-square of the standardised residuals: about 1 = as the "
                                   "model expects; above 1.5 erratic, below 0.5 too predictable"),
                ("infit_zstd", "infit ZSTD", "infit standardised (Wilson-Hilferty): beyond ±2 = beyond chance"),
                ("outfit", "outfit", "plain mean-square of the standardised residuals (sensitive to single odd reads)"),
                ("outfit_zstd", "outfit ZSTD", "outfit standardised: beyond ±2 = beyond chance"),
                ("reading", "reading", "the mean-squares in words")):
            out[name] = fit[key].reindex(b.index).to_numpy()
            cols[name] = Column(name, COUNT if key == "n" else "0.00" if key != "reading" else None, meaning,
                                max_width=60)
    agree = behaviour.exact_agreement
    if agree is not None and np.isfinite(agree["observed"]).any():
        out["exact agreement"] = agree["observed"].reindex(b.index).to_numpy()
        out["expected agreement"] = agree["expected"].reindex(b.index).to_numpy()
        cols["exact agreement"] = Column("exact agreement", PROB, "share of chances (another read of the same object) "
                                                                   "where the same score was given")
        cols["expected agreement"] = Column("expected agreement", PROB, "the share the model expects")
    if "gain" in b.columns:
        out["gain"] = b["gain"].to_numpy()
        cols["gain"] = Column("gain", SCORE, "scale use: 1 = like the panel, below 1 compresses, above 1 spreads")
    out["flagged reads"] = fit["flagged"].reindex(b.index).to_numpy() if fit is not None else 0
    cols["flagged reads"] = Column("flagged reads", COUNT, "reads flagged anomalous (see Unexpected)")
    spec = SheetSpec("Fit", out, preamble, cols, freeze_columns=1)
    sep = behaviour.separation
    if sep is not None:  # the panel's lines, under the table
        spec.footer = [[f"Panel, objects: {sep.loc['objects', 'in_words']}."],
                       [f"Panel, assessors: {sep.loc['assessors', 'in_words']}."]]
    spec.frame.attrs["leverage"] = fit.attrs.get("leverage", "") if fit is not None else ""
    return spec


def unexpected_sheet(behaviour: BehaviourTables, preamble) -> SheetSpec:
    """Unexpected: the flagged reads, most unexpected first, each with the panel's view and a sentence."""
    u = behaviour.unexpected
    out = pd.DataFrame({"assessor": u["assessor"].astype(str).to_numpy(), "object": u["object"].astype(str).to_numpy(),
                        "score": u["score"].to_numpy(dtype=float), "expected": u["expected"].to_numpy(dtype=float),
                        "calibrated value": u["value"].to_numpy(dtype=float),
                        "difference": u["residual"].to_numpy(dtype=float), "z": u["z"].to_numpy(dtype=float),
                        "about 1 read in": u["chance"].to_numpy(dtype=float), "in plain words": u["in_words"].to_numpy()})
    if not len(out):
        out = pd.DataFrame({"assessor": [""], "in plain words": ["No read stands out."]})
    cols = {"score": COLUMNS["score"],
            "expected": Column("expected", SCORE, "what the model expects from this assessor for this object"),
            "calibrated value": Column("calibrated value", SCORE, COLUMNS["value"].meaning),
            "difference": Column("difference", SIGNED, "score minus expected (positive = scored higher)"),
            "z": Column("z", SIGNED, "difference in expected spreads of such a residual (leverage-corrected)"),
            "about 1 read in": Column("about 1 read in", "#,##0", "how rare a read this far out is by chance"),
            "in plain words": Column("in plain words", None, "the read explained", wrap=True, max_width=90)}
    return SheetSpec("Unexpected", out, preamble, cols, landscape=True)


def groups_sheets(behaviour: BehaviourTables, preamble, level: float = 0.95, q: float = 1.959964) -> list[SheetSpec]:
    """Groups (the audit: group means of calibrated values) and Group bias (assessor x group cells); every ± is
    half the width of the interval at the run's *level* (*q* standard errors for the audit's means)."""
    sheets = []
    pm = pm_header(level)
    audit = behaviour.group_audit
    if audit is not None:
        out = audit.rename(columns={"raw_mean": "raw mean", "value_mean": "calibrated mean",
                                    "moved": "moved by calibration"})
        out.insert(out.columns.get_loc("se"), pm, q * out.pop("se"))
        out.insert(out.columns.get_loc("difference_se"), f"{pm[:1]} difference", q * out.pop("difference_se"))
        cols = {"objects": Column("objects", COUNT, "objects in the group"),
                "raw mean": Column("raw mean", SCORE, "mean of the group's plain averages"),
                "calibrated mean": Column("calibrated mean", SCORE, "mean of the group's calibrated values"),
                pm: Column(pm, SCORE, f"half the width of the {level_text(level)} interval of the calibrated mean"),
                "difference": Column("difference", SIGNED, "calibrated mean minus the mean of all grouped objects"),
                "± difference": Column("± difference", SCORE, f"half the width of the {level_text(level)} interval "
                                                              "of the difference"),
                "p": Column("p", PVALUE, "p-value of the difference"),
                "moved by calibration": Column("moved by calibration", SIGNED,
                                               "how far calibration (who read the group) moved the group's standing")}
        spec = SheetSpec("Groups", out, preamble, cols)
        spec.footer = [[audit.attrs["in_words"]]]
        sheets.append(spec)
    bias = behaviour.group_bias
    if bias is not None:
        out = bias.rename(columns={"p_holm": "adjusted p", "in_words": "in plain words"})
        if len(out):
            out.insert(out.columns.get_loc("se"), pm, half_width(out))
            out["flagged"] = words_for_flags(out["flagged"])
        out = out.drop(columns=[c for c in ("se", "lower", "upper", "z") if c in out.columns])
        cols = {"reads": Column("reads", COUNT, "the assessor's reads of this group"),
                "bias": Column("bias", SIGNED, "score units, relative to the assessor's own overall offset: positive "
                                               "= more lenient on this group, negative = harsher"),
                pm: Column(pm, SCORE, f"half the width of the {level_text(level)} interval of the bias"),
                "p": Column("p", PVALUE, "p-value of this cell alone"),
                "adjusted p": Column("adjusted p", PVALUE, "Holm-adjusted for the number of cells tested"),
                "flagged": Column("flagged", None, "yes = beyond chance after the adjustment"),
                "in plain words": Column("in plain words", None, "", wrap=True, max_width=70)}
        if not len(out):
            out = pd.DataFrame({"assessor": [""], "in plain words": [bias.attrs.get("note", "")]})
        sheets.append(SheetSpec("Group bias", out, preamble, cols, highlight="flagged" if "flagged" in out else None))
    return sheets


def feedback_sheet(result, preamble, behaviour: "BehaviourTables | None" = None) -> SheetSpec:
    """A printable letter per assessor, one page each: their stringency, scale use, consistency and agreement,
    their bias by group, the reads of theirs that stand out with the panel's view, then every read of theirs
    next to what the panel's calibration expects.  Anonymised: a page names no other assessor (the panel's view
    of an object is its calibrated value and the other reads' scores, unnamed)."""
    behaviour = behaviour or BehaviourTables.of(result)
    res = result.residuals.copy()
    order = result.biases.sort_values("bias", kind="mergesort").index
    res["_order"] = pd.Categorical(res["assessor"], categories=order, ordered=True)
    res = res.sort_values(["_order", "object"], kind="mergesort")
    values = result.values["value"]
    pages = []
    for name, reads in res.groupby("_order", sort=True, observed=True):
        lines = _letter_lines(result, behaviour, name)
        head = pd.DataFrame({"assessor": str(name), "section": [s for s, _ in lines], "object": "",
                             "your score": np.nan, "calibrated value": np.nan, "expected from you": np.nan,
                             "difference": np.nan, "stands out": "", "about you": [w for _, w in lines]})
        flagged = behaviour.unexpected[behaviour.unexpected["assessor"].astype(str) == str(name)]
        out_rows = pd.DataFrame({"assessor": str(name), "section": "A read that stands out",
                                 "object": flagged["object"].astype(str).to_numpy(),
                                 "your score": flagged["score"].to_numpy(), "calibrated value": flagged["value"].to_numpy(),
                                 "expected from you": flagged["expected"].to_numpy(),
                                 "difference": flagged["residual"].to_numpy(), "stands out": "yes",
                                 "about you": [f"the other reads gave {o}" if o else "" for o in flagged["other_scores"]]})
        all_rows = pd.DataFrame({"assessor": str(name), "section": "Your reads", "object": reads["object"].astype(str).to_numpy(),
                                 "your score": reads["score"].to_numpy(),
                                 "calibrated value": reads["object"].map(values).to_numpy(),
                                 "expected from you": reads["fitted"].to_numpy(), "difference": reads["residual"].to_numpy(),
                                 "stands out": words_for_flags(reads["anomalous"].astype(bool)), "about you": ""})
        pages.append(pd.concat([head, out_rows, all_rows], ignore_index=True))
    out = pd.concat(pages, ignore_index=True)
    cols = {"section": Column("section", None, "what this line of the letter is about", max_width=24),
            "your score": Column("your score", SCORE, "the score you entered"),
            "calibrated value": Column("calibrated value", SCORE, COLUMNS["value"].meaning),
            "expected from you": Column("expected from you", SCORE, "calibrated value with your usual offset (and "
                                                                    "your use of the scale, when modelled)"),
            "difference": Column("difference", SIGNED, "your score minus what was expected from you"),
            "stands out": Column("stands out", None, "yes = this read differs more than the confidences allow"),
            "about you": Column("about you", None, "your letter: stringency, use of the scale, consistency, groups "
                                                   "(no other assessor is named)", wrap=True, max_width=60)}
    firsts = np.flatnonzero(out["assessor"].ne(out["assessor"].shift()).to_numpy())
    spec = SheetSpec("Feedback", out, preamble, cols, highlight="stands out")
    spec.page_breaks = [int(i) for i in firsts[1:]]
    return spec


def _letter_lines(result, behaviour: "BehaviourTables", name) -> list[tuple[str, str]]:
    """The letter's sentences for one assessor, each (section, text); the first is the stringency."""
    b = result.biases.loc[name]
    half = (b["upper"] - b["lower"]) / 2 if {"upper", "lower"} <= set(b.index) else np.nan
    pm = f" ± {half:.2f}" if np.isfinite(half) else ""
    sentence = assessor_sentence(b["bias"], pm, int(b["n"]))
    lines = [("Your stringency", sentence[0].upper() + sentence[1:] + " (the panel's typical assessor is 0).")]
    if "gain" in result.biases:
        from ..calibration.models.scale_use import gain_sentence

        gain_pm = (b["gain_upper"] - b["gain_lower"]) / 2 if "gain_upper" in b.index else np.nan
        lines.append(("Your use of the scale", "You " + gain_sentence(float(b["gain"]), float(gain_pm), q=1.0,
                                                                      you=True) + "."))
    fit = behaviour.fit
    if fit is not None and name in fit.index:
        f = fit.loc[name]
        reading = {"as expected": "Your scores scatter about as much as the panel's model expects",
                   "too few reads to judge": "You have too few reads to judge how consistently you score"}.get(
            f["reading"], "Your scores are " + f["reading"].replace(":", " --"))
        lines.append(("Your consistency", f"{reading} (infit {fmt_number(f['infit'])}, outfit {fmt_number(f['outfit'])}; "
                                          "about 1 is as expected)."))
    agree = behaviour.exact_agreement
    if agree is not None and name in agree.index and np.isfinite(agree.loc[name, "observed"]):
        a = agree.loc[name]
        lines.append(("Your agreement", f"You gave the same score as another reader of the same object in "
                                        f"{a['observed']:.0%} of {int(a['opportunities'])} chances (the model "
                                        f"expects {a['expected']:.0%})."))
    bias = behaviour.group_bias
    if bias is not None and len(bias):
        mine = bias[bias["assessor"].astype(str) == str(name)]
        for row in mine.itertuples(index=False):
            text = row.in_words[len(str(name)):].replace(" scores ", " score ", 1).replace("from them", "from you")
            lines.append(("By group", "You" + text + "."))
    n_flag = int((behaviour.unexpected["assessor"].astype(str) == str(name)).sum())
    lines.append(("Reads that stand out", f"{n_flag} of your reads stand out (listed below with the panel's view): "
                                          "please check them." if n_flag else "None of your reads stands out."))
    return lines


