"""Next reads keep the panel's rules: conflicts, max loads, pending reads and subjects are never broken; each
suggestion is one sentence with the assumed confidence; the Assignment sheet, the CLI's rule files and the
spreadsheet function apply the same rules."""
from __future__ import annotations

import math
import re

import numpy as np
import openpyxl
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr

import xlcalib
from xlcalib.calibration.panel.levels import Levels, default_levels
from xlcalib.calibration.decide.next_reads import likely_range
from xlcalib.calibration.decide.read_rules import known_to_panel, subject_sets
from xlcalib.calibration.panel.simulate import simulate_panel
from xlcalib.cli import main
from xlcalib.errors import InputError

PANEL = simulate_panel(10, 40, 3, seed=3)
RESULT = xlcalib.calibrate(PANEL.evaluations.drop(columns="sd"), level="level")


def _subjects(panel):
    return {**{a: [f"s{s}" for s in e] for a, e in panel.expertise.items()},
            **{o: f"s{s}" for o, s in panel.subjects.items()}}


def _shares_subject(panel, a, o) -> bool:
    return panel.subjects[o] in panel.expertise[a]


# ----------------------------------------------------------------------------------------------- the core
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 25), slack=st.integers(0, 3), n_conf=st.integers(0, 40),
       n_pending=st.integers(0, 10), per_assessor=st.booleans(), subjects=st.booleans(),
       line=st.sampled_from(["none", "top", "threshold"]), objective=st.sampled_from(["borderline", "errors"]))
def test_rules_never_broken(seed, k, slack, n_conf, n_pending, per_assessor, subjects, line, objective):
    """Conflicts, pending reads, subjects and max loads hold for every suggestion, whatever the panel and rules."""
    rng = np.random.default_rng(seed)
    ev = PANEL.evaluations
    A, O = list(RESULT.biases.index), list(RESULT.values.index)
    conflicts = [(A[rng.integers(len(A))], O[rng.integers(len(O))]) for _ in range(n_conf)]
    read = set(zip(ev.assessor, ev.object))
    pending = [p for p in ((A[rng.integers(len(A))], O[rng.integers(len(O))]) for _ in range(n_pending))
               if p not in read]
    load = (ev.assessor.value_counts().reindex(A, fill_value=0)
            + pd.Series([a for a, _ in set(pending)], dtype=object).value_counts().reindex(A, fill_value=0))
    cap = ({a: int(load[a]) + int(rng.integers(0, slack + 1)) for a in A} if per_assessor
           else int(load.median()) + slack)
    kwargs = {"top": {"top_k": 10}, "threshold": {"threshold": float(RESULT.values.value.median())}, "none": {}}[line]
    picks = RESULT.next_reads(k, conflicts=conflicts, max_load=cap, pending=pending, objective=objective,
                              suitability=_subjects(PANEL) if subjects else None, **kwargs)
    pairs = list(zip(picks.assessor, picks.object))
    assert len(set(pairs)) == len(pairs)
    assert not set(pairs) & (read | set(conflicts) | set(pending))
    if subjects:
        assert all(_shares_subject(PANEL, a, o) for a, o in pairs)
    after = load + pd.Series([a for a, _ in pairs], dtype=object).value_counts().reindex(A, fill_value=0)
    limit = pd.Series(cap if per_assessor else {a: cap for a in A})
    assert all(after[a] <= max(limit[a], load[a]) for a in A)  # nobody above their max; those over it get none
    assert all(load[a] < limit[a] for a, _ in pairs)
    assert len(picks) == k or picks.attrs["note"]
    assert picks.attrs["rules"][-1].endswith("pairs remain allowed")


