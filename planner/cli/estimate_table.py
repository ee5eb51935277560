"""The `plan estimate` table: a headline with the verdict, the layout, the memory and step-time
breakdowns, the throughput and run lines, and the notes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from plan.models.platform import Platform
from plan.planner.cli.common import console, printable
from plan.planner.estimate import Estimate
from plan.planner.estimate.types import CAUSAL_MFU_NOTE_GAP, OPTIMIZER_NAME_OF
from plan.planner.i18n import numbers, stacks_en, t, word
from plan.planner.i18n.said import Joined, Said, local, phrase, say
from plan.planner.plan import recompute_label


def print_table(est: Estimate, searched: tuple[str, ...], tokens: float | None, notes: list[str],
                plat: Platform | None, headroom: float) -> None:
    """The estimate as `plan estimate` prints it: `searched` the layout fields the search chose,
    `tokens` the run's (None: no run line), `plat` the platform named (None: none)."""
    console.print(_headline(est, plat, headroom))
    console.print(_layout_table(est, searched))
    mem = _breakdown(t("estimate.memory_title", card=est.gpu_memory_gib),
                     (t("estimate.gib"), t("estimate.of_card")), est.memory.to_dict(),
                     est.gpu_memory_gib, ".2f")
    mem.add_row(t("estimate.margin", headroom=headroom), f"{est.margin_gib:.2f}", "")
    console.print(mem)
    console.print(_breakdown(t("estimate.step_title", s=est.step_time_s),
                             (t("estimate.seconds"), t("estimate.share")), est.time.to_dict(),
                             est.step_time_s, ".4f"))
    console.print(_throughput_line(est))
    if tokens is not None:
        console.print(_run_line(est, tokens))
    for note in notes:
        console.print(printable(f"- {local(note)}"))


def _headline(est: Estimate, plat: Platform | None, headroom: float) -> str:
    """The model, method and cluster, and whether the layout fits (within the headroom, the card
    only, the card only with the allocator squeezed, or not at all)."""
    c = est.cluster
    if est.fits:
        verdict = f"[green]{t('estimate.fits')}[/green]"
    elif not est.fits_card:
        verdict = f"[red]{t('estimate.not_card')}[/red]"
    elif est.memory.total_gib <= est.gpu_memory_gib:
        verdict = f"[yellow]{t('estimate.not_headroom', headroom=headroom)}[/yellow]"
    else:
        verdict = f"[yellow]{t('estimate.at_limit')}[/yellow]"
    return t("estimate.headline", model=f"[bold]{printable(est.model_id)}[/bold]",
             method=est.method, gpus=c.gpus, gpu=c.gpu.id, per_node=c.gpus_per_node,
             fabric=t("estimate.fabric", kind=c.fabric_kind, gbps=c.fabric_gbps_per_gpu),
             where=t("estimate.on_platform", platform=plat.id) if plat else "", verdict=verdict,
             total=est.memory.total_gib, card=est.gpu_memory_gib,
             usable=est.gpu_memory_gib * (1 - headroom), headroom=headroom)


def _layout_rows(est: Estimate, searched: tuple[str, ...]) -> list[tuple[str, Any]]:
    """The layout's fields as the table lists them (the rarer ones only where they are set)."""
    lay = est.layout
    recompute = recompute_label(lay.recompute, lay.recompute_layers)
    rows: list[tuple[str, Any]] = [
        ("framework", lay.framework), ("tp", lay.tp), ("pp", lay.pp), ("cp", lay.cp),
        ("dp", lay.dp), ("zero", lay.zero), ("recompute", recompute),
        ("micro_batch", lay.micro_batch), ("global_batch", lay.global_batch),
        ("seq_len", lay.seq_len), ("precision", lay.precision),
        ("sequence_parallel", lay.sequence_parallel), ("virtual_pipeline", lay.virtual_pipeline)]
    if lay.ep > 1 or "ep" in searched:
        rows.append(("ep", lay.ep))
    if lay.capacity_factor != 1.0:
        rows.append(("capacity_factor", f"{lay.capacity_factor:g}"))
    rows.append(("attention", "flash" if lay.flash_attention else "eager"))
    rows.append(("kernels", lay.kernels))
    rows.append(("loss", lay.loss))
    # (as --optimizer takes it)
    rows.append(("optimizer", OPTIMIZER_NAME_OF.get(lay.optimizer, lay.optimizer)))
    if lay.state_offload:
        rows.append(("cpu_offload", "on"))
    if lay.shard_group:
        rows.append(("hybrid_shard", t("estimate.hybrid_on", group=lay.shard_group,
                                        replicas=lay.replicas)))
    if lay.lora_rank is not None:
        rows.append(("lora_rank", lay.lora_rank))
        rows.append(("lora_targets", lay.lora_targets))
    return rows


