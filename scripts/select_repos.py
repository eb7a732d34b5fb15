# scripts/select_repos.py — adapter: crawl + config/repos.yaml → selection with reasons.
from dlbench.collect.select import select_file
from dlbench.config import LocalRepo
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    inp, out, params = snakemake.input, snakemake.output, snakemake.params
    local_repos = [LocalRepo.model_validate(r) for r in params.local_repos]
    crawl, overrides = inp.repos[0] if inp.repos else None, inp.overrides[0] if inp.overrides else None
    select_file(crawl, overrides, out.jsonl, out.csv, params.crawl, params.select, local_repos)
