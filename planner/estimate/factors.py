"""The few calibrated efficiency factors of the estimators, each with its source or reasoning.

Everything else in `plan.planner.estimate` follows from the model card, the GPU datasheet and the
layout. These constants are the only numbers tuned against bench/data/ (as a handful of global
factors, never per row); change one here and re-run `bench/validate_estimates.py`.
"""

from __future__ import annotations

from plan.planner.i18n.said import phrase, say

GIB = 1024**3
GB = 1e9

# --- compute -------------------------------------------------------------------------------------

GEMM_FRACTION_OF_PEAK: dict[str, float] = {
    "ampere": 0.86,
    "ada": 0.80,
    "hopper": 0.80,
    "blackwell": 0.75,
    "rubin": 0.70,
    "davinci": 0.60,
    "dcu": 0.60,
    "mlu": 0.60,
}
"""Best achievable dense-GEMM throughput as a fraction of the datasheet peak, per architecture.

Source: "maximum achievable matmul FLOPS" (MAMF) measurements, S. Bekman, *Machine Learning
Engineering*, compute/accelerator chapter: A100 SXM bf16 ~86% of 312, H100 SXM ~80% of 989 (H100 is
power/clock limited below its datasheet rate). Ada (RTX 4090, L40S) assumed 0.80 (consumer boards
throttle under sustained load); Blackwell, Rubin and Ascend are assumptions (no public MAMF figure
found), lower for newer or less mature software stacks. Hygon DCU and Cambricon MLU take Ascend's
0.60 (assumed the same way: no public MAMF figure, vendor software stacks).
"""

MEASURED_GEMM_ARCHITECTURES = frozenset({"ampere", "hopper"})
"""The architectures whose GEMM_FRACTION_OF_PEAK comes from a published measurement; the others are
assumptions, and every estimate and plan on them says so (efficiency_assumption)."""


VENDOR_STACK_OF_ARCHITECTURE: dict[str, str] = {
    "davinci": "MindSpeed-LLM, Ascend's Megatron fork on CANN",
    "dcu": "Hygon's DTK builds of Megatron-LM/DeepSpeed",
    "mlu": "Cambricon's forks of Megatron-LM/DeepSpeed",
}
"""The stack a domestic accelerator trains on (not the CUDA stacks the factors are measured on);
named in its efficiency assumption."""


def efficiency_assumption(architecture: str) -> str | None:
    """The line an estimate or plan carries when its GPU's efficiency factors are assumed."""
    if architecture in MEASURED_GEMM_ARCHITECTURES:
        return None
    fraction = GEMM_FRACTION_OF_PEAK.get(architecture, 0.6)
    stack = VENDOR_STACK_OF_ARCHITECTURE.get(architecture)
    on_stack = say("band.on_stack", stack=phrase(stack)) if stack else ""
    return say("band.efficiency_assumed", architecture=architecture, on_stack=on_stack,
               fraction=fraction)


TRAINING_KERNEL_EFFICIENCY = 0.76
"""Fraction of the best GEMM rate that a training step's GEMMs and attention reach in practice.

Reasoning: a training step runs many GEMMs of moderate size, fused attention kernels
(FlashAttention-2 reaches 50-70% of peak forward+backward, Dao 2023, against 80-90% for large
GEMMs), kernel launch gaps, and optimizer/communication kernels that steal SMs. Calibrated as one
global factor on the Megatron-LM A100/H100 rows of bench/data/throughput_public.csv; the lent H200's
own runs (bench/data/measured_h200.csv) sit within 3% of it. Ampere has its own factor below.
"""

