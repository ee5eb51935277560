"""Render one stack's files for one or more planned jobs, with the README.md, and write them."""

from __future__ import annotations

from pathlib import Path

from plan.planner.export import accelerate, deepspeed, llamafactory, megatron, torchtitan
from plan.planner.export.launch import node_steps
from plan.planner.export.layout import ExportError, ExportLayout

_LAUNCHER = {"deepspeed": "launch.sh", "megatron": "train.sh", "torchtitan": "launch.sh",
             "llamafactory": "launch.sh", "accelerate": "launch.sh", "torchrun-fsdp": "launch.sh"}


def render_stack(layout: ExportLayout, stack: str) -> tuple[dict[str, str], list[str]]:
    """(file name -> text, notes) for one job. Raises ExportError naming what the stack cannot express."""
    if layout.on_npu and stack != "megatron":
        raise ExportError(f"{stack}: the job is planned on {layout.gpu} (Ascend NPUs); NPU launches are written "
                          "for MindSpeed-LLM only: try --to megatron")
    if stack == "deepspeed":
        return deepspeed.render(layout)
    if stack == "megatron":
        return megatron.render(layout)
    if stack == "torchtitan":
        return torchtitan.render(layout)
    if stack == "llamafactory":
        return llamafactory.render(layout)
    if stack == "accelerate":
        return accelerate.render(layout)
    if stack == "torchrun-fsdp":
        return accelerate.render(layout, forced_plugin="fsdp")
    raise ExportError(f"unknown stack {stack!r}")


def readme(stack: str, rendered: list[tuple[ExportLayout, dict[str, str], list[str]]], plan_line: str,
           assumptions: list[str]) -> str:
    out = [f"# Launch configuration: {stack}", "", plan_line, ""]
    for layout, files, notes in rendered:
        prefix = f"{layout.job}/" if len(rendered) > 1 else ""
        out += [f"## {layout.job}", "", layout.paragraph(), "", "Files: " + ", ".join(
            f"`{prefix}{name}`" for name in files), "", "Commands, in order:", ""]
        out.append(f"1. put your training script (`train.py` where one is named) and data beside these files; "
                   f"`cd {prefix or '.'}`")
        for i, step in enumerate(node_steps(layout), start=2):
            out.append(f"{i}. {step}: `bash {_LAUNCHER[stack]}`")
        if layout.notes or notes:
            out += ["", "Notes:", ""] + [f"- {n}" for n in (*layout.notes, *notes)]
        out.append("")
    if assumptions:
        out += ["## Assumptions of the plan", ""] + [f"- {a}" for a in assumptions] + [""]
    out += ["Checked identities: tp x pp x cp x dp = world size; micro-batch x gradient accumulation x dp = "
            "global batch.", ""]
    return "\n".join(out)


def write_export(out_dir: Path, stack: str, layouts: list[ExportLayout], plan_line: str,
                 assumptions: list[str]) -> list[Path]:
    """Render every job first (so a refusal writes nothing), then write them under `out_dir`."""
    rendered = []
    for layout in layouts:
        try:
            files, notes = render_stack(layout, stack)
        except ExportError as exc:
            raise ExportError(f"job {layout.job}: {exc}") from None
        rendered.append((layout, files, notes))
    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for layout, files, _ in rendered:
        target = out_dir / layout.job if len(rendered) > 1 else out_dir
        target.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            path = target / name
            path.write_text(text, encoding="utf-8")
            if name.endswith(".sh"):
                path.chmod(0o755)
            written.append(path)
    path = out_dir / "README.md"
    path.write_text(readme(stack, rendered, plan_line, assumptions), encoding="utf-8")
    written.append(path)
    return written
