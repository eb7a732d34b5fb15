# scripts/import_published.py — adapter: the DL-Bench authors' task files + repositories → benchmark records.
from dlbench.logs import script_logging
from dlbench.tasks.published import import_published_files

with script_logging(snakemake.log[0]):
    inp, out, params = snakemake.input, snakemake.output, snakemake.params
    import_published_files(
        inp.tasks,
        inp.repos,
        params.work,
        out.tasks,
        out.rows,
        params.mine,
        params.storage.parse_cache,
        params.published.min_tests,
    )
