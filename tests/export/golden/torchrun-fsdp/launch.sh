#!/usr/bin/env bash
# Launch for job sft. Sources: accelerate main 16cb6eb (1.15.0.dev0), src/accelerate/commands/launch.py and utils/dataclasses.py, 2026-07-24; parallelism checks of accelerate 1.16.0; torchrun from PyTorch 2.14.1 torch/distributed/run.py.
set -euo pipefail
# torchrun: for a script that builds its own FSDP2 mesh (fully_shard with reshard_after_forward=True, dp_shard=8, tp=2, cp=1)
torchrun --nnodes=2 --node-rank=$NODE_RANK --nproc-per-node=8 --master-addr=$MASTER_ADDR --master-port=29500 train.py --per_device_train_batch_size 1 --gradient_accumulation_steps 4 --max_steps 100 --gradient_checkpointing true
# or, for an accelerate script, the same placement through accelerate:
# accelerate launch --config_file accelerate_config.yaml --num_machines 2 --machine_rank $NODE_RANK --num_processes 16 --main_process_ip $MASTER_ADDR --main_process_port 29500 train.py --per_device_train_batch_size 1 --gradient_accumulation_steps 4 --max_steps 100 --gradient_checkpointing true