def test_rule_counts_are_the_pairs_each_rule_excludes():
    A, O = list(RESULT.biases.index), list(RESULT.values.index)
    read = set(zip(PANEL.evaluations.assessor, PANEL.evaluations.object))
    conflicts = [(A[0], O[5]), (A[1], O[7]), *list(read)[:3]]  # conflicts on pairs already read exclude nothing new
    subjects = _subjects(PANEL)
    picks = RESULT.next_reads(3, conflicts=conflicts, suitability=subjects, max_load={A[2]: 0})
    unread = [(a, o) for a in A for o in O if (a, o) not in read]
    assert picks.attrs["excluded"]["conflicts"] == len({(A[0], O[5]), (A[1], O[7])} - read)
    assert picks.attrs["excluded"]["subjects"] == sum(not _shares_subject(PANEL, a, o) for a, o in unread)
    allowed = [(a, o) for a, o in unread if _shares_subject(PANEL, a, o) and (a, o) not in set(conflicts)]
    assert picks.attrs["excluded"]["max load"] == sum(a == A[2] for a, _ in allowed)
    text = "\n".join(picks.attrs["rules"])
    assert f"{len(unread):,} (assessor, object) pairs are not read yet" in text
    assert "only pairs sharing a subject" in text and "1 assessor(s) already at their maximum" in text
    assert picks.attrs["rules"][-1] == f"{sum(a != A[2] for a, _ in allowed):,} pairs remain allowed"


@pytest.mark.parametrize("form", ["mapping", "grid", "long", "threshold"])
def test_suitability_forms(form):
    A, O = list(RESULT.biases.index), list(RESULT.values.index)
    shared = np.array([[float(_shares_subject(PANEL, a, o)) for o in O] for a in A])
    rng = np.random.default_rng(0)
    grid = pd.DataFrame(shared * rng.integers(1, 4, shared.shape), index=A, columns=O)
    value, ok = {"mapping": (_subjects(PANEL), shared > 0), "grid": (grid, grid.to_numpy() > 0),
                 "long": (grid.stack().rename_axis(["assessor", "object"]).rename("suitability").reset_index(),
                          grid.to_numpy() > 0),
                 "threshold": (grid, grid.to_numpy() >= 2)}[form]
    picks = RESULT.next_reads(12, top_k=10, suitability=value, min_suitability=2 if form == "threshold" else None)
    read = set(zip(PANEL.evaluations.assessor, PANEL.evaluations.object))
    possible = sum(ok[i, j] and (a, o) not in read for i, a in enumerate(A) for j, o in enumerate(O))
    assert len(picks) == min(12, possible) > 0
    assert all(ok[A.index(a), O.index(o)] for a, o in zip(picks.assessor, picks.object))


def test_names_without_subjects_are_not_restricted():
    subjects = _subjects(PANEL)
    free = RESULT.biases.index[0]
    subjects[free] = ""  # nothing known against any of this assessor's pairs
    picks = RESULT.next_reads(40, suitability=subjects)
    outside = [(a, o) for a, o in zip(picks.assessor, picks.object) if not _shares_subject(PANEL, a, o)]
    assert outside and all(a == free for a, _ in outside)
    assert "1 assessor(s)" in " ".join(picks.attrs["rules"])
    assert subject_sets(" Maths; physics ,") == {"maths", "physics"} and subject_sets(["A", 3]) == {"a", "3"}
    with pytest.raises(InputError, match="nobody"):
        RESULT.next_reads(2, suitability={"nobody": "maths"})


def test_known_to_panel_leaves_out_and_says_so():
    conflicts, loads, subjects, lines = known_to_panel(
        ["a1", "a2"], ["o1"], conflicts=[("a1", "o1"), ("ghost", "o1"), ("a2", "o9")],
        max_load={"a1": 3, "ghost": 2}, suitability={"a1": "x", "o1": "x", "o9": "y"})
    assert conflicts.values.tolist() == [["a1", "o1"]] and loads == {"a1": 3} and subjects == {"a1": "x", "o1": "x"}
    assert "2 conflict(s)" in lines[0] and "ghost/o1" in lines[0] and "ghost" in lines[1] and "o9" in lines[2]
    grid = pd.DataFrame([[1.0, 0.0]], index=["a1"], columns=["o1", "o9"])
    *_, kept, lines = known_to_panel(["a1", "a2"], ["o1"], suitability=grid)
    assert kept.shape == (1, 1) and "0 assessor row(s) and 1 object column(s)" in lines[0]
    assert "1 name(s) of the panel are not in the grid" in lines[1] and "a2" in lines[1]


# ----------------------------------------------------------------------------------------------- the sentence
def _sd_panel(seed=4):
    rng = np.random.default_rng(seed)
    rows = [(f"a{a}", f"o{o:02d}", float(rng.normal()), float(rng.choice([0.5, 1.0, 2.0])))
            for o in range(24) for a in rng.choice(6, 3, replace=False)]
    return pd.DataFrame(rows, columns=["assessor", "object", "score", "sd"])


