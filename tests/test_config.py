"""Bad configuration fails before any job runs, with one message naming the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dlbench.config import ConfigError, json_schema, load_config, load_config_file

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = yaml.safe_load((ROOT / "config/config.yaml").read_text())


def with_change(path: str, value) -> dict:
    """The default config with one dotted key set (or deleted when value is ...)."""
    raw = json.loads(json.dumps(DEFAULT, default=str))
    *parents, leaf = path.split(".")
    node = raw
    for part in parents:
        node = node[part]
    if value is ...:
        del node[leaf]
    else:
        node[leaf] = value
    return raw


BAD = {
    "unknown key": (with_change("crawl.per_topicc", 5), "config key 'crawl.per_topicc': unknown key"),
    "unknown top-level key": (with_change("modles", {}), "config key 'modles': unknown key"),
    "wrong type": (
        with_change("mine.min_tests", "three"),
        "config key 'mine.min_tests': Input should be a valid integer",
    ),
    "wrong type in list": (with_change("report.k", [1, "x"]), "config key 'report.k.1'"),
    "out of range": (
        with_change("evaluate.timeout_s", -1),
        "config key 'evaluate.timeout_s': Input should be greater than 0",
    ),
    "missing file": (with_change("topics", "resources/no-such-topics.txt"), "config key 'topics': file not found"),
    "missing label sheet": (with_change("labels.sheets", ["nope.csv"]), "config key 'labels.sheets.0': file not found"),
    "unknown model": (
        with_change("generate.models", ["gold", "null", "gpt-5"]),
        "config key 'generate.models.2': unknown model 'gpt-5'",
    ),
    "unknown provider": (with_change("models.gold", {"provider": "anthropic"}), "config key 'models.gold.provider'"),
    "openai model without id": (
        with_change("models.gpt", {"provider": "openai"}),
        "config key 'models.gpt': provider 'openai' needs 'model'",
    ),
    "unquoted null key": ({"models": {None: {"provider": "null"}}}, "quote it"),
    "bad backend": (with_change("evaluate.backend", "podman"), "config key 'evaluate.backend'"),
    "bad date": (with_change("report.cutoffs", ["2024-13-01"]), "config key 'report.cutoffs.0'"),
    # a storage location's old key names the key that replaced it
    "old parse cache": (
        with_change("mine.cache_dir", ".cache/p"),
        "config key 'mine.cache_dir': moved to storage.parse_cache",
    ),
    "old prompts cache": (
        with_change("prompts.cache_dir", ".cache/l"),
        "config key 'prompts.cache_dir': moved to storage.llm_cache",
    ),
    "old generate cache": (
        with_change("generate.cache_dir", ".cache/l"),
        "config key 'generate.cache_dir': moved to storage.llm_cache",
    ),
    "old download cache": (
        {"images": {"cache_dir": None}},
        "config key 'images.cache_dir': moved to storage.downloads",
    ),
    "unknown storage key": (with_change("storage.cache", "x"), "config key 'storage.cache': unknown key"),
}


def test_default_config_is_valid():
    cfg = load_config(DEFAULT, root=ROOT)
    assert cfg.model_names()[:2] == ["gold", "null"]


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_names_key(case):
    raw, expected = BAD[case]
    with pytest.raises(ConfigError) as info:
        load_config(raw, root=ROOT)
    message = str(info.value)
    assert expected in message
    assert "\n" not in message  # one message, not a traceback-like dump


def test_unreadable_yaml(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("crawl: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config_file(bad)


def test_schema_file_in_step():
    """workflow/schemas/config.schema.json is generated from the pydantic models."""
    on_disk = json.loads((ROOT / "workflow/schemas/config.schema.json").read_text())
    assert on_disk == json.loads(json.dumps(json_schema(), default=str))


@pytest.mark.parametrize("case", ["unknown key", "wrong type", "missing file", "unknown model"])
def test_snakemake_fails_before_any_job(case, tmp_path):
    raw, expected = BAD[case]
    configfile = tmp_path / "bad.yaml"
    configfile.write_text(yaml.safe_dump(json.loads(json.dumps(raw, default=str))))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(configfile), "--directory", str(ROOT)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert expected in output
    assert "Job stats" not in output and "rule " not in output.split("invalid configuration")[0]


def test_storage_names_every_location_apart(tmp_path, monkeypatch):
    """Each location is its own key (none derived from another); downloads: null is per user."""
    cfg = load_config(DEFAULT, root=ROOT).storage
    assert (cfg.parse_cache, cfg.llm_cache, cfg.journal, cfg.agreement_runs) == (
        ".cache/dlbench/parse",
        ".cache/dlbench/llm",
        ".cache/dlbench/journal",
        ".cache/dlbench/agreement-runs",
    )
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cfg.downloads is None and cfg.downloads_dir() == tmp_path / "xdg" / "dlbench" / "uv"
    moved = load_config(with_change("storage.llm_cache", "/elsewhere/llm"), root=ROOT).storage
    assert (moved.journal, moved.agreement_runs) == (cfg.journal, cfg.agreement_runs)
    assert load_config({"storage": {"downloads": "~/dl"}}, root=ROOT).storage.downloads_dir() == Path.home() / "dl"
