#!/usr/bin/env bash
# Snakemake runs this in the rules' conda environment once dlbench.yaml has installed the lock:
# the package itself, without dependencies (the lock holds them, and pip refuses an editable
# install in hash-checking mode). Snakemake runs its copy from .snakemake/conda/, which, like
# this file's folder, is two folders below the project root.
set -euo pipefail
python -m pip install --no-deps -e "$(dirname "$0")/../.."
