# dlbench: rebuild and run the DL-Bench benchmark. No logic here: see workflow/rules/.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"


wildcard_constraints:
    # never holding ".repaired": images/{repo}.repaired.json is gold's record, not a repository's
    repo=r"(?:(?!\.repaired)[A-Za-z0-9_.\-])+",
    topic=r"[a-z0-9\-]+",
    snapshot=r"[A-Za-z0-9_.\-]+",
    model="|".join(re.escape(m) for m in {*CFG.model_names(), *CFG.ds1000_models()}),
    technique="|".join(re.escape(t) for t in {t for _, t in [*model_techniques(), *ds1000_model_techniques()]}),
    cutoff=r"\d{4}-\d{2}-\d{2}",


include: "workflow/rules/collect.smk"
include: "workflow/rules/mine.smk"
include: "workflow/rules/tasks.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/harness.smk"
include: "workflow/rules/mutation_agreement.smk"
include: "workflow/rules/ds1000.smk"
include: "workflow/rules/report.smk"


report: "workflow/report/workflow.rst"


# Run on the submitting host under a cluster executor: these need the network (GitHub,
# git remotes), which compute nodes often lack, or are too small to be worth a job.
localrules:
    all,
    crawl_topic,
    merge_crawl,
    select_repos,
    clone_repo,
    export_annotation,
    merge_labels,
    assemble,
    export_environments,
    dataset_card,
    validate_tasks,
    generation_usage,
    tables,
    live_tables,
    export_failures,
    merge_failures,
    export_stage_check,
    score_stage_check,
    ds1000_problems,
    ds1000_tables,


rule all:
    input:
        "results/tables.csv",
        get_live_tables,
        "results/validation.csv",
        "results/benchmark/dlbench.jsonl",
        "results/benchmark/README.md",
        "results/labels/sheet.xlsx",
        "results/failures/sheet.xlsx",
        get_optional_targets,
