# scripts/classify_stages.py — adapter: fine-tune the stage classifier, cross-validate it, predict every task's stage.
from dlbench.generate.classifier import classify_stages_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    out = snakemake.output
    classify_stages_file(
        snakemake.input[0], out.predictions, out.report, out.model, snakemake.params.stages, snakemake.threads
    )