def test_sentence_numbers_are_the_refit_pre_posterior():
    """SDs at face value (w = 1), simple gauge: the sentence's chance now and its likely range after the read
    come from P(above) and the refit's standard error with that one read, at the assumed confidence."""
    frame = _sd_panel()
    result = xlcalib.calibrate(frame, sd="sd", gauge="simple", model="fixed")  # values' posterior = decisions'

    X = float(result.values.value.median())
    picks = result.next_reads(4, threshold=X)
    for row in picks.itertuples():
        sd = row.confidence ** -0.5
        refit = xlcalib.calibrate(pd.concat([frame, pd.DataFrame([(row.assessor, row.object, 0.0, sd)],
                                                                  columns=frame.columns)]), sd="sd", gauge="simple",
                                  model="fixed")
        s = row.settles
        se0, se1 = result.values.at[s, "se"], refit.values.at[s, "se"]
        z = (result.values.at[s, "value"] - X) / se0
        low, high = likely_range(z, 1 - se1**2 / se0**2)
        now = ndtr(z)
        assert row.confidence == pytest.approx((frame[frame.assessor == row.assessor].sd ** -2).median())
        assert row.reason.startswith(f"Ask {row.assessor} (usual SD {sd:.2g}) to read {row.object}: ")
        likely = (f"fall below {math.ceil(100 * high)}%" if high <= now else f"rise above {math.floor(100 * low)}%"
                  if low >= now else f"move to below {math.ceil(100 * low)}% or above {math.floor(100 * high)}%")
        expected = (f"chance of being above the line is {100 * now:.0f}% now and would most likely {likely} "
                    "after the read.")
        assert row.reason.endswith(expected), (row.reason, expected)
        assert (f"{s}'s chance" in row.reason) == (s == row.object)


@pytest.mark.parametrize("z, rho", [(0.0, 0.5), (0.8, 0.2), (-1.5, 0.7), (0.3, 0.05)])
def test_likely_range_is_the_tertiles_of_the_updated_chance(z, rho):
    draws = np.random.default_rng(1).standard_normal(200_000)
    updated = ndtr((z + math.sqrt(rho) * draws) / math.sqrt(1 - rho))
    low, high = likely_range(z, rho)
    assert np.mean(updated < low) == pytest.approx(1 / 3, abs=0.005)
    assert np.mean(updated > high) == pytest.approx(1 / 3, abs=0.005)
    # the chance now is the mean of the updated chance; the sentence says which way it most likely goes
    assert np.mean(updated) == pytest.approx(ndtr(z), abs=0.003)
    if not low < ndtr(z) < high:
        assert high <= ndtr(z) and np.mean(updated < high) == pytest.approx(2 / 3, abs=0.005)


def test_sentence_for_a_chance_that_most_likely_falls():
    from xlcalib.calibration.decide.next_reads import _movement

    assert _movement("P1's chance", -1.5, 0.7, "after the read") == (
        "P1's chance of being above the line is 7% now and would most likely fall below 2% after the read")
    assert _movement("P1's chance", 1.5, 0.7, "after the read").endswith("most likely rise above 98% after the read")
    assert _movement("P1's chance", 0.1, 0.001, "after the read").endswith("would barely move after the read")
    assert _movement("P1's chance", 0.1, 0.5, "after the read") == (
        "P1's chance of being above the line is 54% now and would most likely move to below 39% or above 71% "
        "after the read")


