"""Names, paths and small helpers shared by the sample-world scripts and their tests."""
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
BUNDLES = HERE / "bundles"
REPOS_JSON = HERE / "github" / "repos.json"
TRUTH = HERE / "truth.jsonl"
EXPERT_LABELS = HERE / "expert_labels.csv"
LABELS_DIR = HERE / "labels"

OWNER = "dlbench-sample"
# The five libraries that carry benchmark tasks; their package dir has the same name.
LIBRARIES = ("visionkit", "textkit", "recokit", "nnkit", "tskit")
# Distractor repositories that need content (selection drops them after cloning).
CONTENT_DISTRACTORS = {"dl-snippets": "deepnotes", "linkcheck": "webtools-dev"}
MIN_TESTS_PER_TASK = 3
# How a library's own suite runs: plugins of the calling venv and cache files stay out.
SUITE_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
SUITE_ARGS = ("-m", "pytest", "-q", "-p", "no:cacheprovider")


def load_repos() -> list:
    """The stand-in's repository objects (github/repos.json)."""
    return json.loads(REPOS_JSON.read_text(encoding="utf-8"))


def clone_bundle(name: str, dest: Path) -> Path:
    """Clone ``bundles/<name>.bundle`` into ``dest`` (branch main checked out)."""
    subprocess.run(["git", "clone", "-q", "-b", "main", str(BUNDLES / f"{name}.bundle"), str(dest)],
                   check=True, capture_output=True)
    return dest
