"""The exercises' face: one table of runners, found by the report kind or by the name a template's Run main
writes; the command line offers exactly those kinds."""
from __future__ import annotations

import pytest

from xlcalib import exercises
from xlcalib.cli import main
from xlcalib.templates import KINDS, MACRO_ENTRIES


def test_every_template_kind_runs_its_exercise_by_the_name_its_run_main_writes():
    assert set(MACRO_ENTRIES) == set(KINDS)
    for kind, entry in MACRO_ENTRIES.items():
        run = exercises.runner(entry)
        assert run.__name__ == entry
        # the runner lives in the exercise module named like the template (one module per exercise)
        assert run.__module__ == f"xlcalib.exercises.{kind}"


def test_a_runner_is_found_by_its_report_kind_or_its_own_name_and_by_nothing_else():
    for kind, run in exercises.RUNNERS.items():
        assert exercises.runner(kind) is run and exercises.runner(run.__name__) is run
    with pytest.raises(KeyError):
        exercises.runner("calibrate_file")  # a job, not a runner on a book


def test_the_report_command_offers_exactly_the_runners(capsys):
    with pytest.raises(SystemExit) as info:
        main(["report", "design", "book.xlsx"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert all(f"'{kind}'" in err for kind in exercises.RUNNERS), err
