# scripts/export_annotation.py — adapter: all prompts + functions → annotation sheets.
from dlbench.logs import script_logging
from dlbench.tasks.sheets import SheetPaths, export_sheets_files

with script_logging(snakemake.log[0]):
    out = snakemake.output
    paths = SheetPaths(out.csv, out.xlsx, out.labelstudio, out.labelstudio_config)
    export_sheets_files(snakemake.input.prompts, snakemake.input.functions, paths)
