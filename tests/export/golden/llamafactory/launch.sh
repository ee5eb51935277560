#!/usr/bin/env bash
# LLaMA-Factory launch for job qlora. Source: LLaMA-Factory main ff6d4d1 (0.9.6.dev0), src/llamafactory/hparams, 2026-08-18, src/llamafactory/launcher.py.
set -euo pipefail
FORCE_TORCHRUN=1 llamafactory-cli train train.yaml
