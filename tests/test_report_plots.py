"""Report figures: written as real PNG images, and left out (with a note) when data is missing."""

from __future__ import annotations

import logging
from pathlib import Path

import matplotlib.image as mpimg

from dlbench.report.plots import write_plots
from dlbench.report.tables import adequacy_table, load_inputs, long_table
from tests.test_report_tables import CFG, make_world

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def plots_of(root: Path, with_mutant: bool) -> list[Path]:
    world = make_world(root, with_mutant=with_mutant)
    inputs = load_inputs(world["benchmark"], world["evaluations"], world["validation"])
    table = long_table(inputs, ["all", "after-2024-01-01", "after-2024-06-01"], CFG.k)
    return write_plots(table, adequacy_table(inputs, 0.5), 0.5, root / "plots")


def assert_png(path: Path) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE, path
    pixels = mpimg.imread(path)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100, path
    assert pixels.std() > 0.01, f"{path} is blank"


def test_every_plot_is_a_valid_png(tmp_path):
    written = plots_of(tmp_path, with_mutant=True)
    names = sorted(p.name for p in written)
    assert names == sorted(
        [
            "pass1_stage.png",
            "pass1_task.png",
            "pass1_data.png",
            "pass1_cutoff.png",
            "mutant_kill_stage.png",
            "mutant_kill_task.png",
            "mutant_kill_data.png",
        ]
    )
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == names  # no temporary files left
    for path in written:
        assert_png(path)


def test_kill_rate_plots_are_skipped_with_a_note_without_mutants(tmp_path, caplog):
    with caplog.at_level(logging.INFO):
        written = plots_of(tmp_path, with_mutant=False)
    assert not any(p.name.startswith("mutant_kill") for p in written)
    assert "model 'mutant' was not evaluated" in caplog.text
    assert {p.name for p in written} >= {"pass1_stage.png", "pass1_cutoff.png"}