def test_typical_level_named_and_expected_confidence_assumed():
    """Each assessor's usual level (most used; ties the lower) is named in words; the confidence assumed is the
    mean of the assessor's confidences (a read's information is linear in it), not the usual level's."""
    rng = np.random.default_rng(5)
    rows = []
    for o in range(20):
        for a in rng.choice(5, 3, replace=False):
            level = {0: "Medium", 1: "High", 2: "Low"}.get(a, "Medium" if o % 2 else "High")
            rows.append((f"a{a}", f"o{o:02d}", float(rng.integers(1, 7)), level))
    frame = pd.DataFrame(rows, columns=["assessor", "object", "score", "level"])
    result = xlcalib.calibrate(frame, level="level")
    levels = default_levels().confidences()
    picks = result.next_reads(30)
    for row in picks.itertuples():
        usual = frame[frame.assessor == row.assessor].level.value_counts()
        top = usual[usual == usual.max()].index
        expected = min(top, key=lambda name: levels[name.lower()])
        mean = np.mean([levels[name.lower()] for name in frame[frame.assessor == row.assessor].level])
        assert row.level == expected and row.confidence == pytest.approx(mean)
        assert row.reason.startswith(f"Ask {row.assessor} (usually {expected} confidence) to read {row.object}")
    overridden = result.next_reads(2, confidence={"a0": levels["low"], "a1": 2.0})
    words = dict(zip(overridden.assessor, overridden.reason))
    if "a0" in words:
        assert "(assumed Low confidence)" in words["a0"]
    if "a1" in words:
        assert "(assumed confidence 2)" in words["a1"]
    # the levels named by the adapter (an SD table) win over the result's record
    sd_levels = Levels({"Sure": 0.5, "Unsure": 2.0}, "sd")
    frame_sd = frame.assign(level=np.where(frame.level == "High", "Sure", "Unsure"))
    result_sd = xlcalib.calibrate(frame_sd, level="level", levels=sd_levels)
    assert set(result_sd.next_reads(5, levels=sd_levels).level) <= {"Sure", "Unsure"}
    assert set(result_sd.next_reads(5).level) <= {"Sure", "Unsure"}  # read back from stats["levels"]


def test_expected_confidence_from_the_reads_of_suitable_pairs():
    """The next read of a suitable pair is predicted from the assessor's reads of suitable pairs: a Low read
    outside the subjects does not lower it, and an assessor reading High 3 times in 5 is not counted as
    always High (the most used level, as assumed before, overrated such assessors' reads)."""
    levels = default_levels().confidences()
    x, y = [f"o{o}" for o in range(8)], [f"o{o}" for o in range(8, 12)]
    rows = [("a0", o, 3.0, level) for o, level in zip(x[:5], ["High"] * 3 + ["Medium"] * 2)]
    rows += [("a0", "o8", 2.0, "Low")]
    rows += [("a1", o, 4.0, "Medium") for o in x[3:]] + [("a1", "o9", 2.0, "Low")]
    rows += [("a2", o, 5.0, "Medium") for o in y] + [("a2", "o5", 3.0, "Low")]
    frame = pd.DataFrame(rows, columns=["assessor", "object", "score", "level"])
    result = xlcalib.calibrate(frame, level="level")
    subjects = {"a0": "x", "a1": "x", "a2": "y", **{o: "x" for o in x}, **{o: "y" for o in y}}
    picks = result.next_reads(6, suitability=subjects)
    assert len(picks) == 6 and set(picks.assessor) == {"a0", "a1"}
    assumed = dict(zip(picks.assessor, picks.confidence))
    assert assumed["a0"] == pytest.approx((3 * levels["high"] + 2 * levels["medium"]) / 5)  # was High's
    assert assumed["a1"] == pytest.approx(levels["medium"])  # the Low read outside x does not count
    no_rule = result.next_reads(30)
    assumed = dict(zip(no_rule.assessor, no_rule.confidence))
    assert assumed["a0"] == pytest.approx((3 * levels["high"] + 2 * levels["medium"] + levels["low"]) / 6)
    assert set(no_rule.level[no_rule.assessor == "a0"]) == {"High"}
    assert no_rule.reason[no_rule.assessor == "a0"].str.contains(r"\(usually High confidence\)").all()


def test_levels_description_round_trip():
    for levels in (default_levels(), Levels({"Very sure": 0.25, "Not sure": 3.0}, "sd")):
        back = Levels.from_description(levels.describe())
        assert back.kind == levels.kind and list(back.values) == list(levels.values)
        assert np.allclose(list(back.values.values()), list(levels.values.values()), rtol=1e-3)
    assert Levels.from_description("") is None and Levels.from_description("levels (SD in score units): x y") is None


