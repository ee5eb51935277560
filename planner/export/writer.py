"""Render one stack's files for one or more planned jobs, with the README.md, and write them."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from plan.models.said import say_as
from plan.planner.atomic_file import WriteFailed, write_all
from plan.planner.export import accelerate, deepspeed, llamafactory, megatron, torchtitan
from plan.planner.export.launch import node_steps
from plan.planner.export.layout import STACKS, ExportError, ExportLayout
from plan.planner.output_target import OutputRefused, check_inside, component_map, same_file
from plan.planner.plain_text import plain

_LAUNCHER = {"deepspeed": "launch.sh", "megatron": "train.sh", "torchtitan": "launch.sh",
             "llamafactory": "launch.sh", "accelerate": "launch.sh", "torchrun-fsdp": "launch.sh"}


def render_stack(layout: ExportLayout, stack: str) -> tuple[dict[str, str], list[str]]:
    """(file name -> text, notes) for one job. Raises ExportError naming what the stack cannot
    express."""
    if layout.on_npu and stack != "megatron":
        raise ExportError(say_as(
            "export.writer_job_planned_ascend_npus",
            "{stack}: the job is planned on {gpu} (Ascend NPUs); NPU launches are written for "
            "MindSpeed-LLM only: try --to megatron",
            stack=stack, gpu=layout.gpu))
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
    raise ExportError(say_as(
        "export.writer_unknown_stack",
        "unknown stack {stack}",
        stack=repr(stack)))


def exporting_stacks(layout: ExportLayout) -> tuple[str, ...]:
    """The `plan export --to` stacks that write this job (render it without a refusal), in STACKS'
    order: what the report's layout column names, so that it agrees with `plan export`."""
    runs = []
    for stack in STACKS:
        try:
            render_stack(layout, stack)
        except ExportError:
            continue
        runs.append(stack)
    return tuple(runs)


def stack_label(layout: ExportLayout, stack: str) -> str:
    """The stack as the report names it: LLaMA-Factory with the backend its launch.sh selects, so
    that a reader sees which one runs the layout (Megatron-Bridge runs the Megatron execution the
    plan timed; the Hugging Face path runs DeepSpeed or DDP)."""
    if stack == "llamafactory" and llamafactory.uses_bridge(layout):
        return "llamafactory (Megatron-Bridge)"
    return stack


def execution_model(layout: ExportLayout, stack: str) -> str:
    """The execution model (models/stacks.py) the files `stack` writes for this job run: Megatron
    for megatron (MindSpeed-LLM on NPUs) and LLaMA-Factory's Megatron-Bridge backend; DeepSpeed
    for deepspeed, LLaMA-Factory's DeepSpeed JSON and accelerate's DeepSpeed plugin; FSDP (the
    PyTorch family: FSDP, DDP, the Hugging Face Trainer) otherwise."""
    if stack == "megatron" or (stack == "llamafactory" and llamafactory.uses_bridge(layout)):
        return "megatron"
    if stack == "deepspeed" or (stack == "llamafactory" and llamafactory.uses_deepspeed(layout)):
        return "deepspeed"
    if stack == "accelerate" and accelerate.plugin_for(layout, None) == "deepspeed":
        return "deepspeed"
    return "fsdp"


