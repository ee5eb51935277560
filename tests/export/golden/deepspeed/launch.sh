#!/usr/bin/env bash
# DeepSpeed launch for job sft. Source: DeepSpeed docs/_pages/config-json.md and deepspeed/launcher/runner.py, main edaa722 (0.19.6), 2026-08-22.
set -euo pipefail
# hostfile: one line per node, `<hostname> slots=<GPUs>`; written here from NODE_LIST/host names you fill in
test -f hostfile || { echo 'write hostfile: 2 lines <host> slots=8'; exit 2; }
deepspeed --hostfile=hostfile --no_ssh --num_nodes=2 --num_gpus=8 --node_rank=$NODE_RANK --master_addr=${MASTER_ADDR} --master_port=29500 train.py --deepspeed --deepspeed_config ds_config.json
