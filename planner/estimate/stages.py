"""Which pipeline splits the training stacks can run: layers over pp stages of v virtual stages
each.

The estimate charges the slowest stage ceil(L / pp) layers (memory.stage_layers); a layout is only
worth proposing if a stack can split the model that way:
- Megatron-LM (and the Megatron backends of NeMo and LLaMA-Factory): even stages (`L % pp == 0`)
  whose layers split into v equal chunks; the embedding and the loss counted as a layer each
  (`(L + 2) % pp == 0`, Llama 3 405B's 126 layers over 16 stages); or the middle stages at
  ceil(L / pp) layers and the first and last splitting the rest
  (`--decoder-first/last-pipeline-num-layers`), every stage's layers a multiple of v (megatron-core
  0.16 transformer_config.py checks exactly that; docs/sources/launch-configs.md section 2);
- DeepSpeed's pipeline engine partitions any layer count (`partition_method`), but has no
interleaving;
- torchtitan (the FSDP-family stack that pipelines): `pipeline_parallel_layers_per_stage` k, with
  the embedding and the output layer counted as one layer each, must give exactly pp x v stages:
  ceil((L + 2) / k) = pp x v.
"""

from __future__ import annotations

from functools import lru_cache

from plan.models.said import say_as
from plan.models.stacks import layer_split_gap, stack_of

TORCHTITAN_EDGE_LAYERS = 2
"""torchtitan counts the embedding and the output layer as one layer each when it splits a model
into stages (`first/last_stage_less_layers`, default 1 each)."""


def megatron_uneven_stages(layers: int, pp: int, virtual: int = 1) -> tuple[int, int] | None:
    """(first, last) stage layers when pp does not divide the layers: the middle stages hold ceil(L
    / pp) (the estimate's slowest stage), the first and last split the rest, each at most that and,
    when interleaved, each a multiple of the virtual stages (as the middle one must be); the first
    takes the smaller share (it holds the most micro-batches in flight). None when no split
    exists."""
    per = -(-layers // pp)
    if per % virtual:
        return None
    if pp < 3:
        first = layers - per * (pp - 1)
        return (first, per) if first >= virtual and first % virtual == 0 else None
    rest = layers - per * (pp - 2)
    first = rest // 2 // virtual * virtual
    last = rest - first
    return (first, last) if first >= virtual and last <= per and last % virtual == 0 else None


def megatron_split_flags(layers: int, pp: int, virtual: int = 1) -> tuple[str, ...] | None:
    """The pretrain_gpt.py flags that split `layers` over pp stages of `virtual` equal chunks with
    no stage longer than ceil(L / pp) (what the estimate charges), or None when Megatron cannot:
    - even stages: no flag;
    - the embedding and the loss counted as one layer each (Llama 3 405B's split: 126 + 2 layers
    over
      16 stages of 8), `--account-for-embedding-in-pipeline-split
      --account-for-loss-in-pipeline-split`;
    - shorter first and last stages, `--decoder-first/last-pipeline-num-layers` (multiples of v)."""
    if layers % pp == 0:
        return () if (layers // pp) % virtual == 0 else None
    if (layers + 2) % pp == 0 and ((layers + 2) // pp) % virtual == 0 and layers + 2 > 2 * pp:
        return ("--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split")
    split = megatron_uneven_stages(layers, pp, virtual)
    if split is None:
        return None
    return (f"--decoder-first-pipeline-num-layers {split[0]}", "--decoder-last-pipeline-num-layers "
                                                               f"{split[1]}")


@lru_cache(maxsize=4096)
def torchtitan_layers_per_stage(layers: int, stages: int) -> int | None:
    """A `pipeline_parallel_layers_per_stage` giving exactly `stages` stages, or None."""
    total = layers + TORCHTITAN_EDGE_LAYERS
    for per in range(1, total + 1):
        if -(-total // per) == stages:
            return per
    return None


@lru_cache(maxsize=16384)
def split_problem(layers: int, pp: int, virtual: int, framework: str) -> str | None:
    """Why the stack of `framework` cannot split `layers` layers over pp stages of `virtual` virtual
    stages each, or None when it can."""
    if pp <= 1:
        return None
    stack = stack_of(framework)
    if stack.pipeline_layer_split == "even_chunks":
        if megatron_split_flags(layers, pp, virtual) is None:
            chunks = say_as("split.chunks", " of vpp={virtual} equal chunks",
                            virtual=virtual) if virtual > 1 else ""
            return say_as("split.megatron", "Megatron cannot split {layers} layers over pp={pp} "
                          "stages{chunks}, none longer than {most} layers", layers=layers, pp=pp,
                          chunks=chunks, most=-(-layers // pp))
        return None
    if stack.pipeline_layer_split == "any":
        return layer_split_gap(framework, virtual)
    if torchtitan_layers_per_stage(layers, pp * virtual) is None:
        return say_as("split.torchtitan", "torchtitan has no layers-per-stage value that splits "
                      "{layers} layers into {stages} stages", layers=layers, stages=pp * virtual)
    return None
