"""English words of `plan estimate`'s table (planner/cli/estimate_table.py): the headline, the
layout, memory and step-time tables, the throughput and run lines; the wording they always had.
Keys match `estimate_zh` one for one."""

from __future__ import annotations

ESTIMATE: dict[str, str] = {
    # the headline (markup such as [green] stays outside these words)
    "estimate.headline": "{model} {method} on {gpus} x {gpu} ({per_node} per node, {fabric}){where}"
                         ": {verdict} ({total:.1f} of {card:g} GiB; {usable:.1f} usable with "
                         "{headroom:.0%} headroom)",
    "estimate.fabric": "{kind} {gbps:g} Gb/s per GPU",
    "estimate.on_platform": " on {platform}",
    "estimate.fits": "fits",
    "estimate.not_card": "does NOT fit the card",
    "estimate.not_headroom": "fits the card, not its {headroom:.0%} headroom",
    "estimate.at_limit": "runs only at the card's limit",
    # the layout table (the field names are flags: they stay as they are)
    "estimate.layout": "layout",
    "estimate.field": "field",
    "estimate.value": "value",
    "estimate.searched": "searched",
    "estimate.derived": "derived",
    "estimate.hybrid_on": "on ({group} per group, {replicas} replicas)",
    # the memory and step-time tables
    "estimate.memory_title": "memory per GPU (GiB) against {card:g} GiB",
    "estimate.part": "part",
    "estimate.gib": "GiB",
    "estimate.of_card": "% of card",
    "estimate.margin": "margin to usable ({headroom:.0%} headroom)",
    "estimate.step_title": "step time {s:.3f} s",
    "estimate.seconds": "s",
    "estimate.share": "share",
    "part.weights": "weights",
    "part.gradients": "gradients",
    "part.optimizer": "optimizer",
    "part.activations": "activations",
    "part.other": "other",
    "part.total": "total",
    "part.compute": "compute",
    "part.recompute": "recompute",
    "part.tp_comm": "tp_comm",
    "part.cp_comm": "cp_comm",
    "part.ep_comm": "ep_comm",
    "part.dp_comm": "dp_comm",
    "part.pp_bubble": "pp_bubble",
    "part.host": "host",
    # the throughput line
    "estimate.throughput": "throughput: {tps:,.0f} tokens/s ({band})",
    "estimate.band": "p10-p90 {lo:,.0f}-{hi:,.0f}; {per_gpu:,.0f} per GPU",
    "estimate.memory_band": "memory p10-p90 {lo:.1f}-{hi:.1f} GiB",
    "estimate.model_tflops": "{tflops:.0f} model TFLOP/s per GPU",
    "estimate.mfu": "MFU {mfu:.1%}",
    "estimate.mfu_causal": " ({causal:.1%} counting only the causal half of attention)",
    "estimate.gflop": "{gflop:.1f} GFLOP per token",
    "estimate.line_sep": "; ",
    # the run line
    "estimate.run": "run of {tokens:,.3g} tokens: {wall}, {gpu_hours:,.0f} GPU-hours ({overhead})",
    "estimate.wall": "{h:,.1f} h wall (p10-p90 {low:,.1f}-{high:,.1f})",
    "estimate.overhead": "failure overhead {fraction:.1%}, checkpoint every {every_h:.2f} h, "
                         "~{n:.1f} interruptions",
}
