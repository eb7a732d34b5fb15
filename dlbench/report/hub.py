"""What makes the exported benchmark a Hugging Face dataset: the card's YAML metadata.

The metadata is derived from the files it describes: the features and the split's size from
the Arrow table the Parquet file is written from (``tasks.assemble.tasks_table``),
the licenses from the tasks' ``license`` column, so ``datasets.load_dataset`` on the folder
gets the declared features and split size or fails (tests/test_tasks_hub.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from dlbench.records import BenchmarkTask
from dlbench.tasks.assemble import tasks_table

PRETTY_NAME = "DL-Bench (rebuilt)"
DATA_FILE = "dlbench.parquet"  # the default config's data (the JSON Lines file holds the same rows)
SPLIT = "test"  # a benchmark is evaluation data only
REPOS_FILE = "repos.csv"  # every repository with its license, kept or not
TAGS = ["code", "code-generation", "deep-learning", "python", "pytest", "benchmark"]
# The Hub's license identifiers (huggingface.co/docs/hub/repositories-licenses).
HUB_LICENSES = frozenset(
    """
apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0 bigcode-openrail-m
afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5
cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0 cc-by-nc-nd-3.0
cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0 cdla-permissive-1.0
cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1
lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odc-by odbl openrail++ osl-3.0 postgresql ofl-1.1 ncsa unlicense zlib pddl
lgpl-lr deepfloyd-if-license llama2 gemma unknown other
""".split()
)
UNKNOWN, OTHER = "unknown", "other"
# Arrow types of the benchmark's columns as the Hub's dtypes (datasets.Value).
DTYPES = {
    pa.string(): "string",
    pa.int64(): "int64",
    pa.date32(): "date32",
    pa.bool_(): "bool",
    pa.float64(): "float64",
}
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def hub_license(spdx: str | None) -> str:
    """A repository's SPDX id as a Hub license id: ``Apache-2.0`` → ``apache-2.0``, ``GPL-3.0-only``
    → ``gpl-3.0``; none (or GitHub's NOASSERTION) → ``unknown``; one the Hub does not list → ``other``."""
    if spdx is None or spdx.upper() == "NOASSERTION":
        return UNKNOWN
    name = spdx.lower().removesuffix("-only").removesuffix("-or-later")
    return name if name in HUB_LICENSES else OTHER


def features(schema: pa.Schema) -> list[dict[str, str]]:
    """``dataset_info.features`` of an Arrow schema. Lists as ``sequence:`` (datasets 2 and 3 read
    only that; 4 and later read it as their ``list:``)."""
    out = []
    for field in schema:
        if pa.types.is_list(field.type):
            out.append({"name": field.name, "sequence": _dtype(field.type.value_type, field.name)})
        else:
            out.append({"name": field.name, "dtype": _dtype(field.type, field.name)})
    return out


def _dtype(arrow: pa.DataType, column: str) -> str:
    if arrow not in DTYPES:
        raise ValueError(f"column {column}: no Hub dtype for Arrow type {arrow}")
    return DTYPES[arrow]


def size_category(rows: int) -> str:
    return next((name for limit, name in SIZES if rows < limit), "n>1M")


def repo_licenses(tasks: Sequence[BenchmarkTask]) -> dict[str, str | None]:
    """Each repository with tasks and its SPDX license (the tasks' ``license`` column)."""
    return dict(sorted({t.repo: t.license for t in tasks}.items()))


def metadata(tasks: Sequence[BenchmarkTask]) -> dict:
    """The card's YAML metadata: licenses, the default config, features, size, categories
    (``datasets`` checks the split's ``num_examples`` when loading)."""
    table = tasks_table(tasks)
    licenses = sorted({hub_license(spdx) for spdx in repo_licenses(tasks).values()}) or [UNKNOWN]
    data: dict = {"pretty_name": PRETTY_NAME, "license": licenses}
    if OTHER in licenses:  # the Hub asks a name and a text for `other`: repos.csv names each repository's
        data |= {"license_name": "per-repository", "license_link": REPOS_FILE}
    return data | {
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": TAGS,
        "size_categories": [size_category(len(tasks))],
        "configs": [{"config_name": "default", "data_files": [{"split": SPLIT, "path": DATA_FILE}]}],
        "dataset_info": {
            "config_name": "default",
            "features": features(table.schema),
            "splits": [{"name": SPLIT, "num_bytes": parquet_nbytes(table), "num_examples": table.num_rows}],
        },
    }


def parquet_nbytes(table: pa.Table) -> int:
    """The Arrow size of ``table`` as read back from Parquet (every column then has a validity
    bitmap), the split size ``datasets`` records."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return pq.read_table(pa.BufferReader(sink.getvalue())).nbytes


def front_matter(tasks: Sequence[BenchmarkTask]) -> str:
    return "---\n" + yaml.safe_dump(metadata(tasks), sort_keys=False, allow_unicode=True) + "---\n"
