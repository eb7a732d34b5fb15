# scripts/classify_benchmarks.py — adapter: other benchmarks' prompts (compare.benchmarks) → their predicted stages.
from dlbench.generate.classifier import classify_prompts
from dlbench.logs import script_logging
from dlbench.report.paper_tables import benchmark_prompts

with script_logging(snakemake.log[0]):
    prompts = benchmark_prompts(snakemake.params.compare.benchmarks)
    classify_prompts(snakemake.input.model, prompts, snakemake.output[0], snakemake.threads)
