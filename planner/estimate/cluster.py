"""The hardware a run gets: GPU type and count, node size, fabric, reliability figures."""

from __future__ import annotations

from dataclasses import dataclass, replace

from plan.models.gpu import GPU
from plan.models.platform import Platform
from plan.planner.i18n.said import say

DEFAULT_GPU_MTBF_H = 50_700.0
"""Per-GPU hours between unexpected interruptions: Llama 3 405B run, 16,384 H100 x 54 days / 419
unexpected interruptions (Llama 3 Herd of Models, Meta 2024, sec. 3.3.4)."""

DEFAULT_CHECKPOINT_WRITE_MIN = 0.55
"""Time to write one checkpoint: Llama 3's largest per-GPU state, 4 GB, from 16,384 GPUs at its
storage's 2 TB/s sustained write bandwidth, 33 s (Llama 3 Herd of Models, sec. 3.3.1). A cluster
built for large-scale training; a platform's own figure replaces it."""

EFFECTIVE_TRAINING_TIME = 0.90
"""Llama 3 405B's effective training time with one unexpected interruption every 3.1 h on 16,384
H100s (">90%", Llama 3 Herd of Models, sec. 3.3.4)."""

DEFAULT_RESTART_MIN = 6.0
"""Time to detect a failure, reschedule and reload the last checkpoint: derived, not published. 6
min is the longest restart with which the failure model (reliability.py), at the MTBF and checkpoint
write above, keeps Llama 3's run at its published >90% effective training time (the derivation is
checked in tests/estimate/test_search_and_runs.py); a platform's own figure replaces it."""

DEFAULT_SPOT_PREEMPTIONS_PER_NODE_DAY = 1.0
"""Assumed spot preemptions per node per day: no platform publishes a rate."""


def default_fabric(gpu: GPU) -> tuple[str, float]:
    """(kind, Gb/s per GPU one direction) assumed when no platform is given.

    SXM/rack datacenter parts: InfiniBand, 400 Gb/s per GPU for Hopper and later (NDR), 200 Gb/s for
    older (HDR); PCIe and consumer cards: 25 Gb/s Ethernet (rental clouds). Typical figures from
    public cluster descriptions, assumed.
    """
    if gpu.form_factor.upper().startswith("PCIE"):
        return "ethernet", 25.0
    if gpu.architecture in ("hopper", "blackwell", "rubin"):
        return "infiniband", 400.0
    if gpu.architecture == "davinci":
        return "roce", 200.0
    return "infiniband", 200.0


