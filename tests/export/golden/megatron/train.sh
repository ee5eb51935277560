#!/usr/bin/env bash
# Megatron-LM launch for job pretrain. Source: Megatron-LM megatron/training/arguments.py, main d98e8a6 (after core_v0.19.0), 2026-08-22.
# Set LR, schedule and data to your recipe: the planner chooses the layout, not the learning rate.
# Architecture flags the catalog does not record (normalization, position embedding, biases)
# must be added for your model.
set -euo pipefail
: "${DATA_PATH:?set DATA_PATH to your Megatron data prefix}"
: "${CKPT_DIR:?set CKPT_DIR}"
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nnodes=2 --node-rank=$NODE_RANK --nproc-per-node=8 --master-addr=$MASTER_ADDR --master-port=29500 pretrain_gpt.py \
  --num-layers 32 \
  --hidden-size 4096 \
  --ffn-hidden-size 14336 \
  --num-attention-heads 32 \
  --group-query-attention --num-query-groups 8 \
  --swiglu \
  --untie-embeddings-and-output-weights \
  --seq-length 4096 \
  --max-position-embeddings 4096 \
  --tensor-model-parallel-size 2 \
  --sequence-parallel \
  --pipeline-model-parallel-size 2 \
  --num-virtual-stages-per-pipeline-rank 2 \
  --context-parallel-size 1 \
  --micro-batch-size 1 \
  --global-batch-size 32 \
  --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
  --recompute-granularity selective \
  --bf16 \
  --optimizer adam \
  --train-iters 1000 \
  --data-path $DATA_PATH \
  --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model meta-llama/Meta-Llama-3-8B \
  --save $CKPT_DIR \
  --load $CKPT_DIR \
  --save-interval 100
