# Report: pass@k tables, readable tables, plots, and live slices, all from evaluation files.
# Logic lives in dlbench.report; each rule maps its files to one call (scripts/<rule>.py).


rule tables:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        validation="results/validation.csv",
        evaluations=get_evaluations(),
        paper=[CFG.report.paper_results] if CFG.report.paper_results else [],
        usage="results/usage.csv",  # rule generation_usage (generate.smk)
        failures="results/failures/merged.jsonl",  # rule merge_failures: Table 6
        # Table 4: other benchmarks' stages (rule classify_benchmarks), when compare.benchmarks names any
        stages=["results/stages/benchmarks.jsonl"] if CFG.compare.benchmarks else [],
        # Tables 1 and 5's DS-1000 rows and the separability statistics (rule ds1000_tables), when enabled
        ds1000=["results/ds1000/tables.csv"] if CFG.ds1000.enabled else [],
    output:
        csv=report_built("results/tables.csv", caption="../report/tables.rst", category="Tables"),
        tables=report_built(
            directory("results/tables"),
            patterns=["{name}.md"],
            caption="../report/readable_tables.rst",
            category="Tables",
        ),
        plots=report_built(
            directory("results/plots"),
            patterns=["{name}.png"],
            caption="../report/plots.rst",
            category="Plots",
        ),
        # what the run was made from; the run's tables are also copied to results/runs/{run_id}/
        manifest=report_built("results/manifest.json", caption="../report/manifest.rst", category="Run"),
    params:
        report=CFG.report,
        run=RUN,  # not hashed: when and from which commit reruns no table
        settings=CFG.report.model_dump(mode="json"),  # k, cutoffs, threshold: a change reruns the tables
        models=ModelTable(CFG.models),  # not hashed: how a model is called reruns no table
        # how our models meet the paper's rows (its names, Table 7 at temperature 0.3)
        paper_names={name: [m.paper_name, m.temperature] for name, m in CFG.models.items()},
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
        # in the report once built (`all` builds them; results/tables.csv does not)
        report_built(
            "results/live/{cutoff}/tables.csv",
            {"cutoff": CUTOFFS},
            caption="../report/live_tables.rst",
            category="Live slices",
        ),
    params:
        report=CFG.report,
        k=CFG.report.k,
    log:
        "logs/live_tables/{cutoff}.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/live_tables.py"


# The paper's failure taxonomy (Table 6): the automatic first pass and the sheet people
# confirm or correct, then the annotators' majority (results/failures/merged.jsonl feeds
# the tables rule's table6_failures.md).
rule export_failures:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        evaluations=get_evaluations(),
        generations=get_generations,
    output:
        auto="results/failures/auto.jsonl",
        sheet=report_built("results/failures/sheet.xlsx", category="Failures"),
    log:
        "logs/export_failures.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/export_failures.py"


rule merge_failures:
    input:
        auto="results/failures/auto.jsonl",
        sheets=CFG.failures.sheets,
    output:
        "results/failures/merged.jsonl",
    log:
        "logs/merge_failures.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/merge_failures.py"


# The paper's comparison with other benchmarks (run when compare.benchmarks names any).
rule compare_benchmarks:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        others=[b.path for b in CFG.compare.benchmarks],
    output:
        tasks="results/compare/tasks.csv",
        similarity="results/compare/similarity.csv",
        summary=report_built("results/compare/summary.md", category="Comparison"),
        plots=report_built(expand("results/compare/tsne_{kind}.png", kind=["prompt", "code"]), category="Comparison"),
    params:
        compare=CFG.compare,
        settings=CFG.compare.model_dump(mode="json"),  # names, formats, perplexity, seed: a change reruns it
    log:
        "logs/compare_benchmarks.log",
    benchmark:
        "benchmarks/compare_benchmarks.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/compare_benchmarks.py"