# ----------------------------------------------------------------------------------------------- workbook, CLI
def _write_panel_book(path, panel, *, max_load, conflicts, subjects=True, grid=None, pending=()):
    """A panel workbook: Evaluations (with pending rows), Settings (top 8), and an Assignment sheet whose
    Assessors table lists every key of *max_load* (some may have no scored read)."""
    wb = openpyxl.Workbook()
    ev = wb.active
    ev.title = "Evaluations"
    ev.append(["Assessor", "Object", "Score", "Level"])
    for row in panel.evaluations.itertuples():
        ev.append([row.assessor, row.object, float(row.score), row.level])
    for a, o in pending:
        ev.append([a, o, None, None])
    st_ = wb.create_sheet("Settings")
    st_.append(["Funding line (top k)", 8])
    asg = wb.create_sheet("Assignment")
    header = ["Assessor", "Max load", "Min load", "Subjects", None, "Object", "Reads wanted", "Subjects", None,
              "Conflict assessor", "Conflict object"]
    asg.append(header)
    a_names, o_names = list(max_load), list(panel.values.index)
    for i in range(max(len(a_names), len(o_names), len(conflicts))):
        row = [None] * len(header)
        if i < len(a_names):
            a = a_names[i]
            tags = "; ".join(f"s{s}" for s in panel.expertise.get(a, [0]))
            row[:4] = [a, max_load[a], None, tags if subjects else None]
        if i < len(o_names):
            o = o_names[i]
            row[5:8] = [o, 3, f"s{panel.subjects[o]}" if subjects else None]
        if i < len(conflicts):
            row[9:11] = list(conflicts[i])
        asg.append(row)
    if grid is not None:
        sheet = wb.create_sheet("Suitability")
        sheet.append([None, *grid.columns])
        for a, values in grid.iterrows():
            sheet.append([a, *[float(v) if v else None for v in values]])
    wb.save(path)


def _sheet_rows(path, sheet):
    return [[c.value for c in row] for row in openpyxl.load_workbook(path)[sheet].iter_rows()]


def _suggested(path):
    """The Next reads sheet's suggestions (assessor, object, level from the sentence) and its preamble's text
    (long lines wrap into several rows, so the text is given as one line)."""
    rows = _sheet_rows(path, "Next reads")
    at = next(i for i, r in enumerate(rows) if r[:3] == ["order", "ask", "to read"])
    body = rows[at + 1:]
    body = body[:next((i for i, r in enumerate(body) if all(c is None for c in r)), len(body))]
    table = pd.DataFrame(body, columns=rows[at]).rename(columns={"ask": "assessor", "to read": "object"})
    table["level"] = table["in plain words"].str.extract(r"\(usually (\w+) confidence\)", expand=False)
    return table, [" ".join(str(r[0]) for r in rows[:at] if r[0])]


@pytest.fixture
def workbook(tmp_path):
    panel = simulate_panel(12, 60, 2, seed=3)
    load = panel.evaluations.assessor.value_counts()
    names = list(panel.biases.index)
    max_load = {a: int(load[a]) + (0 if i < 3 else 3) for i, a in enumerate(names)}  # three already full
    read = set(zip(panel.evaluations.assessor, panel.evaluations.object))
    unread = [(a, o) for a in names for o in panel.values.index if (a, o) not in read and _shares_subject(panel, a, o)]
    conflicts = unread[::3][:15] + [("Dr Nobody", "P001")]
    max_load["Dr Nobody"] = 5  # listed for the panel, no scored read yet
    pending = [p for p in unread[1::7][:3] if p not in conflicts]
    path = tmp_path / "panel.xlsx"
    _write_panel_book(path, panel, max_load=max_load, conflicts=conflicts, pending=pending)
    return path, panel, max_load, conflicts, pending


