"""Example datasets shipped inside the package (no network, and nothing outside the package is read at run time).

WordSim-353 per-rater ratings
    Finkelstein et al. (2001), "Placing search in context: the concept
    revisited".  Set 1: 153 word pairs rated by 13 raters; set 2: 200 pairs
    rated by 16 raters (0-10 similarity).  Copied unchanged (line endings and
    trailing whitespace normalised) from the public repository
    fanglanting/skip-gram-pytorch, ``wordsim353/set1.csv`` and ``set2.csv``
    (commit 92df893a).  Wong & Paritosh (2022, "k-Rater Reliability", ACL),
    Table 1, use both sets stacked (353 pairs) with the first 13 rater columns.
"""
from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["wordsim353"]


def _read(name: str) -> pd.DataFrame:
    with resources.files("xlcalib.data").joinpath(name).open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle)


def wordsim353(set: str = "both", raters: int | None = 13) -> pd.DataFrame:
    """WordSim-353 ratings as an items x raters DataFrame indexed by (word1, word2).

    Parameters
    ----------
    set:
        ``"1"`` (153 pairs, 13 raters), ``"2"`` (200 pairs, 16 raters) or
        ``"both"`` (353 pairs stacked).
    raters:
        Keep the first ``raters`` rater columns (13 makes the two sets
        stackable, as in Wong & Paritosh 2022); ``None`` keeps all (NaN where a set has fewer).

    The published mean rating is in ``.attrs["human_mean"]``.

    >>> ws = wordsim353()
    >>> ws.shape
    (353, 13)
    """
    if set not in ("1", "2", "both"):
        raise ValueError("set must be '1', '2' or 'both'")
    frames = [_read(f"wordsim353_set{s}.csv") for s in (["1", "2"] if set == "both" else [set])]
    data = pd.concat(frames, ignore_index=True)
    index = pd.MultiIndex.from_arrays([data["Word 1"], data["Word 2"]], names=["word1", "word2"])
    rater_cols = [c for c in data.columns if c.strip().isdigit()]
    if raters is not None:
        rater_cols = rater_cols[:raters]
    out = data[rater_cols].set_axis(index, axis=0).astype(float)
    out.columns = [int(c) for c in rater_cols]
    out.columns.name = "rater"
    out.attrs["human_mean"] = data["Human (mean)"].to_numpy()
    return out
