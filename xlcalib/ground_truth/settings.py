"""Which conventions a ground-truth figure was computed under: xlcalib's defaults or the reference code's.

The paper's public reference implementation (Stutz et al. 2023, repository
google-deepmind/uncertain_ground_truth, run by its notebooks) makes three
choices that the paper's equations leave open or state differently.  xlcalib
follows the equations by default; ``setting="reference"`` reproduces the
reference code end to end, so a figure can be compared with the paper's.

============================  ==========================================  ==========================================
choice                        ``"xlcalib"`` (default)                     ``"reference"``
============================  ==========================================  ==========================================
IRN block weight (eq. 14)     ``(1/i)/|b_i|`` per class of block i;       ``1/i`` per class of block i (no division
                              the unnamed classes get 0, and so does      by the block size); every *named* block
                              the last block of a reader who names        counts, also the last one of a reader who
                              every class (eq. 14 sums to L-1)            names every class; unnamed classes get 0
PrIRN concentration (B.3)     ``gamma * IRN``: unnamed classes are        ``gamma * IRN + 0.01`` on *every* class
                              structural zeros
Plackett–Luce prior (B.4)     Gamma(1, 1) on each of the K classes, so    Gamma(1, 1) on each ranked class and on
                              the classes nobody ranked carry             ONE pooled "unranked" item, split over
                              Gamma(U, 1) together                        the unranked classes by Dirichlet(1, ..., 1)
============================  ==========================================  ==========================================

How much it matters (all 1,947 dermatology cases, 419 conditions; mean top-1
annotation certainty):

* PrIRN at reliability 1: 0.174 with the reference setting (the reference
  code's own run), 0.605 with the reference weighting but no 0.01, 0.625 with
  xlcalib's defaults; the settings converge as reliability grows (0.879 at
  reliability 50).  xlcalib's ``prirn_certainty`` (M = 1000, seed 0) gives
  0.171 / 0.601 / 0.623 at reliability 1, 0.466 (reference) / 0.681 (xlcalib)
  at reliability 3 and 0.876 / 0.889 at reliability 50; the share of cases
  below 0.5 at reliability 1 is 1.00 (reference) against 0.34 (xlcalib).
* Plackett–Luce over the first 53 cases: 0.947 (reference) vs 0.816 (xlcalib)
  at reliability 3 and 0.852 vs 0.281 at reliability 1 (another 53-case
  sample: 0.832 vs 0.677 and 0.694 vs 0.240); a case where one reader
  names one class gives certainty 1.0 vs 0.118 at reliability 3 (vs 0.015 at
  reliability 1), because xlcalib's Gamma(418, 1) unranked mass swamps the
  one ranked class while the reference's single Gamma(1, 1) item does not.
* The IRN weighting differs only where a reader names every class: on
  ``[[[0], [1], [2]]]`` (three classes, all named) the reference gives
  [6/11, 3/11, 2/11] = [.545, .273, .182], xlcalib [.667, .333, 0].  The
  dermatology data never has this; a short class list in a spreadsheet can.

A low PrIRN certainty under the reference setting at small reliability mostly
says that the 0.01 spread over ~400 unnamed classes (total 4.19) outweighs a
reliability-1 IRN vector (total 1): the sampled top-1 class is then often one
nobody named.  So a published number's setting is told apart by its size at
low reliability.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

__all__ = ["GroundTruthSetting", "SETTINGS", "XLCALIB", "REFERENCE", "REFERENCE_PRIRN_ALPHA", "resolve_setting"]

#: the PrIRN concentration the reference notebooks add to every class (``sample_prirn(..., alpha=0.01)``)
REFERENCE_PRIRN_ALPHA = 0.01


@dataclass(frozen=True)
class GroundTruthSetting:
    """The three conventions one setting fixes (see the module docstring for the table and figures)."""

    name: str
    #: IRN block weighting: "eq14" ((1/i)/|b_i|, last block 0) or "reference_code" (1/i, every named block)
    block_weighting: str
    #: concentration added to every class in PrIRN's Dirichlet(gamma * IRN + alpha)
    prirn_alpha: float
    #: Plackett–Luce prior on the classes nobody ranked: "per_class" (Gamma(alpha) each) or "one_item" (one Gamma(alpha))
    pl_unranked: str


XLCALIB = GroundTruthSetting("xlcalib", "eq14", 0.0, "per_class")
REFERENCE = GroundTruthSetting("reference", "reference_code", REFERENCE_PRIRN_ALPHA, "one_item")
SETTINGS = {"xlcalib": XLCALIB, "reference": REFERENCE}


def resolve_setting(setting="xlcalib", name: str = "the setting argument") -> GroundTruthSetting:
    """``"xlcalib"`` / ``"reference"`` (any case, blanks around ignored) or a :class:`GroundTruthSetting`.

    >>> resolve_setting(" Reference ").prirn_alpha
    0.01
    """
    if isinstance(setting, GroundTruthSetting):
        return setting
    if setting is None:
        return XLCALIB
    key = setting.strip().lower() if isinstance(setting, str) else None
    if key not in SETTINGS:
        raise InputError(f"{name} must be 'xlcalib' or 'reference', not {setting!r}")
    return SETTINGS[key]
