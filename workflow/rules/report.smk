# Report: pass@k tables, readable tables, plots, and live slices, all from evaluation files.
# Logic lives in dlbench.report; each rule maps its files to one call (scripts/<rule>.py).


rule tables:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        validation="results/validation.csv",
        evaluations=get_evaluations(),
        paper=[CFG.report.paper_results] if CFG.report.paper_results else [],
        usage="results/usage.csv",  # rule generation_usage (generate.smk)
    output:
        csv=report("results/tables.csv", caption="../report/tables.rst", category="Tables"),
        tables=report(
            directory("results/tables"),
            patterns=["{name}.md"],
            caption="../report/readable_tables.rst",
            category="Tables",
        ),
        plots=report(
            directory("results/plots"),
            patterns=["{name}.png"],
            caption="../report/plots.rst",
            category="Plots",
        ),
    params:
        report=CFG.report.model_dump(mode="json"),  # k, cutoffs, threshold: a change reruns the tables
    log:
        "logs/tables.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/tables.py"


rule live_tables:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        validation="results/validation.csv",
        evaluations=get_evaluations(),
    output:
        report("results/live/{cutoff}/tables.csv", caption="../report/live_tables.rst", category="Live slices"),
    params:
        k=CFG.report.k,
    log:
        "logs/live_tables/{cutoff}.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/live_tables.py"