TRAINING_KERNEL_EFFICIENCY_OF_ARCHITECTURE: dict[str, float] = {"ampere": 0.80}
"""Architectures whose training steps keep closer to their best GEMM rate than Hopper's 0.76.

Evidence: with 0.76 every A100 family ran slow in bench/validate_estimates.py, the GEMM-bound ones
most: llm-foundry's FSDP rows on A100 (LLMF-P17..P27) sat at a median of -10.5%, the 13B-30B ones
with full recomputation at -14 to -17% (they publish 51-56% MFU, about 70% of the BF16 peak counting
the recomputed forward, above what 0.86 x 0.76 allows), and Megatron's A100 rows (MEG21, KOR) at -2
to -9%. Reasoning for the difference: the MAMF fractions above are measured with GEMMs alone; an
H100 (700 W) lowers its clocks further when a step adds HBM and NVLink traffic to its GEMMs, an A100
(400 W) much less, so the same step software reaches a larger share of MAMF on Ampere. 0.80 is the
factor that centres the 25 A100 rows (median signed error -0.7%; 0.78: -2.9%, 0.81: +0.5%), set as
one factor for the architecture, not per row (bench/validate_estimates.py reports each family's
error)."""


def training_kernel_efficiency(architecture: str) -> float:
    """TRAINING_KERNEL_EFFICIENCY for a GPU architecture."""
    return TRAINING_KERNEL_EFFICIENCY_OF_ARCHITECTURE.get(architecture, TRAINING_KERNEL_EFFICIENCY)

GEMM_HALF_WIDTH = 96
"""GEMM width (columns per GPU after tensor-parallel slicing) at which efficiency halves.

Efficiency factor g(w) = w / (w + GEMM_HALF_WIDTH), with w = hidden_size / tp. Reasoning: GEMM tiles
are 128-256 wide; narrow slices under-fill the tiles and the SMs (wave quantization). Assumed, not
fitted.
"""

GEMM_HALF_TOKENS = 64
"""Tokens per micro-batch (micro_batch x seq_len) at which GEMM efficiency halves (same reasoning:
a GEMM's M dimension below a few tiles leaves SMs idle; 2048+ tokens are ~97% efficient)."""

ATTENTION_UTILIZATION: dict[str, dict[str, float]] = {
    "fa2": {
        "ampere": 0.55,
        "ada": 0.50,
        "hopper": 0.23,
        "blackwell": 0.23,
        "rubin": 0.23,
        "davinci": 0.30,
        "dcu": 0.30,
        "mlu": 0.30,
    },
    "fa3": {
        "ampere": 0.55,
        "ada": 0.50,
        "hopper": 0.55,
        "blackwell": 0.50,
        "rubin": 0.45,
        "davinci": 0.30,
        "dcu": 0.30,
        "mlu": 0.30,
    },
}
"""Causal flash-attention forward+backward throughput as a fraction of the dense BF16 peak, by
kernel generation and architecture (FLOPs counted with the causal half skipped, as the
FlashAttention papers count them). FlashAttention-2 reaches 50-73% on A100 (Dao 2023) but "only 35%
utilization of theoretical maximum FLOPs on the H100" (Shah et al. 2024, FlashAttention-3 abstract);
FlashAttention-3 and cuDNN fused attention reach up to 75% on H100 (same paper). These are best
cases (forward, long sequences, head dim 128); the backward pass runs slower, so forward+backward in
training is set
lower: 0.55 on A100, 0.23 on H100 with FA2, 0.55 with FA3 (reasoning, then checked against the
long-sequence llm-foundry and torchtitan rows of the validation set as one factor per kernel class;
the FA3 paper's 35% is FA2's forward best case, its backward runs slower and causal masking's
partly-filled tiles lower both; Blackwell and Rubin follow Hopper). "fa2" is what PyTorch SDPA and
the flash-attn 2 package run (FSDP stacks: torchtitan, llm-foundry, torchtune, Hugging Face); "fa3"
is Transformer Engine's cuDNN fused attention (Megatron-Core, NeMo) on Hopper and later. Ada,
Blackwell, Rubin and Ascend values are assumptions (no published figure); Hygon DCU and Cambricon
MLU take Ascend's (assumed likewise)."""

FA2_HEAD_DIMS = (32, 64, 96, 128, 160, 192, 256)
"""Head dimensions FlashAttention-2's kernels are compiled for (`HEADDIM_SWITCH`, flash-attn
csrc/flash_attn/src/static_switch.h; PyTorch's SDPA flash backend vendors the same kernels). A
model's head dimension runs in the smallest one that holds it, the padded columns computed for
nothing: MPT-30B's 112 runs as 128, a head dimension of 80 as 96. Not applied to Transformer
Engine's cuDNN attention ("fa3" here), whose kernels' tile sizes are not published."""