def _layout_table(est: Estimate, searched: tuple[str, ...]) -> Table:
    table = Table(title=t("estimate.layout"), title_justify="left")
    table.add_column(t("estimate.field"))
    table.add_column(t("estimate.value"), justify="right")
    table.add_column("")
    for name, value in _layout_rows(est, searched):
        how = ("estimate.searched" if name in searched
               else ("estimate.derived" if name == "dp" else ""))
        table.add_row(name, str(value), t(how) if how else "")
    return table


def _throughput_line(est: Estimate) -> str:
    lo, hi = est.tokens_per_s_range
    mem_lo, mem_hi = est.memory_gib_range
    mfu = t("estimate.mfu", mfu=est.mfu)
    if est.mfu - est.mfu_causal >= CAUSAL_MFU_NOTE_GAP:
        mfu += t("estimate.mfu_causal", causal=est.mfu_causal)
    band = t("estimate.band", lo=lo, hi=hi, per_gpu=est.tokens_per_s_per_gpu)
    return t("estimate.line_sep").join((
        t("estimate.throughput", tps=est.tokens_per_s, band=band),
        t("estimate.memory_band", lo=mem_lo, hi=mem_hi),
        t("estimate.model_tflops", tflops=est.model_tflops_per_gpu),
        mfu,
        t("estimate.gflop", gflop=est.flops_per_token / 1e9)))


def _run_line(est: Estimate, tokens: float) -> str:
    run = est.run(tokens)
    low, high = run.hours_range
    wall = t("estimate.wall", h=run.hours, low=low, high=high)
    overhead = t("estimate.overhead", fraction=run.failure_overhead_fraction,
                 every_h=run.checkpoint_interval_h, n=run.expected_interruptions)
    return t("estimate.run", tokens=numbers.count(tokens), wall=wall, gpu_hours=run.gpu_hours,
             overhead=overhead)


def _breakdown(title: str, columns: tuple[str, str], parts: dict[str, float], whole: float,
               fmt: str) -> Table:
    """A table of parts, each with its value and its share of `whole`."""
    table = Table(title=title, title_justify="left")
    table.add_column(t("estimate.part"))
    for column in columns:
        table.add_column(column, justify="right")
    for name, value in parts.items():
        table.add_row(word("part", name), format(value, fmt), f"{value / whole:.0%}")
    return table


# the sentences a search's reason may be, read back from plain text (the estimate store's)
REASON_KEYS = tuple(key for key in stacks_en.STACKS if key.startswith(("stack.", "reason.")))


def no_layout_line(model: str, gpus: int, gpu: str, reasons: Mapping[str, int]) -> str:
    """`plan estimate`'s line when the search found no valid layout: each kind of reason with the
    layouts it left out, in the reader's language."""
    said = [say("estimate.reason_one" if n == 1 else "estimate.reason_many", n=n,
                reason=reason if isinstance(reason, Said) else phrase(reason, *REASON_KEYS))
            for reason, n in reasons.items()]
    return say("estimate.no_layout", model=model, gpus=gpus, gpu=gpu,
               reasons=Joined(said) if said else say("estimate.no_candidates"))
