#!/usr/bin/env bash
# torchtitan launch for job pretrain. Source: torchtitan v0.2.2 (2026-02-20) torchtitan/config/job_config.py, run_train.sh and multinode_trainer.slurm.
set -euo pipefail
python -c 'import importlib.metadata as m, sys; sys.exit(m.version("torchtitan") != "0.2.2")' 2>/dev/null || { echo 'job.toml is for torchtitan 0.2.2: pip install torchtitan==0.2.2'; exit 2; }
torchrun --nnodes=2 --node-rank=$NODE_RANK --nproc-per-node=8 --master-addr=$MASTER_ADDR --master-port=29500 -m torchtitan.train --job.config_file ./job.toml
