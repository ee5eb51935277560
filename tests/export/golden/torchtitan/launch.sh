#!/usr/bin/env bash
# torchtitan launch for job pretrain. Source: torchtitan v0.2.2 (2026-02-20) torchtitan/config/job_config.py, run_train.sh and multinode_trainer.slurm.
set -euo pipefail
torchrun --nnodes=2 --node-rank=$NODE_RANK --nproc-per-node=8 --master-addr=$MASTER_ADDR --master-port=29500 -m torchtitan.train --job.config_file ./job.toml
