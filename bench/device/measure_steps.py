"""Measure real training steps on one GPU, to check the estimator's mechanisms against hardware.

Run on a machine with a CUDA GPU, PyTorch, transformers and peft (the session's lent H200 was one):

    OUT=results/ python bench/device/measure_steps.py            # the full set, about three minutes
    OUT=/tmp/x python bench/device/measure_steps.py --smoke      # tiny shapes on the CPU: checks
    the script

It writes one JSON line per measurement to $OUT/results.jsonl (and prints it), by kind:
- "gemm": a bf16 matrix product's TFLOP/s (the ceiling GEMM_FRACTION_OF_PEAK stands for);
- "sdpa": PyTorch scaled-dot-product attention, causal, forward + backward, per backend, in TFLOP/s
  counted as the estimator counts them (3.5 forwards of 2*b*h*s^2*d, the masked half skipped);
- "train": a training step of a Llama-architecture model built from a catalog card's shape (random
  weights, random tokens; Hugging Face transformers' modelling code with SDPA attention, the stack
  most fine-tuning users run): full fine-tuning under FSDP2 on one rank (bf16 compute, fp32 master
  weights, gradients and AdamW moments: the estimator's mixed-precision accounting), or LoRA through
  peft on a bf16 base. It records the steady step time, the peak memory PyTorch allocated and
  reserved, and, where asked, the GPU time per kernel class (GEMM, attention, optimizer, other) from
  the profiler;
- "saved": the bytes autograd keeps per token and layer, and the loss phase's bytes per logit;
- "anatomy": the allocations alive at a step's memory peak, by the code that made them;
- "compiled": the layers eager and under torch.compile, their saved bytes and step time.

bench/data/measured_h200.csv holds the training steps of session 12's runs (bench/device/runs/),
which bench/validate_estimates.py sets beside the estimator's answers; README.md says what they
showed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import re
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import torch
import yaml

ROOT = Path(__file__).resolve().parents[2]
GIB = 1024**3
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class Recorder:
    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / "results.jsonl"

    def emit(self, record: dict[str, Any]) -> None:
        line = json.dumps(record)
        print(line, flush=True)
        with self.path.open("a") as f:
            f.write(line + "\n")


def card(model_id: str) -> dict[str, Any]:
    models = yaml.safe_load((ROOT / "models" / "data" / "models.yaml").read_text())["models"]
    return next(m for m in models if m["id"] == model_id)


def hf_config(c: dict[str, Any], smoke: bool) -> Any:
    from transformers import LlamaConfig

    heads, hidden = c["num_heads"], c["hidden_size"]
    shape = dict(
        hidden_size=hidden,
        intermediate_size=c["ffn_hidden_size"],
        num_hidden_layers=c["layers"],
        num_attention_heads=heads,
        num_key_value_heads=c.get("num_kv_heads", heads),
        head_dim=c.get("head_dim", hidden // heads),
        vocab_size=c["vocab_size"],
    )
    if smoke:
        shape.update(
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=32,
            vocab_size=1000,
        )
    return LlamaConfig(**shape, tie_word_embeddings=bool(c.get("tied_embeddings", False)),
                       max_position_embeddings=32768, rope_theta=500000.0, use_cache=False,
                       attn_implementation="sdpa")


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def timed(fn: Any, device: str, warmup: int, iters: int) -> list[float]:
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t0)
    return times


def bf16_model(cfg: Any, device: str) -> Any:
    """A Llama-architecture model with random bf16 weights, built on the device."""
    from transformers import LlamaForCausalLM

    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            return LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(torch.float32)


def with_lora(model: Any, rank: int = 16) -> Any:
    from peft import LoraConfig, get_peft_model

    return get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0,
                                            target_modules=LORA_TARGETS))


def measure(rec: Recorder, device: str, probe: Any, **kw: Any) -> None:
    """Run one probe, which fills its record; note its error if it fails, emit the record, and free
    what it held before the next one. Only once the probe's frame is gone is that garbage, some of
    it in reference cycles (modules and hooks, a caught exception's traceback): collecting inside
    the probe left 2-12 GiB allocated into the next runs of session 12's first processes
    (README)."""
    record: dict[str, Any] = {"kind": probe.__name__}
    try:
        probe(record, device, **kw)
    except torch.OutOfMemoryError as exc:
        record["error"] = f"OutOfMemoryError: {str(exc)[:300]}"
        if device == "cuda":
            record["peak_allocated_gib"] = torch.cuda.max_memory_allocated() / GIB
    except Exception as exc:
        record["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        traceback.print_exc()
    rec.emit(record)
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def bench_gemm(rec: Recorder, device: str, smoke: bool) -> None:
    shapes = [(8192, 8192, 8192), (16384, 2048, 8192), (16384, 8192, 2048), (16384, 4096, 14336),
              (16384, 14336, 4096), (16384, 4096, 4096), (16384, 128256, 2048)]
    if smoke:
        shapes = [(64, 64, 64)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=device, dtype=torch.bfloat16)
        times = timed(lambda a=a, b=b: a @ b, device, 3, 10)
        t = statistics.median(times)
        rec.emit(
            {
                "kind": "gemm",
                "m": m,
                "n": n,
                "k": k,
                "median_s": t,
                "tflops": 2 * m * n * k / t / 1e12,
            }
        )
        del a, b


def bench_sdpa(rec: Recorder, device: str, smoke: bool) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {
        "default": None,
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
    }
    cases = [
        (8, 32, 2048, 128),
        (4, 32, 4096, 128),
        (2, 32, 8192, 128),
        (8, 32, 2048, 64),
        (1, 32, 16384, 128),
    ]
    if smoke:
        cases = [(1, 2, 64, 32)]
        backends = {"default": None}
    for b, h, s, d in cases:
        q, k, v = (torch.randn(b, h, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        grad = torch.randn(b, h, s, d, device=device, dtype=torch.bfloat16)
        for name, backend in backends.items():
            # a fresh one per call: generator contexts are single-use
            def ctx(backend: Any = backend) -> Any:
                return sdpa_kernel(backend) if backend is not None else contextlib.nullcontext()

            def fwd_bwd(ctx: Any = ctx, qkv: tuple[Any, ...] = (q, k, v), grad: Any = grad) -> None:
                with ctx():
                    out = torch.nn.functional.scaled_dot_product_attention(*qkv, is_causal=True)
                out.backward(grad)

            def fwd(ctx: Any = ctx, qkv: tuple[Any, ...] = (q, k, v)) -> None:
                with ctx(), torch.no_grad():
                    torch.nn.functional.scaled_dot_product_attention(*qkv, is_causal=True)

            try:
                t_fb = statistics.median(timed(fwd_bwd, device, 2, 8))
                t_f = statistics.median(timed(fwd, device, 2, 8))
            except Exception as exc:  # a backend that does not support this shape
                rec.emit({"kind": "sdpa", "backend": name, "b": b, "h": h, "s": s, "d": d,
                          "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
                continue
            fwd_flops = 2.0 * b * h * s * s * d  # 4bhs^2d with the causal half skipped
            rec.emit(
                {
                    "kind": "sdpa",
                    "backend": name,
                    "b": b,
                    "h": h,
                    "s": s,
                    "d": d,
                    "fwd_bwd_s": t_fb,
                    "fwd_s": t_f,
                    "fwd_bwd_tflops": 3.5 * fwd_flops / t_fb / 1e12,
                    "fwd_tflops": fwd_flops / t_f / 1e12,
                }
            )
        del q, k, v, grad


def init_dist(device: str) -> bool:
    import torch.distributed as dist

    if dist.is_initialized():
        return True
    try:
        dist.init_process_group("nccl" if device == "cuda" else "gloo", init_method="tcp://127.0.0.1:29517",
                                rank=0, world_size=1)
        return True
    except Exception as exc:
        print(f"distributed init failed: {exc}", file=sys.stderr)
        return False


def kernel_classes(trace_path: Path) -> dict[str, Any]:
    """GPU time per kernel class from a Chrome trace (robust across profiler API versions)."""
    events = json.loads(trace_path.read_text()).get("traceEvents", [])
    by_name: dict[str, float] = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e:
            by_name[e["name"]] = by_name.get(e["name"], 0.0) + float(e["dur"]) * 1e-6
    rules = [
        ("attention", r"flash|fmha|sdpa|attention|attn"),
        ("optimizer", r"adam|multi_tensor|foreach"),
        ("gemm", r"gemm|nvjet|cutlass|xmma|cublas|sm90_|wgmma|ampere_|sm80_"),
        ("loss", r"softmax|nll|cross_entropy|log_softmax"),
    ]
    classes: dict[str, float] = {}
    for name, secs in by_name.items():
        cls = next((c for c, pattern in rules if re.search(pattern, name, re.IGNORECASE)), "other")
        classes[cls] = classes.get(cls, 0.0) + secs
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:40]
    return {
        "class_s": classes,
        "busy_s": sum(by_name.values()),
        "kernels": sum(1 for e in events if e.get("cat") == "kernel"),
        "top_kernels": [[n[:160], round(s, 6)] for n, s in top],
    }


def train(
    record: dict[str, Any],
    device: str,
    *,
    smoke: bool,
    model_id: str,
    method: str,
    seq: int,
    mb: int,
    recompute: bool,
    steps: int = 5,
    lora_rank: int = 16,
    profile: bool = False,
) -> None:
    """A training step: its steady time, peak memory and, where asked, GPU time per kernel class."""
    from transformers import LlamaForCausalLM

    record.update(
        model=model_id,
        method=method,
        seq_len=seq,
        micro_batch=mb,
        recompute="full" if recompute else "none",
        lora_rank=lora_rank if method == "lora" else None,
    )
    cfg = hf_config(card(model_id), smoke)
    torch.manual_seed(0)
    if method == "full":
        record["stack"] = "fsdp2 world 1, bf16 params / fp32 reduce, fp32 master, fused AdamW"
        with torch.device(device):
            model = LlamaForCausalLM(cfg)
        if recompute:
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False}
            )
        if init_dist(device):
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

            mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            for layer in model.model.layers:
                fully_shard(layer, mp_policy=mp)
            fully_shard(model, mp_policy=mp)
            autocast: Any = contextlib.nullcontext
        else:
            record["stack"] = "plain fp32 params + bf16 autocast, fused AdamW (FSDP2 unavailable)"

            def autocast() -> Any:
                return torch.autocast(device, dtype=torch.bfloat16)
    else:
        record["stack"] = (
            "peft LoRA (all linear layers) on a bf16 base, fp32 adapters, bf16 autocast, AdamW"
        )
        base = bf16_model(cfg, device)
        if recompute:
            base.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False}
            )
            base.enable_input_require_grads()
        model = with_lora(base, lora_rank)

        def autocast() -> Any:
            return torch.autocast(device, dtype=torch.bfloat16)
    params = [p for p in model.parameters() if p.requires_grad]
    record["trainable_params"] = sum(p.numel() for p in params)
    record["total_params"] = sum(p.numel() for p in model.parameters())
    try:
        opt = torch.optim.AdamW(params, lr=1e-5, fused=device == "cuda")
    except Exception:
        opt = torch.optim.AdamW(params, lr=1e-5, foreach=True)
    model.train()
    batch = torch.randint(0, cfg.vocab_size, (mb, seq), device=device)

    def step() -> None:
        with autocast():
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # creates the optimizer state
    sync(device)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    history = device == "cuda" and os.environ.get("MEASURE_HISTORY") == "1"
    if history:
        torch.cuda.memory._record_memory_history(max_entries=400000, stacks="python")
    times = timed(step, device, 1, steps)
    if history:
        groups, largest, peak, _, _ = live_at_peak(torch.cuda.memory._snapshot())
        torch.cuda.memory._record_memory_history(enabled=None)
        record.update(
            history_groups=groups, history_largest_gib=largest, history_peak_gib=peak / GIB
        )
    t = statistics.median(times)
    record.update(step_s=t, step_s_all=[round(x, 5) for x in times], tokens_per_s=mb * seq / t)
    if device == "cuda":
        record.update(peak_allocated_gib=torch.cuda.max_memory_allocated() / GIB,
                      peak_reserved_gib=torch.cuda.max_memory_reserved() / GIB)
        free, total = torch.cuda.mem_get_info()
        record["device_used_gib_after"] = (total - free) / GIB
    if profile:
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as torch_profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
        with torch_profile(activities=activities) as prof:
            step()
            sync(device)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trace.json"
            prof.export_chrome_trace(str(path))
            record["profile"] = kernel_classes(path)


def saved(
    record: dict[str, Any],
    device: str,
    *,
    smoke: bool,
    model_id: str,
    method: str,
    tokens: int,
    seq: int,
) -> None:
    """What autograd keeps: the decoder's saved activations per token and layer, then the loss
    phase's bytes per logit element at the end of the forward pass and at the backward pass's
    peak."""
    cfg = hf_config(card(model_id), smoke)
    mb = max(1, tokens // seq)
    record.update(
        model=model_id,
        method=method,
        tokens=mb * seq,
        seq_len=seq,
        layers=cfg.num_hidden_layers,
        hidden=cfg.hidden_size,
        vocab=cfg.vocab_size,
    )
    model = bf16_model(cfg, device)
    if method == "lora":
        model = with_lora(model)
        autocast: Any = torch.autocast(device, dtype=torch.bfloat16)
        decoder = model.base_model.model.model
    else:
        autocast = contextlib.nullcontext()
        decoder = model.model
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (mb, seq), device=device)
    alloc = torch.cuda.memory_allocated if device == "cuda" else (lambda: 0)
    sync(device)
    m0 = alloc()
    with autocast:
        hidden = decoder(input_ids=ids).last_hidden_state
    sync(device)
    m1 = alloc()
    record["decoder_saved_bytes"] = m1 - m0
    record["bytes_per_token_layer"] = (m1 - m0 - hidden.numel() * hidden.element_size()) / (
        mb * seq * cfg.num_hidden_layers)
    del hidden
    gc.collect()
    sync(device)
    m0 = alloc()
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    with autocast:
        loss = model(input_ids=ids, labels=ids).loss
    sync(device)
    m2 = alloc()
    fwd_peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    loss.backward()
    sync(device)
    bwd_peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    logits = mb * seq * cfg.vocab_size
    layers_bytes = record["decoder_saved_bytes"]
    record.update(after_forward_bytes=m2 - m0, forward_peak_bytes=fwd_peak - m0,
                  backward_peak_bytes=bwd_peak - m0,
                  loss_bytes_per_logit_after_forward=(m2 - m0 - layers_bytes) / logits,
                  loss_bytes_per_logit_forward_peak=(fwd_peak - m0 - layers_bytes) / logits,
                  loss_bytes_per_logit_backward_peak=(bwd_peak - m0 - layers_bytes) / logits)


def _frame(f: dict[str, Any]) -> str:
    return (
        f"{'/'.join(str(f.get('filename', '?')).split('/')[-2:])}:{f.get('line')} {f.get('name')}"
    )


def live_at_peak(snap: dict[str, Any]) -> tuple[list[Any], list[float], int, int, int]:
    """From a CUDA memory-history snapshot: the allocations alive at the recorded peak, grouped by
    the Python frames that made them (none: the autograd engine's backward thread), and the largest
    ones."""
    trace = snap["device_traces"][0]
    live: dict[int, int] = {}
    total = peak = peak_at = 0
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            total += e["size"]
            if total > peak:
                peak, peak_at = total, i
        elif e["action"] == "free_completed" and e["addr"] in live:
            total -= live.pop(e["addr"])
    alive: dict[int, dict[str, Any]] = {}
    for e in trace[:peak_at + 1]:
        if e["action"] == "alloc":
            alive[e["addr"]] = e
        elif e["action"] == "free_completed":
            alive.pop(e["addr"], None)
    groups: dict[str, list[float]] = {}
    for e in alive.values():
        frames = [f for f in e.get("frames", []) if "torch/" not in str(f.get("filename", ""))
                  or "torch/utils/checkpoint" in str(f.get("filename", ""))]
        key = " <- ".join(_frame(f) for f in frames[:3]) or "?"
        g = groups.setdefault(key, [0.0, 0])
        g[0] += e["size"]
        g[1] += 1
    top = [
        [k[:300], round(v[0] / GIB, 3), v[1]]
        for k, v in sorted(groups.items(), key=lambda kv: -kv[1][0])[:14]
    ]
    largest = sorted((round(e["size"] / GIB, 4) for e in alive.values()), reverse=True)[:12]
    return top, largest, peak, peak_at, len(trace)


def anatomy(
    record: dict[str, Any],
    device: str,
    *,
    smoke: bool,
    model_id: str,
    method: str,
    tokens: int,
    seq: int,
    recompute: bool,
) -> None:
    """Which allocations are alive at the peak of one forward + backward (CUDA memory history): the
    live bytes at the peak grouped by the Python frames that allocated them."""
    cfg = hf_config(card(model_id), smoke)
    mb = max(1, tokens // seq)
    record.update(
        model=model_id,
        method=method,
        tokens=mb * seq,
        seq_len=seq,
        recompute="full" if recompute else "none",
        vocab=cfg.vocab_size,
        layers=cfg.num_hidden_layers,
    )
    if device != "cuda":
        raise RuntimeError("needs CUDA memory history")
    model = bf16_model(cfg, device)
    if recompute:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method == "lora":
        if recompute:
            model.enable_input_require_grads()
        model = with_lora(model)
        autocast: Any = torch.autocast(device, dtype=torch.bfloat16)
    else:
        autocast = contextlib.nullcontext()
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (mb, seq), device=device)

    def step() -> None:
        with autocast:
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        model.zero_grad(set_to_none=True)

    step()
    sync(device)
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=400000, stacks="python")
    step()
    sync(device)
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    groups, largest, peak, peak_at, events = live_at_peak(snap)
    logits = mb * seq * cfg.vocab_size
    record.update(base_allocated_gib=base / GIB,
                  peak_above_base_gib=(torch.cuda.max_memory_allocated() - base) / GIB,
                  trace_peak_gib=peak / GIB, peak_event=peak_at, events=events,
                  peak_bytes_per_logit=peak / logits, groups=groups, largest_gib=largest)


# (model, method, tokens, seq_len, recompute)
ANATOMY_RUNS: list[tuple[str, str, int, int, bool]] = [
    ("llama3.1-8b", "lora", 8192, 4096, True),
    ("llama3.2-1b", "full", 16384, 2048, True),
    ("llama3.2-1b", "full", 8192, 2048, False),
    # above 2^31 logit elements (32768 tokens x 128256)
    ("llama3.1-8b", "lora", 32768, 4096, True),
    ("llama3.2-1b", "full", 32768, 2048, True),
]
# configurations predicted by `plan estimate` before they were measured (bench/device/README.md)
HOLDOUT_RUNS: list[tuple[str, str, int, int, bool, bool]] = [
    ("qwen2.5-3b", "full", 2048, 4, False, False),
    ("qwen3-4b", "lora", 4096, 4, False, False),
    ("llama3.2-3b", "lora", 2048, 8, True, False),
    ("qwen2.5-7b", "lora", 2048, 4, True, False),
    ("qwen3-1.7b", "full", 4096, 4, True, False),
]


def compiled(
    record: dict[str, Any],
    device: str,
    *,
    smoke: bool,
    model_id: str,
    tokens: int,
    seq: int,
    compile_layers: bool,
) -> None:
    """The decoder eager, or with each layer under torch.compile: saved bytes per token and layer
    after the forward pass, and the forward + backward time of the whole model with its loss."""
    cfg = hf_config(card(model_id), smoke)
    mb = max(1, tokens // seq)
    record.update(model=model_id, compiled=compile_layers, tokens=mb * seq, seq_len=seq,
                  layers=cfg.num_hidden_layers)
    alloc = torch.cuda.memory_allocated if device == "cuda" else (lambda: 0)
    model = bf16_model(cfg, device)
    if compile_layers:
        for layer in model.model.layers:
            layer.compile()
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (mb, seq), device=device)

    def step() -> None:
        model(input_ids=ids, labels=ids).loss.backward()
        model.zero_grad(set_to_none=True)

    t0 = time.perf_counter()
    step()
    sync(device)
    record["first_step_s"] = time.perf_counter() - t0
    record["step_s"] = statistics.median(timed(step, device, 1, 4))
    sync(device)
    m0 = alloc()
    hidden = model.model(input_ids=ids).last_hidden_state
    sync(device)
    record["bytes_per_token_layer"] = (alloc() - m0 - hidden.numel() * hidden.element_size()) / (
        mb * seq * cfg.num_hidden_layers)


# (model, tokens, seq_len), each eager and compiled
COMPILED_RUNS: list[tuple[str, int, int]] = [
    ("llama3.2-1b", 8192, 2048),
    ("llama3.1-8b", 4096, 4096),
]
# (model, method, tokens, seq_len)
SAVED_RUNS: list[tuple[str, str, int, int]] = [
    ("llama3.2-1b", "full", 8192, 2048),
    ("llama3.2-3b", "full", 8192, 4096),
    ("llama3.1-8b", "full", 4096, 4096),
    ("llama3.1-8b", "lora", 8192, 4096),
    ("qwen3-8b", "lora", 8192, 2048),
    ("qwen2.5-1.5b", "full", 8192, 2048),
]


# (model, method, seq_len, micro_batch, recompute, profile): most telling first, so a cut-short run
# still returns the runs that matter.
TRAIN_RUNS: list[tuple[str, str, int, int, bool, bool]] = [
    ("llama3.2-1b", "full", 2048, 8, False, True),
    ("llama3.1-8b", "lora", 4096, 4, False, True),
    ("llama3.2-1b", "full", 2048, 2, False, False),
    ("llama3.2-1b", "full", 2048, 16, True, False),
    ("llama3.2-3b", "full", 4096, 4, False, True),
    ("llama3.1-8b", "lora", 4096, 8, True, False),
    ("qwen3-8b", "lora", 2048, 8, False, False),
    ("llama3.1-8b", "full", 2048, 1, True, False),
]
# the host's share: small micro-batches, profiled (GPU busy time against the step's wall time)
OVERHEAD_RUNS: list[tuple[str, str, int, int, bool, bool]] = [
    ("llama3.2-1b", "full", 1024, 1, False, True),
    ("llama3.2-1b", "full", 2048, 2, False, True),
    ("llama3.2-1b", "full", 4096, 2, False, True),
    ("llama3.1-8b", "lora", 2048, 1, True, True),
    ("llama3.1-8b", "lora", 4096, 2, False, True),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU, to check the "
                                                             "script")
    parser.add_argument(
        "--only",
        action="append",
        choices=["gemm", "sdpa", "train", "saved", "overhead", "anatomy", "holdout", "compiled"],
    )
    args = parser.parse_args()
    device = "cpu" if args.smoke or not torch.cuda.is_available() else "cuda"
    rec = Recorder(Path(os.environ.get("OUT", "bench/device/out")))
    env: dict[str, Any] = {"kind": "env", "torch": torch.__version__, "device": device}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env.update(
            gpu=props.name, memory_gib=props.total_memory / GIB, sms=props.multi_processor_count
        )
    for pkg in ("transformers", "peft"):
        with contextlib.suppress(Exception):
            env[pkg] = __import__(pkg).__version__
    rec.emit(env)
    only = set(args.only or ["gemm", "sdpa", "train", "saved", "overhead"])
    small = args.smoke

    def scaled(seq: int, tokens: int) -> dict[str, int]:
        return {"seq": 64 if small else seq, "tokens": 128 if small else tokens}

    if "saved" in only:
        for model_id, method, tokens, seq in SAVED_RUNS:
            measure(
                rec,
                device,
                saved,
                smoke=small,
                model_id=model_id,
                method=method,
                **scaled(seq, tokens),
            )
    if "gemm" in only:
        bench_gemm(rec, device, small)
    if "sdpa" in only:
        bench_sdpa(rec, device, small)
    runs = [
        r
        for name, rs in (
            ("train", TRAIN_RUNS),
            ("holdout", HOLDOUT_RUNS),
            ("overhead", OVERHEAD_RUNS),
        )
        if name in only
        for r in rs
    ]
    for model_id, method, seq, mb, recompute, profile in runs:
        measure(
            rec,
            device,
            train,
            smoke=small,
            model_id=model_id,
            method=method,
            seq=64 if small else seq,
            mb=min(mb, 2) if small else mb,
            recompute=recompute,
            steps=2 if small else 5,
            profile=profile,
        )
    if "anatomy" in only:
        for model_id, method, tokens, seq, recompute in ANATOMY_RUNS:
            measure(
                rec,
                device,
                anatomy,
                smoke=small,
                model_id=model_id,
                method=method,
                recompute=recompute,
                **scaled(seq, tokens),
            )
    if "compiled" in only:
        for model_id, tokens, seq in COMPILED_RUNS:
            for compile_layers in (False, True):
                measure(
                    rec,
                    device,
                    compiled,
                    smoke=small,
                    model_id=model_id,
                    compile_layers=compile_layers,
                    **scaled(seq, tokens),
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
