"""Training methods: the names a scenario or `plan estimate --method` accepts, and what each one
means.

- pretrain, continued_pretrain: every parameter trained on raw text.
- full_finetune: every parameter trained on instruction/task data.
- sft: supervised fine-tuning, an alias of full_finetune. The planner assumes packed sequences
  (several samples concatenated up to seq_len, as TRL `packing=True`, LLaMA-Factory `packing`,
  torchtune `packed=True` do), so the scenario's token count is the number of trained tokens and no
  padding is paid for. Without packing, padding adds the gap between the mean sample length and
  seq_len to every sequence.
- lora, qlora: frozen (16-bit or 4-bit NF4) base with low-rank adapters (Hu et al. 2021; Dettmers et
  al. 2023).
- dpo: Direct Preference Optimization (Rafailov et al. 2023) with every policy parameter trained.
The
  loss needs log-probabilities of each chosen and rejected answer under the policy (forward and
  backward) and under a frozen reference model (forward only). The reference is a second copy of the
  starting weights: 16-bit, no gradients, no optimizer states, sharded like the weights under ZeRO-3
  (TRL DPOTrainer `ref_model`, OpenRLHF). Tokens count both answers of every pair.
- lora_dpo, qlora_dpo: DPO with LoRA (QLoRA) adapters. The reference is the same base with the
  adapters switched off (TRL: `ref_model=None` with a PEFT model uses `disable_adapter()`), so no
  second copy of the weights is held; the reference costs one extra forward pass per token.
"""

from __future__ import annotations

from typing import Literal, get_args

from plan.models.said import say_as

Method = Literal["pretrain", "continued_pretrain", "full_finetune", "sft", "lora", "qlora",
                 "dpo", "lora_dpo", "qlora_dpo"]
METHODS: tuple[str, ...] = get_args(Method)
PRETRAIN_METHODS = ("pretrain", "continued_pretrain")
FULL_METHODS = ("pretrain", "continued_pretrain", "full_finetune", "sft", "dpo")
ADAPTER_METHODS = ("lora", "qlora", "lora_dpo", "qlora_dpo")
QLORA_METHODS = ("qlora", "qlora_dpo")
QLORA_FP8 = say_as("stack.qlora_fp8", "precision fp8 with qlora: bitsandbytes dequantizes the "
                   "4-bit base to 16-bit for every matmul, so no stack runs QLoRA in FP8; use bf16 "
                   "(or fp16), or lora with fp8")
"""Why a QLoRA job or estimate cannot be FP8 (the scenario's check and the layout search's)."""
DPO_METHODS = ("dpo", "lora_dpo", "qlora_dpo")

METHOD_NOTES = {
    "sft": "sft = full fine-tune with packed sequences (samples concatenated up to seq_len, no "
           "padding); without packing, padding to seq_len costs extra tokens",
    "dpo": "DPO: policy trained on chosen and rejected answers (both count as tokens) plus a "
           "frozen 16-bit reference copy of the weights (forward only: +2N FLOPs per token, +2 "
           "bytes/param)",
    "lora_dpo": "LoRA-DPO: the reference is the base with adapters switched off (no second weight "
                "copy); one extra forward pass per token (+2N FLOPs)",
    "qlora_dpo": "QLoRA-DPO: the reference is the 4-bit base with adapters switched off (no second "
                 "weight "
                 "copy); one extra forward pass per token (+2N FLOPs) and its dequantization",
}


def reference_weight_copies(method: str) -> int:
    """Separate frozen reference-model weight copies the method holds: 1 for full DPO, else 0."""
    return 1 if method == "dpo" else 0


def reference_forward_passes(method: str) -> int:
    """Extra forward passes per token for the reference log-probabilities: 1 for every DPO
    variant."""
    return 1 if method in DPO_METHODS else 0