def kernel_head_dim(head_dim: int, kernel: str) -> int:
    """The head dimension an attention kernel computes for `head_dim` (FA2_HEAD_DIMS)."""
    if kernel != "fa2":
        return head_dim
    return next((d for d in FA2_HEAD_DIMS if d >= head_dim), head_dim)


FLASH_ATTENTION_BACKWARD_PASSES = 2.5
"""Flash attention's backward pass in forward-pass FLOPs: it recomputes the scores QK^T instead of
storing them, so it runs five s x s matmuls against the forward's two (Dao 2023, FlashAttention-2,
section 4: "the backward pass ... 2.5x the FLOPs of the forward"; the flash-attn benchmarks count
forward+backward as 3.5x the forward). The ATTENTION_UTILIZATION rates are counted that way, so the
time of a step's attention is 3.5 forwards at that rate; without flash attention the stored scores
make the backward 2x."""

ATTENTION_KERNEL_OF_FRAMEWORK = {"megatron": "fa3", "deepspeed": "fa2", "fsdp": "fa2"}

UNFUSED_SCORE_BYTES = 13.0
"""Without flash attention (`flash_attention=False`, e.g. Megatron 2021) the full s x s scores are
computed as batched GEMMs at the GEMM rate, and their softmax and dropout traffic is charged as
memory-bound bytes. Bytes moved per attention score per pass without flash attention: QK^T writes 2,
fused scale-mask-softmax reads 2 and writes 2, dropout reads 2, writes 2 and a 1-byte mask, AV reads
2. Backward ~2x the forward; a recomputed forward adds one more pass."""

FP8_GEMM_RELATIVE_EFFICIENCY = 0.9
"""FP8 GEMMs reach a lower fraction of their (2x) peak than BF16 ones (H100 FP8 matmuls reach ~72%
of 1979 against ~80% of 989 for BF16, MAMF tables as above), plus per-tensor scaling and casts
(Transformer Engine). Attention stays in BF16."""

FP8_CAST_BYTES_PER_ELEMENT = 4.0
"""Memory traffic per element cast to FP8 for a linear layer: read 2 B of BF16, write 1 B of FP8,
and a scaling pass (amax) that reads the input again unless fused (3 B with delayed or fused
scaling, 5 B with a separate dynamic-scaling pass; Transformer Engine, torchao float8). Charged for
every linear layer's input (forward), output gradient (backward) and weights (twice per micro-batch,
or per step where the stack caches them: `Stack.fp8_weight_cast_cached`). This is why FP8 gains
little on 1-3B models, whose matmuls are short: llm-foundry's FP8 rows run 1.2-1.4x their BF16
counterparts (reasoning; the midpoint 4 B is an assumption)."""

ELEMENTWISE_PASSES_PER_HIDDEN = 30.0
"""Memory-bound (non-GEMM) traffic per token per layer, in 16-bit elements per hidden unit.

Counts norms, residual adds, rotary embedding, casts over forward+backward: ~10 reads/writes of an
h-sized vector per token in the forward pass, about 2x that in the backward (reasoning; cf.
Korthikanti et al. 2022, section 4, on the cost of replicated layer-norm/dropout under tensor
parallelism). The FFN activation (GeLU or SwiGLU) adds ELEMENTWISE_PASSES_PER_FFN per FFN unit.
"""

ELEMENTWISE_TRAFFIC_OF_FRAMEWORK = {"megatron": 0.6, "deepspeed": 2.25, "fsdp": 2.25}
"""Element-wise traffic relative to the passes above, by stack. Megatron-Core/NeMo run Transformer
Engine's fused kernels (layer norm fused into the next GEMM, fused RoPE, fused bias-SwiGLU, fused
softmax and cross-entropy); the PyTorch-module stacks (FSDP with Hugging Face or llm-foundry models,
DeepSpeed) launch each norm, rotary embedding and activation as several separate kernels that each
read and write the whole tensor (an eager RMSNorm alone is ~6 kernels). Reasoning, then set as one
factor per class against the validation rows together with the Hopper flash-attention rate above
(bench/validate_estimates.py reports each family's error); it matters most on Hopper, whose memory
bandwidth per FLOP is half of Ampere's."""

