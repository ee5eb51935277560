"""Lines about the instances of one recurring job said once when they say the same: twelve monthly
runs with the same time band, or the same cheaper option ruled out by the same rule, read as one
line naming 'sft-01..12', not twelve."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from plan.models.timeline import instances_label
from plan.planner.candidates.windows import instance_renamer
from plan.planner.i18n.said import say

MARK = "<instance>"  # where an instance's id stood, while lines are compared


def said_once(items: Sequence[tuple[str, str]], series: Mapping[str, str]) -> list[str]:
    """The lines of `items` ((job, line) pairs, in order). Lines of two or more instances of one
    recurring job (`series`: instance -> job) that read the same but for the instance's id become
    one line where the first stood, naming them all and saying it holds for each; a keyed line
    stays keyed, so it is still said in the reader's language."""
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}  # -> [(job, line, masked)]
    order: list[tuple[str, str]] = []
    for n, (job, line) in enumerate(items):
        masked = instance_renamer(job, MARK)(line) if job in series else line
        # (a job that does not recur, or a line naming no instance, is a group of its own)
        key = (series[job], str(masked)) if job in series and masked != line else (str(n), "")
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append((job, line, masked))
    lines = []
    for key in order:
        members = groups[key]
        if len(members) == 1:
            lines.append(members[0][1])
            continue
        label = instances_label(key[0], [job for job, _, _ in members])
        lines.append(say("narrate.instances_each", line=instance_renamer(MARK, label)(
            members[0][2]), n=len(members)))
    return lines
