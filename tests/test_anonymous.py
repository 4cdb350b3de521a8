"""Readers who cannot be linked (every reviewer reads one paper): the one-way model and the whole decision on it.

xlcalib.calibration.models.one_way, the pooled design (Design.pooled), and a pooled result through rankings, next
reads, the Summary, the command line, the workbook's Run main and the spreadsheet functions -- which must all give
the same decision.
"""
from __future__ import annotations

import numpy as np
import openpyxl
import pandas as pd
import pytest

import xlcalib
from xlcalib.calibration.models import one_way, random_objects
from xlcalib.calibration.panel.simulate import simulate_anonymous
from xlcalib.calibration.system.graph import Design
from xlcalib.cli import main
from xlcalib.errors import InputError
from xlcalib.exercises import calibrate_panel


def _panel(n_objects=120, reads=(2, 4), seed=1, levels=False, **kwargs) -> pd.DataFrame:
    return simulate_anonymous(n_objects, reads, levels=levels, seed=seed, **kwargs).evaluations.drop(columns="sd")


def test_the_default_model_turns_one_way_and_says_why():
    ev = _panel()
    result = xlcalib.calibrate(ev)
    assert result.stats["model"] == "one-way" and result.stats["decision_model"] == "one-way"
    assert "every assessor read one object" in result.stats["model_note"]
    assert result.biases["bias"].isna().all() and (result.biases["n"] == 1).all()  # not estimable, said so
    assert result.stats["n_components"] == 1 and "group" not in result.values  # one scale for every value
    summary = result.summary()
    assert "no read is corrected for its reader's stringency" in summary and "every ± includes it" in summary
    assert xlcalib.calibrate(ev, model="random-both").stats["model"] == "one-way"
    for model in ("fixed", "random-objects"):
        with pytest.raises(InputError, match="every assessor read one object.*'one-way'"):
            xlcalib.calibrate(ev, model=model)


def test_one_way_is_random_objects_with_one_assessor():
    """The REML fit of the pooled design equals the random-objects model's on the same one-assessor design (a
    different code path: Henderson's reduced system with its dense factor and log-determinant)."""
    ev = _panel(levels=True)
    codes, _ = pd.factorize(ev["object"])
    c = ev["level"].map({"High": 1.75**2, "Medium": 1.0, "Low": 1.75**-2}).to_numpy()
    design = Design(np.zeros(len(ev), dtype=np.intp), codes.astype(np.intp), c, 1, codes.max() + 1)
    s = ev["score"].to_numpy(dtype=float)
    lam, mu, w, _M, _edge = one_way.reml(design, s, face_value=False)
    theta, u, lam_ro, w_ro, _solver, _ = random_objects.reml(design, s)
    # both searches stop within xatol 1e-6-1e-7 of log lam: the estimates agree to about 1e-5 relative
    np.testing.assert_allclose([lam, w, mu], [lam_ro, w_ro, theta[0]], rtol=1e-5)
    fit = one_way.fit_component(design, s, "weighted", False)
    np.testing.assert_allclose(fit.values, theta[0] + u, rtol=1e-5, atol=1e-6)


def test_one_way_variance_components_match_statsmodels_reml():
    """Equal confidences: tau^2 and w are the one-way random-effects REML estimates statsmodels' MixedLM finds."""
    statsmodels = pytest.importorskip("statsmodels.formula.api")
    ev = _panel(150, (2, 5), seed=4)
    result = xlcalib.calibrate(ev)
    fit = statsmodels.mixedlm("score ~ 1", ev, groups=ev["object"]).fit(reml=True)
    # MixedLM's optimiser stops at its own gradient tolerance: the components agree to about 1e-4 relative
    np.testing.assert_allclose([result.stats["tau2"], result.stats["posterior_variance"]],
                               [float(fit.cov_re.iloc[0, 0]), float(fit.scale)], rtol=2e-3)