ELEMENTWISE_PASSES_PER_FFN = 9.0
"""Memory-bound passes per FFN unit per token per layer (activation function forward + backward)."""

MEMORY_BANDWIDTH_EFFICIENCY = 0.8
"""Fraction of datasheet memory bandwidth that streaming kernels reach (STREAM-like; typical
80-90%)."""

DEFAULT_MEMORY_BANDWIDTH_GB_PER_S = 1500.0
"""Assumed memory bandwidth where the catalog gives none (e.g. Ascend 910B: 1.2-1.6 TB/s
conflicting)."""

QLORA_DEQUANT_BYTES_PER_PARAM = 4.5
"""Bytes moved per base weight each time QLoRA dequantizes it: read 4-bit weight + quantization
constants (~0.52 B), write a bf16 copy (2 B), read it back in the GEMM (2 B). bitsandbytes does not
fuse dequantization into the GEMM (Dettmers et al. 2023 report QLoRA slower than 16-bit LoRA)."""

ADAPTER_BYTES_PER_DIM = {"fused": 6.0, "eager": 22.0}
"""Memory-bound bytes per token per LoRA adapter dimension (in + out of each targeted linear layer),
forward and backward. Fused: each adapter re-reads its layer input and adds into its output, forward
and backward (3 x 2 B). Eager (peft under bf16 autocast with fp32 adapters, what Hugging Face stacks
run): the input's cast to fp32 and autocast's cast back (12 B per input element forward), the
scaling and the add into the base output (10 B per output element), and in the backward pass the two
casts of the input gradient and its accumulation (18 B) and the scaled output gradient (4 B): 30 B
per input and 14 per output element, 22 on average (reasoning from peft 0.21's `Linear.forward`;
with it the LoRA rows of bench/data/measured_h200.csv, with the host floor below, move from 12-34%
too fast to -1.4 to +14.2%, median +1.0%)."""

HOST_SECONDS_PER_LAYER_PASS = {"full": 2.2e-3, "adapter": 2.6e-3}
"""CPU time to issue one layer's kernels for one forward-equivalent pass (a forward is one pass, a
backward two) in eager PyTorch stacks: the Python modules, autograd and FSDP's hooks launch ~140
kernels per layer and step, and a step cannot run faster than the host issues them. Measured on the
lent H200's host (bench/data/measured_h200.csv): Llama 3.2 1B full fine-tuning at one 1,024-token
sequence ran 0.106 s per step with the GPU busy 0.044 s (16 layers x 3 passes: 2.2 ms); Llama 3.1 8B
LoRA with recomputation at 2,048 tokens, 0.329 s with the GPU busy 0.263 s (32 layers x 4 passes: at
most 2.6 ms; peft adds ~200 small kernels per layer). Compiled and Megatron stacks launch far fewer,
larger kernels (not modelled)."""

# --- communication -------------------------------------------------------------------------------

COLLECTIVE_BANDWIDTH_EFFICIENCY = 0.75
"""Achieved collective bus bandwidth as a fraction of the bottleneck link (one direction).

Source: nccl-tests all-reduce bus bandwidth on 8x A100 NVLink ~230 of 300 GB/s per direction,
on InfiniBand ~ 80-90% of line rate; 0.75 is a round middle figure."""

COLLECTIVE_LATENCY_S = {"base": 8.4e-6, "nvlink": 3.4e-6, "pcie": 5.7e-6, "inter": 14.0e-6}
"""Latency of a ring collective with NCCL's Simple protocol (the one large transfers use): a base
per collective, plus per hop inside a node (NVLink or PCIe) or between nodes. NCCL 2.29.7
src/graph/tuning.cc, `ncclTunerConstantsDefaults` (baseLatencies and hwLatencies, Ring/Simple, in
microseconds; read from Debian's nvidia-nccl 2.29.7 source package, 2026-11-30). NCCL sums them
along the ring: (steps - inter-node steps) x hop + inter-node steps x network hop, with nodes - 1
inter-node steps per pass."""