def readme(
    stack: str,
    rendered: list[tuple[ExportLayout, dict[str, str], list[str]]],
    plan_line: str,
    assumptions: list[str],
    folders: dict[str, str] | None = None,
) -> str:
    """`folders`: each job's folder when there are several (its id, or a safe name for it)."""
    out = [f"# Launch configuration: {stack}", "", plan_line, ""]
    for layout, files, notes in rendered:
        prefix = f"{folders[layout.job]}/" if folders else ""
        out += [f"## {layout.job}", "", layout.paragraph(), "", "Files: " + ", ".join(
            f"`{prefix}{name}`" for name in files), "", "Commands, in order:", ""]
        out.append("1. put your training script (`train.py` where one is named) and data beside "
                   f"these files; `cd {prefix or '.'}`")
        for i, step in enumerate(node_steps(layout), start=2):
            out.append(f"{i}. {step}: `bash {_LAUNCHER[stack]}`")
        renamed = ([folder_note(layout.job, folders[layout.job])]
                   if folders and prefix != f"{layout.job}/" else [])
        if layout.notes or notes or renamed:
            out += ["", "Notes:", ""] + [f"- {n}" for n in (*renamed, *layout.notes, *notes)]
        out.append("")
    if assumptions:
        out += ["## Assumptions of the plan", ""] + [f"- {a}" for a in assumptions] + [""]
    out += ["Checked identities: tp x pp x cp x dp = world size; micro-batch x gradient "
            "accumulation x dp = "
            "global batch.", ""]
    return "\n".join(out)


def folder_note(job: str, folder: str) -> str:
    return say_as("export.folder_note", "job {job} is written to folder {folder}: its id is not a "
                  "safe folder name", job=repr(job), folder=repr(folder))


def write_export(out_dir: Path, stack: str, layouts: list[ExportLayout], plan_line: str,
                 assumptions: list[str], inputs: Sequence[Path] = ()) -> list[Path]:
    """Render every job first (so a refusal writes nothing), check every target (inside `out_dir`,
    no symlink, none of `inputs`: OutputRefused), then write them all or none (WriteFailed)."""
    rendered = []
    for layout in layouts:
        try:
            files, notes = render_stack(layout, stack)
        except ExportError as exc:
            raise ExportError(say_as(
                "export.writer_job",
                "job {job}: {problem}",
                job=layout.job, problem=exc.args[0])) from None
        rendered.append((layout, files, notes))
    folders = component_map([layout.job for layout in layouts]) if len(rendered) > 1 else None
    planned: list[tuple[Path, str, int | None]] = []
    for layout, files, _ in rendered:
        target = out_dir / folders[layout.job] if folders else out_dir
        planned += [(target / name, text, 0o755 if name.endswith(".sh") else None)
                    for name, text in files.items()]
    text = readme(stack, rendered, plan_line, assumptions, folders)
    planned.append((out_dir / "README.md", text, None))
    _check_targets(out_dir, [path for path, _, _ in planned], inputs)
    made = _make_folders(out_dir, sorted({path.parent for path, _, _ in planned}))
    try:
        write_all(planned)
    except BaseException:
        for folder in reversed(made):  # only the folders this run made, and only when still empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return [path for path, _, _ in planned]


def _check_targets(out_dir: Path, paths: list[Path], inputs: Sequence[Path]) -> None:
    if out_dir.is_symlink() and not out_dir.is_dir():
        raise OutputRefused(say_as("out.dangling", "-o {folder}: is a symbolic link to no folder",
                                   folder=plain(out_dir)))
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputRefused(say_as("out.not_folder", "-o {folder}: exists and is not a folder",
                                   folder=plain(out_dir)))
    for path in paths:
        check_inside(out_dir, path)
        if path.is_dir():
            raise OutputRefused(say_as("out.inner_folder", "-o {folder}: {path} is a folder",
                                       folder=plain(out_dir), path=plain(path)))
        for source in inputs:
            if same_file(path, source):
                raise OutputRefused(say_as(
                    "out.inner_input", "-o {folder}: {path} is one of this command's inputs; "
                    "writing it would lose the input: choose another folder",
                    folder=plain(out_dir), path=plain(path)))


def _make_folders(out_dir: Path, folders: list[Path]) -> list[Path]:
    """Create `out_dir` and the jobs' folders; the ones this call made, parents first."""
    made: list[Path] = []
    for folder in [out_dir, *folders]:
        missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteFailed.from_os_error(folder, exc) from None
        made += [p for p in missing if p not in made]
    return made
