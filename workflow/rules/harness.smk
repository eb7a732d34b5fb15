# Sandboxed evaluation: project images, candidate evaluation, benchmark validation.
# Logic lives in dlbench.harness; these rules only map files to calls.
from dlbench.harness.code import grader_files, support_files
from dlbench.store import files_digest


rule build_image:
    input:
        clone="results/repos/{repo}.json",
    output:
        "results/images/{repo}.json",
    params:
        build_log="logs/build_image/{repo}.build.log",
        evaluate=CFG.evaluate,
        images=CFG.images,
        storage=CFG.storage,  # the machine's download cache
        recipe=CFG.images.model_dump(mode="json"),  # a changed environment recipe rebuilds
        base_image=CFG.evaluate.base_image,  # and so does another base
        runner=files_digest(support_files()),  # and a new supervisor or plugin (they ship in the image)
    resources:
        docker=1,
    log:
        "logs/build_image/{repo}.log",
    benchmark:
        "benchmarks/build_image/{repo}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/build_image.py"


# What decides an evaluation's verdicts (not how fast they come): a change re-evaluates.
EVALUATE_PARAMS = dict(
    backend=BACKEND,
    harness=files_digest(support_files() | grader_files()),  # new harness code re-evaluates
    evaluate=CFG.evaluate,
    # limits, screen, gold runs, task sample (a run's subset only when set: SUBSET_PARAMS)
    limits=CFG.evaluate.model_dump(mode="json", exclude={"jobs", "backend", "preload", *SUBSET_KEYS}),
    **SUBSET_PARAMS,
)


rule evaluate:
    input:
        unpack(get_evaluate_inputs),
        # every model but gold is graded on the tests gold's runs keep (dlbench.harness.testset)
        gold=lambda wc: [] if wc.model == "gold" else [f"results/evaluations/gold/{REFERENCE}/{wc.repo}.jsonl"],
        # and, within evaluate.test_budget_s, on the tests null fails first (null runs every kept test)
        null=lambda wc: [] if wc.model in ("gold", "null") or not CFG.evaluate.test_budget_s
        else [f"results/evaluations/null/{REFERENCE}/{wc.repo}.jsonl"],
    output:
        "results/evaluations/{model}/{technique}/{repo}.jsonl",
    params:
        **EVALUATE_PARAMS,
    threads: CFG.evaluate.jobs
    resources:
        docker=1 if BACKEND == "docker" else 0,
    log:
        "logs/evaluate/{model}/{technique}/{repo}.log",
    benchmark:
        "benchmarks/evaluate/{model}/{technique}/{repo}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/evaluate.py"


if BACKEND == "docker":

    # Gold's runs may repair the image (dlbench.harness.gold); the other models run on the
    # image gold settled on, results/images/{repo}.repaired.json.
    ruleorder: evaluate_gold > evaluate

    rule evaluate_gold:
        input:
            generations=f"results/generations/gold/{REFERENCE}/{{repo}}.jsonl",
            benchmark="results/benchmark/dlbench.jsonl",
            clone="results/repos/{repo}.json",
            image="results/images/{repo}.json",
        output:
            evaluations=f"results/evaluations/gold/{REFERENCE}/{{repo}}.jsonl",
            image="results/images/{repo}.repaired.json",
        params:
            **EVALUATE_PARAMS,
            images=CFG.images,
            storage=CFG.storage,  # the machine's download cache, for a rebuild
            repair_log="logs/build_image/{repo}.repair.log",
        threads: CFG.evaluate.jobs
        resources:
            docker=1,
        log:
            f"logs/evaluate/gold/{REFERENCE}/{{repo}}.log",
        benchmark:
            f"benchmarks/evaluate/gold/{REFERENCE}/{{repo}}.tsv"
        conda:
            "../envs/dlbench.yaml"
        script:
            "../../scripts/evaluate_gold.py"


rule validate_tasks:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        gold=get_evaluations(["gold"]),
        null=get_evaluations(["null"]),
    output:
        "results/validation.csv",
    params:
        evaluate=CFG.evaluate,
        min_tests=CFG.mine.min_tests,
        sample=[CFG.evaluate.sample_tasks, CFG.evaluate.sample_seed],
        **SUBSET_PARAMS,
    log:
        "logs/validate_tasks.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/validate_tasks.py"
