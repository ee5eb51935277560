"""Launch lines: torchrun per node, with the node-level variables of each managed platform.

Source: docs/sources/launch-configs.md sections 6 (torchrun, PyTorch 2.14.1
`torch/distributed/run.py`) and 7 (PAI-DLC built-in variables 2026-04-01; TI-ONE 分布式训练使用指引
2025-11-06; ModelArts 训练作业环境变量 2026-08-04). Managed platforms' WORLD_SIZE and RANK count
nodes, so they go to --nnodes / --node_rank.
"""

from __future__ import annotations

from plan.planner.export.layout import ExportLayout

MASTER_PORT = 29500  # torchrun's default --master-port

# platform -> (nodes, node rank, GPUs per node, master address, master port) as shell expressions
_PLATFORM_VARS = {
    "aliyun-pai": ("$WORLD_SIZE", "$RANK", "$NPROC_PER_NODE", "$MASTER_ADDR", "$MASTER_PORT"),
    "tencent-ti-one": ("$WORLD_SIZE", "$RANK", "$GPU_NUM_PER_NODE", "$MASTER_ADDR", "$MASTER_PORT"),
    "huawei-modelarts": (
        "$MA_NUM_HOSTS",
        "$VC_TASK_INDEX",
        "$MA_NUM_GPUS",
        "${VC_WORKER_HOSTS%%,*}",
        str(MASTER_PORT),
    ),
}

_FORM = {
    "aliyun-pai": "PAI-DLC job: job type PyTorchJob, --worker-count {nodes}, {gpn} GPUs per "
                  "worker; "
                  "paste the start command below as the job command (it runs once per node)",
    "tencent-ti-one": "TI-ONE training task: training mode DDP, {nodes} node(s) with {gpn} GPUs "
                      "each; the start command below runs on every node",
    "huawei-modelarts": "ModelArts training job: instance count {nodes}, a flavor with {gpn} "
                        "accelerators; boot command below (with the Ascend preset image the boot "
                        "file runs once per NPU: use a custom image or guard on ASCEND_DEVICE_ID "
                        "== 0)",
}


def rendezvous(layout: ExportLayout) -> tuple[str, str, str, str, str]:
    """(nnodes, node_rank, nproc_per_node, master_addr, master_port) as shell words for this
    placement."""
    if layout.platform in _PLATFORM_VARS:
        return _PLATFORM_VARS[layout.platform]
    return (str(layout.nodes), "$NODE_RANK" if layout.nodes > 1 else "0", str(layout.gpus_per_node),
            "$MASTER_ADDR" if layout.nodes > 1 else "127.0.0.1", str(MASTER_PORT))


def torchrun(layout: ExportLayout, target: str) -> str:
    """A torchrun line for every node (static rendezvous) ending with `target` (script and its
    args)."""
    nnodes, rank, nproc, addr, port = rendezvous(layout)
    if layout.nodes == 1 and not layout.managed:
        return f"torchrun --standalone --nnodes=1 --nproc-per-node={layout.gpus_per_node} {target}"
    return (f"torchrun --nnodes={nnodes} --node-rank={rank} --nproc-per-node={nproc} "
            f"--master-addr={addr} --master-port={port} {target}")


def managed_form(layout: ExportLayout) -> str | None:
    """What to enter in the managed platform's job form, or None for owned / rented machines."""
    form = _FORM.get(layout.platform)
    return form.format(nodes=layout.nodes, gpn=layout.gpus_per_node) if form else None


def node_steps(layout: ExportLayout) -> list[str]:
    """How to run the per-node command: the platform form, or one line per node."""
    form = managed_form(layout)
    if form:
        return [form]
    if layout.nodes == 1:
        return ["run the command once on the machine"]
    return [f"run the same command on each of the {layout.nodes} nodes with "
            f"NODE_RANK=0..{layout.nodes - 1} and MASTER_ADDR set to node 0's address (e.g. "
            "`NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash launch.sh`)"]
