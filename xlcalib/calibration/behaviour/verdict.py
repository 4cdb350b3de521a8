"""How far to trust a calibration, in plain words: the one place that says it.

A secretary needs to know, before reading any value, whether calibrating
changed anything that matters on this panel: do the assessors measurably
differ in stringency, are they linked well enough for the differences to be
estimated, and what the values of groups that share no object rest on.  The
Summary sheet, the command line and the Diagnostics all print these
sentences, so they say the same thing everywhere.
"""
from __future__ import annotations

import numpy as np

from ..system.graph import overlap_verdict
from ..models.scale_use import scale_use_sentence

__all__ = ["assessors_differ", "p_words", "sigma_interval_words", "stringency_sentence", "linkage_sentence",
           "linkage_note", "pooled_sentence", "is_pooled", "trust_sentences"]

#: Below this p-value the test of "no difference in stringency" counts as evidence that assessors differ.
DIFFERENCE_P = 0.05


def assessors_differ(stats: dict) -> bool | None:
    """True/False when the model tested whether assessors differ in stringency (sigma_b = 0), else None."""
    p = stats.get("sigma_b_p")
    if p is None or isinstance(p, list) or not np.isfinite(p):
        return None
    return bool(p < DIFFERENCE_P)


def p_words(p: float) -> str:
    """A p-value in two significant digits, or more where two would round it onto the other side of the 5% the
    verdict is read at (0.0496 is not printed as 0.05 beside "differ")."""
    for digits in range(2, 8):
        text = f"{p:.{digits}g}"
        if (float(text) < DIFFERENCE_P) == (p < DIFFERENCE_P):
            return text
    return f"{p:.8g}"


def sigma_interval_words(stats: dict) -> str:
    """sigma_b's 95% interval in words: "from 0 to 0.41" (the test does not reject 0), "above 0, up to 0.55" (it
    rejects, but no value above 0 is ruled out), "between 0.31 and 0.61"; '' when there is none (large panels).

    The interval and the test come from one restricted likelihood (:func:`..models.variance.sigma_b_figures`):
    it reaches 0 exactly when p >= 5%, and the estimate lies inside it, so these words cannot contradict the
    test's.  Two significant digits, rounded alike, keep the printed estimate between the printed ends.
    """
    low, high, p = stats.get("sigma_b_low"), stats.get("sigma_b_high"), stats.get("sigma_b_p")
    if low is None or isinstance(low, list) or not np.isfinite(low) or p is None or not np.isfinite(p):
        return ""
    upper = f"{high:.2g}" if np.isfinite(high) else "no upper end the data can set"
    if low > 0:
        return f"between {low:.2g} and {upper}"
    if p < DIFFERENCE_P:
        return f"above 0, up to {upper}"
    return f"from 0 to {upper}"


def stringency_sentence(stats: dict) -> str:
    """Whether and by how much the assessors differ in stringency (models that estimate sigma_b): the REML
    estimate, its 95% interval and the test of no difference, one convention (see :func:`sigma_interval_words`)."""
    sigma = stats.get("sigma_b")
    if sigma is None or isinstance(sigma, list):
        return ""
    interval, p = sigma_interval_words(stats), stats.get("sigma_b_p")
    if assessors_differ(stats):
        return (f"Assessors differ in stringency: their biases spread by about {sigma:.2g} score points (SD of the "
                f"biases; 95% interval {interval}; test of no difference p = {p_words(p)}): calibration corrects each "
                "value for its readers' stringency, as far as the shared reads allow.")
    if assessors_differ(stats) is False:
        return (f"The panel's assessors do not measurably differ in stringency (SD of the biases {sigma:.2g}; 95% "
                f"interval {interval}; test of no difference p = {p_words(p)}): the values are close to "
                "confidence-weighted plain averages.")
    return (f"The assessors' biases spread by about {sigma:.2g} score points (SD of the biases, from moments of the "
            "fixed fit: with this many assessors its uncertainty is small, and no test is made).")


def _group_listing(result, shown: int = 5) -> str:
    groups = result.biases["group"] if "group" in result.biases else None
    if groups is None:
        return ""
    parts = []
    for g in sorted(groups.unique())[:shown]:
        names = list(groups.index[groups == g][:6])
        more = " ..." if (groups == g).sum() > 6 else ""
        parts.append(f"group {g}: {', '.join(map(str, names))}{more}")
    extra = f"; and {groups.nunique() - shown} more" if groups.nunique() > shown else ""
    return " (" + "; ".join(parts) + extra + ")"


def linkage_sentence(result) -> str:
    """How well the shared reads tie the assessors together, and what unconnected groups rest on."""
    s = result.stats
    n = s["n_components"]
    if n > 1 and "group" in result.biases:
        return (f"The panel splits into {n} groups that share no objects{_group_listing(result)}. Within a group the "
                "values are calibrated from the shared reads; between groups they rest on the model's assumption "
                f"that each group is on average as strict as the panel. {n - 1} read(s) across groups would link "
                "them: next-reads proposes them.")
    if n > 1:
        return (f"The panel splits into {n} groups that share no objects, each fitted on its own scale: values of "
                "different groups are not comparable.")
    mu2 = s["mu2"] if not isinstance(s["mu2"], list) else min(s["mu2"])
    text = (f"Assessor overlap {mu2:.2f} on a scale of 0 to 1 (how well shared objects tie the assessors together; "
            f"technical name mu2): {overlap_verdict(mu2)}.")
    if np.isfinite(mu2) and mu2 < 0.1 and s.get("sigma_b") is not None:
        text += " The model keeps poorly linked assessors' biases close to 0, so their values stay close to plain averages."
    return text


def linkage_note(result) -> str:
    """The short form of :func:`linkage_sentence` for unconnected groups fitted together (cells carry it beside
    the numbers that compare the groups); '' for a connected panel or groups kept apart."""
    n = result.stats.get("n_components", 1)
    if n <= 1 or "group" not in result.biases:
        return ""
    return (f"note: {n} groups share no object; values compared across groups rest on the model's assumption that "
            "each group is on average as strict as the panel")


def is_pooled(result) -> bool:
    """Whether the result's fit pooled its readers into the noise (no reader linked to another); the ordinal
    models (no linear components) never pool."""
    return any(part.pooled for part in getattr(result, "components", ()))


def pooled_sentence(result) -> str:
    """What a panel whose readers cannot be linked allows, and what it does not: no stringency corrected, every
    +- including it, values shrunk by their reads (:mod:`..models.one_way`)."""
    s = result.stats
    icc = s.get("icc")
    agree = (f" Reads of the same object agree with ICC(1) = {icc:.2f}: that share of a typical read's variance is "
             "the object's value, the rest is the readers' stringency and noise together." if icc is not None
             and not isinstance(icc, list) and np.isfinite(icc) else "")
    linked = bool((result.biases["n"] > 1).any())
    head = ("The one-way model pools the readers" if linked else
            "No reader can be linked to another (every reader read one object)")
    return (f"{head}, so no read is corrected for its reader's stringency: it cannot be told apart from the noise "
            "of the read. It is part of that noise, and every ± includes it; values are shrunk towards the panel "
            f"mean by how much their reads say.{agree}")


def trust_sentences(result) -> list[str]:
    """The sentences that say how far to trust this calibration (stringency, scale use, linkage, groups)."""
    if is_pooled(result):
        return [pooled_sentence(result)]
    return [t for t in (stringency_sentence(result.stats), scale_use_sentence(result.stats, result.biases),
                        linkage_sentence(result)) if t]
