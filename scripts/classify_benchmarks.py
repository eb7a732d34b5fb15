# scripts/classify_benchmarks.py — adapter: other benchmarks' prompts (compare.benchmarks) → their predicted stages.
from dlbench.generate.classifier import classify_prompts
from dlbench.logs import script_logging
from dlbench.report.external import load_benchmark

with script_logging(snakemake.log[0]):
    sources = snakemake.params.compare.benchmarks
    prompts = [(t.benchmark, t.task_id, t.prompt) for s in sources for t in load_benchmark(s.path, s.format, s.name)]
    classify_prompts(snakemake.input.model, prompts, snakemake.output[0], snakemake.threads)
