"""Leave-one-family-out check of `plan calibrate` on the public validation rows.

    .venv/bin/python bench/calibration_lofo.py [--validation-dir DIR]

For each family of rows (Megatron, NeMo, FSDP, torchtitan, ...), the factors are fitted from every
other family's rows (measured / predicted, the same fit `plan calibrate` runs) and applied to the
held-back family; the median |error| of the held-back rows is reported before and after (and, for
comparison, after with each scope's own geometric mean, unpooled: the same scopes and rules, weight
1). The rows and the estimator's predictions are those of bench/validate_estimates.py (same unit
conversions). Rows that validate_estimates.py leaves out of its calibration statistics (implausible
figures, the QLoRA upper bound, the ZeRO model-state rows, the torchtune speeds from notes) are left
out here too.

A second table holds back one source at a time (a paper or a table: the row id less its row number,
bench/scale_bands.py), the finer grouping the issue's targets are stated on. A third holds back one
row at a time instead (factors from every other row, its own family's
included): the everyday use, where a team's earlier runs of the same stack calibrate the next plan.
The estimator's own constants were set against these same public rows, so little systematic bias is
left for any calibration to remove; the numbers are a weak test by construction.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_bands import source_of
from validate_estimates import DEFAULT_DIR, Row, _calibration, public_rows

from plan.planner.calibrate import Factor, Observation, fit, lookup


def observation(row: Row) -> Observation:
    est = row.estimate
    assert est is not None and row.predicted
    return Observation(
        row.id,
        est.cluster.gpu.id,
        est.layout.framework,
        est.method,
        row.kind,
        row.published,
        row.predicted,
    )


@dataclass
class Errors:
    """|measured / (predicted x factor) - 1| of held-back rows: without calibration, with the pooled
    factor (what plans apply), and with the same scope's unpooled geometric mean."""

    before: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    unpooled: list[float] = field(default_factory=list)

    def add(self, o: Observation, factor: Factor | None) -> None:
        self.before.append(abs(o.ratio - 1))
        self.after.append(abs(o.ratio / (factor.factor if factor else 1.0) - 1))
        self.unpooled.append(abs(o.ratio / (factor.fitted if factor else 1.0) - 1))

    def extend(self, other: Errors) -> None:
        self.before += other.before
        self.after += other.after
        self.unpooled += other.unpooled

    def cells(self) -> str:
        median, mean = statistics.median, statistics.fmean
        # two decimals: a pooled factor's gain on the median can be a few hundredths of a point
        return (f"{len(self.before):3} {median(self.before):8.2%} {median(self.after):7.2%} "
                f"{median(self.unpooled):9.2%}   {mean(self.before):8.2%} {mean(self.after):7.2%}")


HEADER = f"{'n':>3} {'before':>8} {'after':>7} {'unpooled':>9}   {'before':>8} {'after':>7}"
OVER = f"{'':3} {'--- median |err| ---':>26}   {'-- mean |err| --':>16}"


def _held_out(
    obs: dict[str, Observation], group: dict[str, str], what: str, others: str, total: str
) -> None:
    """Each group's rows predicted from factors fitted on the other groups' rows."""
    print(f"leave-one-{what}-out (each {what} predicted from factors fitted on the other {others} "
          "rows):")
    print(f"{'':25} {OVER}")
    print(f"{'held back':14} {'metric':10} {HEADER}  scopes used")
    overall = Errors()
    for name in dict.fromkeys(group.values()):
        fitted = fit(o for rid, o in obs.items() if group[rid] != name)
        for metric in ("throughput", "memory"):
            held = [o for rid, o in obs.items() if group[rid] == name and o.metric == metric]
            if not held:
                continue
            errors, scopes = Errors(), set()
            for o in held:
                factor = lookup(fitted.factors, metric, o.gpu, o.framework, o.method)
                scopes.add("/".join(factor.scope) if factor else "none")
                errors.add(o, factor)
            overall.extend(errors)
            print(f"{name:14} {metric:10} {errors.cells()}  {', '.join(sorted(scopes))}")
    print(f"{total:25} {overall.cells()}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validation-dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    rows = public_rows(args.validation_dir)
    if rows is None:
        return 2
    usable = [r for r in _calibration(rows) if not r.bound and not r.id.startswith("ZERO")]
    obs = {r.id: observation(r) for r in usable}
    _held_out(obs, {r.id: r.family for r in usable}, "family", "families'", "all held-back rows")
    _held_out(obs, {r.id: source_of(r.id) for r in usable}, "source", "sources'",
              "all rows, by source")
    # The everyday use: your own earlier runs of the same stack calibrate the next one. Each row is
    # held back in turn and the factors are fitted from every other row (its own family's included).
    print("leave-one-run-out (each row predicted from factors fitted on all the other rows):")
    print(f"{'':10} {OVER}")
    print(f"{'metric':10} {HEADER}")
    for metric in ("throughput", "memory"):
        errors = Errors()
        for rid, o in obs.items():
            if o.metric == metric:
                others = fit(x for r2, x in obs.items() if r2 != rid)
                errors.add(o, lookup(others.factors, metric, o.gpu, o.framework, o.method))
        print(f"{metric:10} {errors.cells()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
