# scripts/ds1000_stages.py — adapter: the stage classifier → each DS-1000 problem's predicted stage.
from dlbench.ds1000.generate import predict_stages
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    predict_stages(snakemake.input.model, snakemake.input.benchmark, snakemake.output[0], snakemake.threads)