def test_unanimous_reads_are_not_certainty():
    """Three reads of 8, 8, 8 carry the pooled within-paper noise: the same ± as any other paper read three times,
    never 0; a paper read twice is less sure than one read four times."""
    ev = _panel(80, (2, 4), seed=2)
    three = ev.groupby("object").size()
    target = three.index[three == 3][0]
    ev.loc[ev["object"] == target, "score"] = 8.0
    result = xlcalib.calibrate(ev)
    v = result.values
    w, lam = result.stats["posterior_variance"], result.stats["shrinkage_lambda"]
    # never below the pooled noise the posterior gives three reads: w [1/(C_o + lam) + (lam/(C_o + lam))^2 / M],
    # M = sum_o C_o lam / (C_o + lam); above it only by the values' spread's own uncertainty (a few per cent)
    C = v["total_confidence"].to_numpy()
    M = float(np.sum(C * lam / (C + lam)))
    pooled = np.sqrt(w * (1 / (3 + lam) + (lam / (3 + lam)) ** 2 / M))
    assert pooled <= v.at[target, "se"] <= 1.2 * pooled and v.at[target, "se"] > 0.25 * np.sqrt(w)
    same = v[(v["n"] == 3) & (v["raw_mean"] == 8.0)]  # papers with the same reads carry the same ±
    np.testing.assert_allclose(same["se"], v.at[target, "se"], rtol=1e-12)
    assert v.loc[v["n"] == 2, "se"].min() > v.loc[v["n"] == 4, "se"].max()
    # and the value is shrunk: 8 is pulled towards the panel mean
    assert v.at[target, "value"] < 8.0


def test_declared_sds_are_read_as_relative_under_pooling():
    ev = _panel().drop(columns="level").assign(sd=0.5)
    result = xlcalib.calibrate(ev)
    assert result.stats["noise_scale"] == "estimated from the residual scatter"
    assert "declared SDs are read as relative" in result.stats["model_note"]
    assert result.stats["posterior_variance"] > 1.0  # the scatter, stringency included, exceeds 0.5^2 per read


def test_intervals_cover_the_truth_in_simulation():
    """Seeded: 30 conferences of 200 papers, 2-5 reads, reviewer SD 0.5, noise SD 1, whole points 1-10 -- the 95%
    value intervals cover the latent values about 95% of the time (binomial s.e. of 6,000 papers: 0.003, papers
    of one panel share its estimated variances: the band allows for that)."""
    covered = total = 0
    for seed in range(30):
        p = simulate_anonymous(200, (2, 5), reviewer_sd=0.5, noise_sd=1.0, seed=seed)
        v = xlcalib.calibrate(p.evaluations.drop(columns="sd"), scale=(1, 10)).values.reindex(p.values.index)
        covered += int(((v["lower"] <= p.values) & (p.values <= v["upper"])).sum())
        total += len(v)
    assert 0.93 <= covered / total <= 0.97


def test_scale_points_refuse_scores_between_them_and_say_how_the_ends_are_read():
    ev = _panel(60, (3, 3), points=(1, 3, 6, 8), seed=5)
    result = xlcalib.calibrate(ev, scale=(1, 3, 6, 8))
    assert "(on the form's points 1, 3, 6, 8)" in result.stats["scale_ends"]
    with pytest.raises(InputError, match="not one of the scale's points 1, 3, 6, 8"):
        xlcalib.calibrate(ev.assign(score=ev["score"].where(ev.index != 4, 4.0)), scale=(1, 3, 6, 8))


def test_next_reads_ask_a_new_reviewer_where_it_settles_most():
    ev = _panel(80, (2, 3), seed=3)
    result = xlcalib.calibrate(ev)
    reads = result.next_reads(4, top_k=10)
    assert (reads["assessor"] == "a new reviewer").all() and reads["object"].is_unique
    assert (reads["se_after"] < reads["se_before"]).all()
    assert reads["reason"].iloc[0].startswith(f"Ask a new reviewer (usually Medium confidence) to read "
                                              f"{reads['object'].iloc[0]}: ")
    ranking = result.ranking(top_k=10, draws=2000)
    asked = ranking.loc[reads["object"], "p_above"]
    assert ((asked > 0.05) & (asked < 0.95)).all()  # the reads go where the line is undecided
    # a pending read (an allocated fourth review) is a read that will come, of its object
    pending = pd.DataFrame({"assessor": ["somebody"], "object": [reads["object"].iloc[0]]})
    after = result.next_reads(1, top_k=10, pending=pending)
    assert any("pending reads" in line for line in after.attrs["rules"])
    with pytest.raises(InputError, match="reviewer new to the object, whom conflicts cannot name"):
        result.next_reads(2, top_k=10, conflicts=[("x", "y")])


def test_group_bias_says_no_reader_can_be_judged():
    ev = _panel(60, (2, 3), seed=6)
    result = xlcalib.calibrate(ev)
    groups = {o: o[-1] for o in result.values.index}
    table = result.group_bias(groups)
    assert table.empty and "no reader's bias on a group can be estimated" in table.attrs["note"]