def test_assignment_sheet_rules_applied_end_to_end(workbook, capsys):
    path, panel, max_load, conflicts, pending = workbook
    assert main(["next-reads", str(path), "--reads", "12"]) == 0
    out = capsys.readouterr().out
    table, preamble = _suggested(path.with_name("panel_next_reads.xlsx"))
    pairs = list(zip(table.assessor, table.object))
    assert len(pairs) == 12, out
    assert not set(pairs) & (set(conflicts) | set(pending))
    assert all(_shares_subject(panel, a, o) for a, o in pairs)
    load = panel.evaluations.assessor.value_counts() + pd.Series([a for a, _ in pending]).value_counts().reindex(
        panel.biases.index, fill_value=0)
    extra = pd.Series([a for a, _ in pairs]).value_counts()
    assert all(load[a] + n <= max_load[a] for a, n in extra.items())
    assert all(max_load[a] > load[a] for a in extra.index)
    for text in (out, "\n".join(preamble)):
        assert "sheet Assignment: 16 conflict(s), max loads of 13 assessors, subjects from the Subjects columns" in text
        assert "1 conflict(s) name someone with no scored read (left out): Dr Nobody/P001" in text
        assert "max loads of 1 assessor(s) with no scored read left out: Dr Nobody" in text
        assert f"pending reads (allocated, no score yet): {len(pending)}" in text
        assert "conflicts of interest: 15 pairs excluded" in text
        assert "only pairs sharing a subject" in text and "already at their maximum" in text
    assert re.search(r"1\. Ask A\d\d \(usually (High|Medium|Low) confidence\) to read P\d{3}: ", out)
    assert set(table.level) <= {"High", "Medium", "Low"}
    # switched off: the subjects and loads no longer bind (the pending reads still do)
    assert main(["next-reads", str(path), "--reads", "12", "--ignore-assignment", "-o",
                 str(path.with_name("free.xlsx"))]) == 0
    free_out = capsys.readouterr().out
    assert "sheet Assignment" not in free_out and "pending reads" in free_out
    free, _ = _suggested(path.with_name("free.xlsx"))
    assert not all(_shares_subject(panel, a, o) for a, o in zip(free.assessor, free.object))


def test_suitability_grid_sheet_wins_over_subjects(tmp_path):
    panel = simulate_panel(8, 30, 3, seed=6)
    names, objects = list(panel.biases.index), list(panel.values.index)
    grid = pd.DataFrame(0.0, index=names, columns=objects)
    grid.iloc[:, :6] = 1.0  # only the first six objects are suitable for anyone
    path = tmp_path / "grid.xlsx"
    _write_panel_book(path, panel, max_load={a: 99 for a in names}, conflicts=[], grid=grid)
    assert main(["next-reads", str(path), "--reads", "5"]) == 0
    table, preamble = _suggested(tmp_path / "grid_next_reads.xlsx")
    assert set(table.object) <= set(objects[:6])
    assert any("suitability grid on sheet Suitability" in line for line in preamble)


def test_bad_assignment_sheet_says_how_to_run_without_it(workbook, capsys):
    path, *_ = workbook
    wb = openpyxl.load_workbook(path)
    wb["Assignment"]["B3"] = "lots"
    wb.save(path)
    assert main(["next-reads", str(path), "--reads", "2"]) == 2
    err = capsys.readouterr().err
    assert "B3" in err and "--ignore-assignment" in err
    assert main(["next-reads", str(path), "--reads", "2", "--ignore-assignment"]) == 0


