#!/usr/bin/env bash
# LLaMA-Factory launch for job qlora. Source: LLaMA-Factory main ff6d4d1 (0.9.6.dev0), src/llamafactory/hparams, 2026-08-18, src/llamafactory/launcher.py.
# Needs LLaMA-Factory 0.9.5 or later (pip install llamafactory==0.9.5): every key checked against 0.9.5's hparams.
set -euo pipefail
FORCE_TORCHRUN=1 llamafactory-cli train train.yaml
