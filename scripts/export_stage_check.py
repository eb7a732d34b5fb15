# scripts/export_stage_check.py — adapter: other benchmarks' predicted stages → the manual-check sheet (a seeded sample).
from dlbench.logs import script_logging
from dlbench.report.paper_tables import benchmark_prompts
from dlbench.report.stage_check import export_check_sheet

with script_logging(snakemake.log[0]):
    check, out = snakemake.params.check, snakemake.output
    prompts = benchmark_prompts(snakemake.params.compare.benchmarks)
    export_check_sheet(snakemake.input.predictions, prompts, out.xlsx, out.csv, check.size, check.seed)