def test_cli_rule_files_for_a_csv_panel(tmp_path, capsys):
    panel = simulate_panel(10, 40, 3, seed=3)
    csv = tmp_path / "panel.csv"
    panel.evaluations.drop(columns="sd").rename(columns=str.title).to_csv(csv, index=False)
    names = list(panel.biases.index)
    read = set(zip(panel.evaluations.assessor, panel.evaluations.object))
    unread = [(a, o) for a in names for o in panel.values.index if (a, o) not in read]
    conflicts = unread[::4][:40]
    pd.DataFrame(conflicts, columns=["Assessor", "Object"]).to_csv(tmp_path / "conflicts.csv", index=False)
    load = panel.evaluations.assessor.value_counts()
    loads = {names[0]: int(load[names[0]]), names[1]: int(load[names[1]]) + 1}
    pd.DataFrame(list(loads.items()), columns=["Assessor", "Max load"]).to_csv(tmp_path / "loads.csv", index=False)
    subjects = pd.DataFrame([(n, "; ".join(map(str, s))) for n, s in panel.expertise.items()]
                            + [(o, str(s)) for o, s in panel.subjects.items()], columns=["Name", "Subjects"])
    subjects.to_csv(tmp_path / "subjects.csv", index=False)
    cap = int(load.max()) + 1
    argv = ["next-reads", str(csv), "--reads", "15", "--fund", "8", "--conflicts", str(tmp_path / "conflicts.csv"),
            "--loads", str(tmp_path / "loads.csv"), "--max-load", str(cap),
            "--subjects", str(tmp_path / "subjects.csv")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    table, _ = _suggested(tmp_path / "panel_next_reads.xlsx")
    pairs = list(zip(table.assessor, table.object))
    assert pairs and not set(pairs) & set(conflicts)
    assert all(_shares_subject(panel, a, o) for a, o in pairs)
    extra = pd.Series([a for a, _ in pairs]).value_counts()
    limit = {a: loads.get(a, cap) for a in names}
    assert all(load[a] + n <= limit[a] for a, n in extra.items()) and names[0] not in extra.index
    assert "from conflicts.csv: 40 conflict(s)" in out and "from loads.csv: max loads of 2 assessor(s)" in out
    assert f"--max-load {cap} for every assessor" in out and "from subjects.csv: subjects of 50 name(s)" in out
    # a rule file without its header, or with a bad number, is named by file, row and column
    pd.DataFrame([("A01", "P001")]).to_csv(tmp_path / "bare.csv", index=False, header=False)
    assert main([*argv[:4], "--conflicts", str(tmp_path / "bare.csv")]) == 2
    assert "bare.csv, row 1 (--conflicts): no column headed" in capsys.readouterr().err
    pd.DataFrame([("A01", "many")], columns=["Assessor", "Max load"]).to_csv(tmp_path / "bad.csv", index=False)
    assert main([*argv[:4], "--loads", str(tmp_path / "bad.csv")]) == 2
    assert "bad.csv, row 2, column Max load (B2)" in capsys.readouterr().err
    assert main([*argv[:4], "--subjects", str(tmp_path / "subjects.txt")]) == 2
    assert "--subjects: give a .csv file" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- spreadsheet function
def test_udf_applies_conflicts_loads_and_subjects():
    from udf_registry.calibration import calib_next_reads

    ev = PANEL.evaluations
    col = lambda values: [[v] for v in values]  # noqa: E731
    A = list(RESULT.biases.index)
    read = set(zip(ev.assessor, ev.object))
    conflicts = [(a, o) for a in A for o in RESULT.values.index if (a, o) not in read][::5] + [("Ghost", "P001")]
    load = ev.assessor.value_counts()
    loads = [["Assessor", "Max load"], [A[0], int(load[A[0]])], [A[1], int(load[A[1]]) + 1]]
    subjects = [["Name", "Subjects"]] + [[n, "; ".join(s)] for n, s in _subjects(PANEL).items() if n in A] + \
        [[o, s] for o, s in _subjects(PANEL).items() if o not in A]
    cells = calib_next_reads(col(ev.assessor), col(ev.object), col(ev.score), col(ev.level), 6, 8, None, 20, None,
                             None, None, True, [["Conflict assessor", "Conflict object"], *map(list, conflicts)],
                             loads, subjects)
    rows = list(cells)
    assert rows[0] == ["order", "assessor", "object", "confidence", "level", "gain", "p_above", "se_before",
                       "se_after", "settles", "reason"]
    core = RESULT.next_reads(6, top_k=8, conflicts=conflicts[:-1], suitability=_subjects(PANEL),
                             max_load={**{a: 20 for a in A}, A[0]: int(load[A[0]]), A[1]: int(load[A[1]]) + 1})
    assert [r[1:3] for r in rows[1:]] == [list(p) for p in zip(core.assessor, core.object)]
    assert [r[-1] for r in rows[1:]] == list(core.reason)
    assert all(r[1] != A[0] for r in rows[1:])


def test_module_examples_run():
    import doctest

    from xlcalib.calibration.decide import next_reads

    failures, attempted = doctest.testmod(next_reads)[:2]
    assert attempted >= 3 and failures == 0


def test_the_default_model_plans_with_the_ranking_s_chances():
    """The chance a suggestion quotes is the Ranking's P(above the line): both come from the decision basis."""
    frame = _sd_panel()
    result = xlcalib.calibrate(frame, sd="sd")
    X = float(result.values.value.median())
    picks = result.next_reads(3, threshold=X)
    ranking = result.ranking(threshold=X, draws=500)
    for row in picks.itertuples():
        assert row.p_above == pytest.approx(ranking.at[row.object, "p_above"], abs=1e-9)


def test_pending_reads_are_taken_as_reads_that_will_come():
    """Asking in rounds while the first round is still pending: the second call, told the first round's reads
    are pending, continues the greedy choice exactly as one call for both rounds would (a covariance needs no
    score) -- it does not pile reads onto the objects the pending ones already settle."""
    both = RESULT.next_reads(8, top_k=6)
    first = RESULT.next_reads(4, top_k=6)
    second = RESULT.next_reads(4, top_k=6, pending=list(zip(first.assessor, first.object)))
    assert list(zip(first.assessor, first.object)) == list(zip(both.assessor, both.object))[:4]
    assert list(zip(second.assessor, second.object)) == list(zip(both.assessor, both.object))[4:]
    np.testing.assert_allclose(second.se_after, both.se_after[4:], rtol=1e-9)
    # without them taken in, the second call would start from the panel as it is and repeat the first round
    read = set(zip(PANEL.evaluations.assessor, PANEL.evaluations.object)) | set(zip(first.assessor, first.object))
    others = [(a, o) for a in RESULT.biases.index for o in RESULT.values.index if (a, o) not in read]
    blind = RESULT.next_reads(4, top_k=6, candidates=others)
    assert list(zip(blind.assessor, blind.object)) != list(zip(second.assessor, second.object))


def test_udf_reads_blank_scores_as_pending_reads():
    """In a spreadsheet the Evaluations table fills in during the panel: rows whose score (and level) is still
    blank are pending reads -- left out of the fit, counted in the loads, never suggested, taken as reads that
    will come -- as on the workbook path; a blank level beside a score is still an error naming its cell, and
    an error found after pending rows names the rows of the ranges the user selected."""
    from udf_registry.calibration import calib_next_reads, calib_values

    ev = PANEL.evaluations.reset_index(drop=True)
    read = set(zip(ev.assessor, ev.object))
    extra = [(a, o) for a in RESULT.biases.index for o in RESULT.values.index if (a, o) not in read][:3]
    col = lambda values: [[v] for v in values]  # noqa: E731
    cells = [col(list(ev.assessor) + [a for a, _ in extra]), col(list(ev.object) + [o for _, o in extra]),
             col([float(x) for x in ev.score] + [None] * 3), col(list(ev.level) + [None, "", "High"])]
    values = calib_values(*cells)
    assert values == calib_values(col(ev.assessor), col(ev.object), col([float(x) for x in ev.score]), col(ev.level))
    cap = int(ev.assessor.value_counts().max()) + 1
    rows = calib_next_reads(*cells, 6, 8, None, cap)
    core = RESULT.next_reads(6, top_k=8, max_load=cap, pending=extra)
    assert [r[1:3] for r in rows[1:]] == [list(p) for p in zip(core.assessor, core.object)]
    assert not set(map(tuple, (r[1:3] for r in rows[1:]))) & set(extra)
    assert core.attrs["rules"][1].startswith("pending reads (allocated, no score yet): 3")

    blank_level = [c if i != 3 else c[:5] + [[None]] + c[6:] for i, c in enumerate(cells)]
    assert calib_values(*blank_level) == "xlcalib: row 6 of the uncertainty range is blank; a name or id is required"
    repeated = [c + [c[4]] for c in cells]  # row 5 entered again, below the pending rows
    message = calib_values(*repeated)
    assert message.startswith("xlcalib: assessor") and f"(rows 5, {len(ev) + 4} of the ranges)" in message


def test_next_reads_standard_errors_say_whose_they_are():
    """Next reads weigh reads on the decisions' posterior (the default model draws decisions from random-both,
    and a line of places measures relative to the line): its standard errors differ from the Values table's,
    so every place that shows them says which they are (one number per quantity, or a label)."""
    from xlcalib.calibration.panel.simulate import simulate_panel
    from xlcalib.cli import next_reads_text
    from xlcalib.presentation import next_reads_sheet

    ev = simulate_panel(16, 80, 3, seed=3).evaluations.drop(columns="sd")
    r = xlcalib.calibrate(ev)
    table = r.next_reads(3, top_k=10)
    values_se = r.values.loc[table["object"], "se"].to_numpy()
    assert not np.allclose(table["se_before"].to_numpy(), values_se, rtol=1e-3)  # two different numbers ...
    basis = table.attrs["se_basis"]
    assert "random-both" in basis and "Values table" in basis and "random-assessors" in basis  # ... labelled
    assert f"Standard errors here are {basis}." in next_reads_text(table)
    sheet = next_reads_sheet(table, [["next reads"]])
    assert "decision SE now" in sheet.frame.columns and "standard error now" not in sheet.frame.columns
    assert any(basis in str(row) for row in sheet.footer)