TREE_LATENCY_S = {"base": 8.4e-6, "nvlink": 4.0e-6, "pcie": 4.0e-6, "inter": 14.0e-6}
"""Latency of NCCL's tree all-reduce (Simple protocol): the same source and table as
COLLECTIVE_LATENCY_S, Tree/Simple. NCCL charges a tree all-reduce its base plus, up and down the
tree, (ranks per node - 1) hops inside a node and log2(nodes) (rounded down) network hops, where a
ring pays a hop for each of its 2 (n - 1) steps: `2 * ((nRanks/nNodes-1) * intraLat +
log2i(nNodes) * interLat)`. The double binary tree is NCCL's since 2.4 (Jeaugey, "Massively
Scale Your Deep Learning Training with NCCL 2.4", NVIDIA Technical Blog, 2019-02-04: latency
logarithmic in the number of nodes, against the ring's linear growth)."""

TREE_BUS_BANDWIDTH_FACTOR = 0.92
"""A tree all-reduce's bus bandwidth against the ring's (NCCL 2.29.7 src/graph/tuning.cc:
`busBw*.92`); its algorithm bandwidth is half the bus bandwidth (`ratio *= .5`), so a tree moves a
buffer of B bytes in 2 B / (0.92 bw) against the ring's 2 (n - 1) / n B / bw."""

TREE_CORRECTION_SIMPLE = (0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5,
                          0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9)
"""NCCL's static correction of the tree's bandwidth by message size, Simple protocol: entry k for
64 x 2^k bytes (rounded down), from 64 B to below 512 MiB; none from there ("Trees are not
perfectly sticking to the model for medium sizes", NCCL 2.29.7 src/graph/tuning.cc,
`treeCorrectionFactor`)."""

RING_ALL_REDUCE_PLATEAU = 1.4
"""NCCL's multiplier on an inter-node ring all-reduce's latency once each rank's share per channel
reaches 64 bytes ("Plateau effect of ring", src/graph/tuning.cc `ncclTopoGetAlgoTime`: 1.4 on
compute capability 8.0 and later, 1.9 before; the catalog's NVIDIA GPUs are all 8.0 or later)."""

NCCL_CHANNELS = 16
"""assumed: the channels NCCL opens per communicator on a multi-node NVLink + InfiniBand system
(it opens up to 32, MAXCHANNELS; 16 is a middle figure). Only the plateau's threshold rests on
it."""

TP_COMM_EXPOSED_FRACTION = 0.6
"""Fraction of tensor-parallel collective time not hidden behind compute.

Megatron-LM issues the tensor-parallel all-reduces (or reduce-scatter/all-gather with sequence
parallelism) on the critical path; recent versions overlap part of them with GEMMs
(`--tp-comm-overlap`, userbuffers) and with the next layer's independent work. Reasoning +
calibration on the Megatron tp=2..8 rows (one global factor)."""

DP_OVERLAP_FRACTION = 0.8
"""Fraction of the last micro-batch's backward pass that gradient reduction can hide behind.

PyTorch DDP, FSDP, DeepSpeed and Megatron's distributed optimizer bucket gradients and reduce them
while the backward pass runs (Li et al. 2020, PyTorch Distributed). With gradient accumulation only
the last micro-batch's backward overlaps; the first bucket is ready after a few layers, hence <
1."""

PCIE_GB_PER_S_PER_DIRECTION = {"pcie": 25.0}
"""Achieved host PCIe 4.0 x16 bandwidth per direction (32 GB/s theoretical, ~25 measured)."""