def test_cli_workbook_spreadsheet_functions_and_api_give_the_same_decision(tmp_path):
    """One anonymous panel, decided four ways: calibrate().ranking, xlcalib calibrate on its CSV, Run main on a
    workbook holding it, CALIB_RANKING over its columns -- the same values and the same final decisions."""
    from udf_registry.calibration import calib_ranking

    ev = _panel(60, (2, 4), seed=7, levels=True)
    scale = (1, 10)
    api = xlcalib.calibrate(ev, scale=scale).ranking(top_k=8, draws=4000, seed=2)
    # the command line
    csv = tmp_path / "anonymous.csv"
    ev.rename(columns=str.title).to_csv(csv, index=False)
    assert main(["calibrate", str(csv), "--fund", "8", "--seed", "2", "--scale", "1-10",
                 "-o", str(tmp_path / "cli.xlsx")]) == 0
    cli = _ranking_sheet(openpyxl.load_workbook(tmp_path / "cli.xlsx", read_only=True))
    # the workbook's Run main, the line and the scale on its Settings sheet
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Evaluations"
    sheet.append(["Assessor", "Object", "Score", "Level"])
    for row in ev.itertuples(index=False):
        sheet.append(list(row))
    settings = book.create_sheet("Settings")
    for row in (["Setting", "Value"], ["Funding line (top k)", 8], ["Seed", 2], ["Monte Carlo draws", 4000],
                ["Score scale minimum", 1], ["Score scale maximum", 10]):
        settings.append(row)
    calibrate_panel(book)
    workbook = _ranking_sheet(book)
    # the spreadsheet function
    column = lambda name: [[v] for v in ev[name]]  # noqa: E731 - a column range as xlwings passes it
    cells = calib_ranking(column("assessor"), column("object"), column("score"), column("level"), 8, None, None,
                          4000, 2, None, None, None, True, None, None, [[1], [10]])
    udf = pd.DataFrame(cells[1:], columns=cells[0]).set_index("object")
    for name, shown in (("command line", cli), ("workbook", workbook)):
        np.testing.assert_allclose(shown.loc[api.index, "calibrated value"].astype(float), api["value"], rtol=1e-9,
                                   err_msg=name)  # stored with every digit: only rounding differs
    np.testing.assert_allclose(udf.loc[api.index, "value"].astype(float), api["value"], rtol=1e-12)
    assert udf.loc[api.index, "final"].tolist() == api["final"].tolist()
    assert workbook.loc[api.index, "decision"].tolist() == api["final"].tolist()
    # the command line's draws follow the same seed but its draw count is its own default (10,000 vs 4,000): the
    # decisions agree wherever P(above) is not within Monte Carlo error of a cut-off
    margin = 4 * api["p_above_mc_se"].max()
    clear = ((api["p_above"] - 0.95).abs() > margin) & ((api["p_above"] - 0.05).abs() > margin)
    assert (cli.loc[api.index[clear], "decision"] == api.loc[clear, "final"]).all()


def _ranking_sheet(book) -> pd.DataFrame:
    rows = list(book["Ranking"].iter_rows(values_only=True))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "rank")
    table = pd.DataFrame([r for r in rows[head + 1:] if r and r[0] is not None and r[1] is not None],
                         columns=rows[head])
    return table[pd.to_numeric(table["rank"], errors="coerce").notna()].set_index("object")


def test_a_pooled_run_writes_its_workbook_without_reader_sheets(tmp_path):
    ev = _panel(40, (2, 3), seed=8)
    csv = tmp_path / "panel.csv"
    ev.rename(columns=str.title).to_csv(csv, index=False)
    assert main(["calibrate", str(csv), "--fund", "5", "-o", str(tmp_path / "out.xlsx"), "--feedback"]) == 0
    names = openpyxl.load_workbook(tmp_path / "out.xlsx", read_only=True).sheetnames
    assert "Biases" not in names and "Fit" not in names and "Feedback" not in names
    assert {"Ranking", "Summary", "Values", "Residuals", "Unexpected", "Diagnostics"} <= set(names)
    summary = dict(list(openpyxl.load_workbook(tmp_path / "out.xlsx", read_only=True)["Summary"]
                        .iter_rows(values_only=True))[2:])
    assert "No reader read two objects" in summary["Panel"]
    assert summary["Reliability of the averaged scores"].split(" ")[0].replace(".", "").isdigit()
