"""Launch configurations for a planned job, in each training stack's own key names and file formats.

`layout` turns a planned job into the numbers every stack needs (and checks their identities); one
module per stack writes its files (`deepspeed`, `megatron`, `torchtitan`, `llamafactory`,
`accelerate` for both accelerate and torchrun-fsdp); `readme` writes the README.md that says what to
run, in order.
"""

from plan.planner.export.layout import STACKS, ExportError, ExportLayout, build_layout
from plan.planner.export.writer import render_stack, write_export

__all__ = ["STACKS", "ExportError", "ExportLayout", "build_layout", "render_stack", "write_export"]