CPU_OPTIMIZER_BYTES_PER_S = 25e9
"""Host memory traffic one GPU's process gets for an optimizer step on the CPU (ZeRO-3 CPU offload,
`Layout.state_offload`). Assumed: DeepSpeed's vectorised CPU Adam is memory-bound, moving the same
bytes per parameter as a GPU step (OPTIMIZER_STEP_BYTES_PER_PARAM in timing.py: fp32 parameter,
gradient and moments read, parameter and moments written), and a two-socket server's 200-300 GB/s of
memory bandwidth is shared by its eight GPUs' processes. No measurement in bench/data; every
estimate that uses it says so."""

# --- memory --------------------------------------------------------------------------------------

CUDA_CONTEXT_GIB = 0.6
"""CUDA context, cuBLAS/cuDNN workspaces and kernels: ~0.5-1 GiB per process (nvidia-smi with an
idle PyTorch process). Counted in `other`."""

NCCL_BUFFERS_GIB = 0.5
"""NCCL communicator buffers and DDP/ZeRO buckets when gpus > 1 (NCCL default 4 MiB x channels x
peers plus 2 x 25 MB DDP buckets; ~0.3-1 GiB). Counted in `other`."""

ALLOCATOR_FRAGMENTATION = 0.15
"""PyTorch caching-allocator overhead on what changes size during a step (activations, logits,
transient buffers; not the static states): the reserved peak, which is what runs out, sits 5-30%
above the allocated peak in training loops (torchtitan logs both; large compiled graphs sit at the
top of the range). Reasoning, checked against the torchtitan and torchtune memory rows; 0.15 keeps
every published llm-foundry micro-batch within its card."""

ALLOCATOR_FRAGMENTATION_AT_LIMIT = 0.06
"""What the caching allocator still holds beyond the allocated peak, on the same changing tensors,
when the card is full: a failed cudaMalloc makes PyTorch free its unused cached segments and retry
before it raises out-of-memory (CUDA caching allocator, `release_cached_blocks`), so a run needs
less than the reserved peak it shows with room to spare. Measured on this project's H200
(bench/data/measured_h200.csv, 2026-11-30): H200-13 ran with 139.2 of the card's 139.8 GiB in use at
131.4 GiB allocated, 7.3 GiB above it besides the CUDA context, 6% of the 123 GiB allocated beyond
its model states; runs with room held 13-33% above their allocated peak. Used for whether a layout
runs at all (`Estimate.fits_card`), never for what a plan may use: a plan keeps its headroom above
the reserved peak."""

LOGIT_BYTES_FP32_LOSS = 12.0
"""Bytes per logit element at the loss's peak when the stack upcasts the logits for PyTorch's
cross-entropy (Hugging Face's ForCausalLMLoss, torchtitan, llm-foundry: `logits.float()`). Forward:
bf16 logits 2 + fp32 copy 4 + saved fp32 log-probabilities 4 = 10 B; backward, the peak: the saved
log-probabilities 4 + their gradient 4 + the logits' fp32 gradient 4 = 12 B, while every layer's
activations are still held. Measured: 10.0 and 12.0 B (to 0.1%) on six model shapes on one H200
(bench/device/measure_steps.py `saved` records, torch 2.11, transformers 5.17, 2026-11-30); 10 until
then."""

UPCAST_LOGIT_RESERVED_BYTES = 4.0
"""Bytes per logit element the caching allocator holds beyond what is allocated at the loss, where
PyTorch's cross-entropy runs on upcast fp32 logits (LOGIT_BYTES_FP32_LOSS,
LOGIT_BYTES_VOCAB_PARALLEL_EAGER): one fp32 logit-sized block. Reasoning: the loss phase's
logit-sized blocks, freed, are split by the layer phase's smaller allocations, and the next step's
checkpoints and activations, alive at its loss, sit in those splits, so the next loss takes a fresh
block. Measured on the lent H200 (bench/data/measured_h200.csv, the five steps with full
recomputation, whose peak is the loss: reserved minus allocated 3.5-6.7 B per logit, 7.5-15.5 GiB;
the 15% ALLOCATOR_FRAGMENTATION counts 1.8 B of it): this replaces that 15% on the logits where it
is larger, and counts only what the re-materialised layer's own phase does not already hold."""

