# scripts/tables.py — adapter: evaluations + benchmark + validation (+ failure labels) → tables.csv, tables/, plots/,
# manifest.json, and a copy of them all in results/runs/{run_id}/.
from pathlib import Path

from dlbench.generate.ds1000 import BENCHMARK
from dlbench.logs import script_logging
from dlbench.report.failures import write_table6
from dlbench.report.manifest import archive_run, build_manifest, manifest_text
from dlbench.report.render import write_report
from dlbench.store import write_text

with script_logging(snakemake.log[0]):
    inp, out = snakemake.input, snakemake.output
    paper = inp.paper[0] if inp.paper else None
    write_report(
        inp.benchmark,
        inp.evaluations,
        inp.validation,
        out.csv,
        out.tables,
        out.plots,
        snakemake.params.report,
        paper=paper,
        usage=inp.usage,
        models=snakemake.params.models.root,
        stages=inp.stages[0] if inp.stages else None,
        others={BENCHMARK: inp.ds1000[0]} if inp.get("ds1000") else None,  # a rule parsed before it existed has none
    )
    write_table6(inp.failures, out.tables, paper=paper)
    manifest = build_manifest(snakemake.params.run, inp.benchmark, inp.evaluations)
    write_text(Path(out.tables) / "run.md", manifest_text(manifest))
    archive_run(manifest, out.manifest, [out.csv, out.tables, out.plots], Path(out.manifest).parent / "runs")
