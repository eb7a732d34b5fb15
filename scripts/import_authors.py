# scripts/import_authors.py — adapter: the DL-Bench authors' tasks + this build's clones and mining → rows, records, summary.
from dlbench.logs import script_logging
from dlbench.tasks.authors import import_authors_files

with script_logging(snakemake.log[0]):
    inp, out, params = snakemake.input, snakemake.output, snakemake.params
    import_authors_files(
        params.authors.source,
        params.authors.dleval,
        params.authors.aliases,
        inp.clones,
        inp.functions,
        params.work,
        out.rows,
        out.tasks,
        out.summary,
    )