LOGIT_BYTES_VOCAB_PARALLEL_EAGER = 16.0
"""Bytes per logit element at the loss when PyTorch's tensor-parallel loss (`loss_parallel`, the
vocabulary sharded over tp; torchtitan) runs as separate eager ops
(torch/distributed/tensor/parallel/ loss.py). Forward: the bf16 logits (2), their fp32 copy (4), and
the shifted logits and their exponential that its decomposed log-softmax materialises (4 + 4): 14 B.
Backward (the logits already freed): its nll-loss backward also computes the log-softmax gradient,
holding the saved fp32 log-probabilities (4), a zero-filled fp32 gradient with the -1 scattered in
(4), their exponential (4) and the sum (4): 16 B, the higher of the two and the one counted. A
single-GPU cross-entropy runs the fused log-softmax kernels instead (LOGIT_BYTES_FP32_LOSS)."""

LOGIT_BYTES = 6.0
"""Bytes per logit element kept at the loss: bf16 logits (2 B) + fp32 softmax/loss buffer (4 B)
(Megatron vocab-parallel cross entropy; Hugging Face upcasts to fp32).

A chunked loss (`Layout.loss` "chunked") never materialises fp32 logits: flash-attn's fused
cross-entropy (llm-foundry; it writes the gradient into the logits in place) or torchtune's chunked
loss under torch.compile (the upcast, log-softmax and gradient fuse into per-chunk kernels that save
only the bf16 logits and a log-sum-exp per row). It keeps the bf16 logits (2 B) and one chunk's bf16
gradient (2 B / LOSS_CHUNKS). Eager chunking without compile saves every chunk's fp32
log-probabilities for the backward (about 6 B per element); that case is not modelled. A fused
linear cross-entropy (`Layout.loss` "fused": Liger's, Unsloth's) never holds the whole logits at all
(memory.py `_loss_bytes`)."""

LOSS_TRAFFIC_BYTES_PER_LOGIT = {"unfused": 42.0, "chunked": 6.0}
"""Memory traffic of the loss per logit, forward and backward. Unfused (PyTorch's cross-entropy on
upcast logits, as Hugging Face models and torchtitan run it; Megatron's vocab-parallel one is a
similar chain of fp32 passes): measured on an H200 as 30 B per logit in the log-softmax and NLL
kernels plus the upcast to fp32 and the cast of the gradient back (6 B each;
bench/device/README.md). Chunked or fused (flash-attn's cross-entropy, Liger's fused linear
cross-entropy, a compiled chunked loss): the bf16 logits read forward and backward and the gradient
written, 6 B (reasoning). A fused linear one writes and reads each chunk's logits once more than it
would whole, within the same 6 B; Cut Cross-Entropy's extra matmul (it recomputes the logits in the
backward pass) is not counted."""

KEPT_OUTPUT_LOGIT_BYTES = 4.0
"""Bytes per logit element of each micro-batch output that torch.distributed.pipelining's last stage
keeps until the step ends: `forward_one_chunk` appends the stage's output to `stage.output_chunks`
for `schedule.step()` to merge and return (PyTorch 2.5-2.6 torch/distributed/pipelining/stage.py and
schedules.py, as torchtitan ran them in its Dec 2024 benchmarks), and torchtitan's Llama returns
`self.output(h).float()`, fp32 logits (sharded over tp under loss_parallel). Checked against
torchtitan's Llama 3.1 405B PP 8 rows (bench/data/memory_public.csv TTM-P05/P06), which sat 16-18%
under the measured peak without it. Megatron returns the loss alone and keeps no outputs."""

LOSS_CHUNK_GRAD_BYTES = 2.0
"""Bytes per element of the one gradient chunk a chunked loss holds (bf16)."""

FUSED_LOSS_BYTES_PER_TOKEN = 4.0
"""The fp32 loss per token a fused linear cross-entropy keeps beside its gradients (Liger's
`loss_1d`; memory.py `_loss_bytes`)."""

LOSS_CHUNKS = 8
"""Chunks of the chunked cross-entropy (torchtune's default CEWithChunkedOutputLoss uses 8)."""