@dataclass(frozen=True, eq=False)
class Cluster:
    """`gpus` GPUs of one type in nodes of `gpus_per_node`, joined by a fabric of
    `fabric_gbps_per_gpu` (gigabits/s per GPU, one direction). Reliability: per-GPU MTBF in hours,
    restart and checkpoint-write minutes, spot preemptions per node per day. `speedup` multiplies
    throughput (a vendor claim; 1.0 unless the user opts in)."""

    gpu: GPU
    gpus: int
    gpus_per_node: int
    fabric_kind: str
    fabric_gbps_per_gpu: float
    gpu_mtbf_h: float
    restart_min: float
    checkpoint_write_min: float
    spot_preemptions_per_day: float = 0.0
    speedup: float = 1.0
    assumptions: tuple[str, ...] = ()
    # RAM free for offloading; None: HOST_MEMORY_GIB_PER_GPU assumed
    host_memory_gib_per_gpu: float | None = None
    # the training stack at this scale (band.STACK_MATURITIES); None: not stated, timed as mature
    stack_maturity: str | None = None

    def key(self) -> tuple[object, ...]:
        """Hashable identity (the pydantic GPU holds lists, so it cannot be hashed itself). The
        stack's maturity times whole runs, not steps: it is no part of the layout search's key."""
        searched = self._key(
            self.fabric_kind,
            self.fabric_gbps_per_gpu,
            self.gpu_mtbf_h,
            self.restart_min,
            self.checkpoint_write_min,
            self.spot_preemptions_per_day,
        )
        return (*searched, self.stack_maturity)

    def _key(
        self,
        fabric_kind: str,
        fabric_gbps_per_gpu: float,
        gpu_mtbf_h: float,
        restart_min: float,
        checkpoint_write_min: float,
        spot_preemptions_per_day: float,
    ) -> tuple[object, ...]:
        g = self.gpu
        link = g.intra_node_link
        return (
            g.id,
            g.architecture,
            g.memory_gib,
            g.memory_bandwidth_gb_per_s,
            g.peak_tflops.bf16,
            g.peak_tflops.fp16,
            g.peak_tflops.fp8,
            link.kind,
            link.bandwidth_gb_per_s,
            link.max_group,
            g.form_factor,
            self.gpus,
            self.gpus_per_node,
            fabric_kind,
            fabric_gbps_per_gpu,
            gpu_mtbf_h,
            restart_min,
            checkpoint_write_min,
            spot_preemptions_per_day,
            self.speedup,
            self.host_memory_gib_per_gpu,
        )

    def _search_view(self) -> tuple[str, float, float, float, float, float]:
        """(fabric kind, fabric Gb/s per GPU, MTBF h, restart min, checkpoint min, spot rate) as the
        layout search sees this cluster: reliability changes no layout (one search serves hourly,
        spot and every platform with this fabric), on one node neither does the fabric between
        nodes, and between nodes only its bandwidth counts (topology.py costs InfiniBand, RoCE and
        Ethernet alike), so one search serves every kind at the same Gb/s."""
        one_node = self.gpus <= self.gpus_per_node
        if one_node or self.fabric_kind == "none":
            return ("none", 0.0 if one_node else self.fabric_gbps_per_gpu, 1.0, 0.0, 0.0, 0.0)
        return ("network", self.fabric_gbps_per_gpu, 1.0, 0.0, 0.0, 0.0)

    def for_layout_search(self) -> Cluster:
        """This cluster as the layout search sees it (`_search_view`), without assumptions."""
        kind, gbps, mtbf, restart, ckpt, spot = self._search_view()
        return replace(
            self,
            fabric_kind=kind,
            fabric_gbps_per_gpu=gbps,
            gpu_mtbf_h=mtbf,
            restart_min=restart,
            checkpoint_write_min=ckpt,
            spot_preemptions_per_day=spot,
            assumptions=(),
            stack_maturity=None,
        )

    def layout_search_key(self) -> tuple[object, ...]:
        """`for_layout_search().key()`, without building that cluster (whose stack maturity is
        none: it times whole runs, not steps)."""
        return (*self._key(*self._search_view()), None)

    def __hash__(self) -> int:
        return hash(self.key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cluster) and self.key() == other.key()

    @property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    @classmethod
    def of(cls, gpu: GPU, gpus: int, platform: Platform | None = None, *,
           gpus_per_node: int | None = None, spot: bool = False,
           trust_vendor_claims: bool = False, fabric: tuple[str, float] | None = None) -> Cluster:
        """Build a cluster from a catalog GPU and, optionally, a platform.

        Without a platform: nodes of the GPU's typical size, the fabric of `default_fabric`, and the
        reliability defaults above (MTBF 50,700 GPU-hours); each assumption is recorded in
        `assumptions`. `fabric` (kind, Gb/s per GPU): the network between nodes as its owner
        declares it (an owned pool's), in place of the platform's or the assumed one. Raises
        ValueError if gpus < 1.
        """
        if gpus < 1:
            raise ValueError(f"gpus: must be at least 1, got {gpus}")
        notes: list[str] = []
        per_node = gpus_per_node or gpu.gpus_per_node
        if platform is not None and gpus_per_node is None and platform.limits.max_gpus_per_node:
            per_node = min(per_node, platform.limits.max_gpus_per_node)
        if (
            gpus_per_node is None
            and per_node == gpu.gpus_per_node
            and gpu.gpus_per_node_assumption
            and gpus > 1
        ):
            notes.append(gpu.gpus_per_node_assumption)
        kind: str
        gbps: float
        if fabric is not None:
            kind, gbps = fabric
        elif platform is not None:
            kind, gbps = platform.fabric.kind, platform.fabric.gbps_per_gpu
        else:
            kind, gbps = default_fabric(gpu)
            if gpus > per_node:
                notes.append(say("enote.no_platform", kind=kind, gbps=gbps))
        rel = platform.reliability if platform is not None else None
        if rel is not None:
            mtbf, restart, ckpt = rel.gpu_mtbf_h, rel.restart_min, rel.checkpoint_write_min
            spot_rate = rel.spot_preemptions_per_day
        else:
            mtbf, restart, ckpt, spot_rate = (DEFAULT_GPU_MTBF_H, DEFAULT_RESTART_MIN,
                                              DEFAULT_CHECKPOINT_WRITE_MIN, None)
            notes.append(say("note.reliability", mtbf=mtbf, restart=restart, ckpt=ckpt))
        preempt = 0.0
        if spot:
            if spot_rate is None:
                spot_rate = DEFAULT_SPOT_PREEMPTIONS_PER_NODE_DAY
                notes.append(f"spot: assumed {spot_rate:g} preemption per node per day (none "
                             "published)")
            preempt = spot_rate
        speedup = 1.0
        if trust_vendor_claims and platform is not None:
            for claim in platform.vendor_claims:
                if claim.kind == "speedup":
                    speedup *= claim.factor
                    notes.append(f"vendor claim applied (unverified): x{claim.factor:g} throughput "
                                 f"({claim.source})")
        return cls(gpu=gpu, gpus=gpus, gpus_per_node=per_node, fabric_kind=kind,
                   fabric_gbps_per_gpu=gbps, gpu_mtbf_h=mtbf, restart_min=restart,
                   checkpoint_write_min=ckpt, spot_preemptions_per_day=preempt, speedup=speedup,
                   assumptions=tuple(notes))
