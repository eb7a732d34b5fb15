# scripts/draft_prompts.py — adapter: one repository's functions → drafted prompts.
from dlbench.logs import script_logging
from dlbench.tasks.prompts import draft_prompts_file

with script_logging(snakemake.log[0]):
    params = snakemake.params
    draft_prompts_file(snakemake.input.functions, snakemake.output[0], params.prompts, params.storage.llm_cache)
