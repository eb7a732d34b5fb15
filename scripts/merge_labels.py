# scripts/merge_labels.py — adapter: drafted prompts + annotators' sheets → merged labels.
from dlbench.logs import script_logging
from dlbench.tasks.merge import MergePaths, merge_labels_files

with script_logging(snakemake.log[0]):
    out = snakemake.output
    paths = MergePaths(out.merged, out.agreement, out.disagreements)
    merge_labels_files(snakemake.input.prompts, snakemake.input.sheets, paths, snakemake.params.labels)
