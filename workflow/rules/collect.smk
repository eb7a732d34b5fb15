# Collect: crawl GitHub topics, merge them, select repositories, clone the kept ones.
# Logic lives in dlbench.collect; each rule maps its files to one call (scripts/<rule>.py).


rule crawl_topic:
    # No file input on purpose: editing topics.txt must not re-crawl the topics already in
    # the snapshot. A changed query (params) does re-crawl; a new snapshot name starts afresh.
    output:
        "results/crawl/{snapshot}/topic/{topic}.jsonl",
    params:
        crawl=CFG.crawl,
        query=CFG.crawl.model_dump(mode="json", include={"endpoint", "standin_data", "per_topic", "language", "pushed_after"}),
    log:
        "logs/crawl_topic/{snapshot}/{topic}.log",
    benchmark:
        "benchmarks/crawl_topic/{snapshot}/{topic}.tsv"
    resources:
        github_api=1,
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/crawl_topic.py"


rule merge_crawl:
    input:
        expand("results/crawl/{{snapshot}}/topic/{topic}.jsonl", topic=TOPICS),
    output:
        "results/crawl/{snapshot}/repos.jsonl",
    log:
        "logs/merge_crawl/{snapshot}.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/merge_crawl.py"


checkpoint select_repos:
    input:
        repos=[f"results/crawl/{SNAPSHOT}/repos.jsonl"] if CFG.crawl.enabled else [],
        overrides=[CFG.repos_file] if CFG.repos_file and CFG.crawl.enabled else [],
    output:
        jsonl="results/select/repos.jsonl",
        csv=report_built("results/select/repos.csv", category="Collect"),
    params:
        crawl=CFG.crawl,  # the GitHub API the content checks read
        select=CFG.select,
        shaping=CFG.select.model_dump(mode="json"),
        local_repos=[r.model_dump(mode="json") for r in CFG.local_repos],  # a list: compared, so plain values
    log:
        "logs/select_repos.log",
    benchmark:
        "benchmarks/select_repos.tsv"
    resources:
        github_api=1,
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/select_repos.py"


rule clone_repo:
    # The checkout folder results/repos/{repo}/ is not a declared output: Snakemake would
    # delete it before a rerun, and reusing it is what makes reruns cheap.
    input:
        selection="results/select/repos.jsonl",
    output:
        "results/repos/{repo}.json",
    log:
        "logs/clone_repo/{repo}.log",
    params:
        crawl=CFG.crawl,  # retries and backoff of the clone
    benchmark:
        "benchmarks/clone_repo/{repo}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/clone_repo.py"
