"""Leave-one-family-out check of `plan calibrate` on the public validation rows.

    .venv/bin/python bench/calibration_lofo.py [--validation-dir DIR]

For each family of rows (Megatron, NeMo, FSDP, torchtitan, ...), the factors are fitted from every
other family's rows (measured / predicted, the same fit `plan calibrate` runs) and applied to the held-back
family; the median |error| of the held-back rows is reported before and after. The rows and the
estimator's predictions are those of bench/validate_estimates.py (same unit conversions). Rows that
validate_estimates.py leaves out of its calibration statistics (implausible figures, the QLoRA upper
bound, the ZeRO model-state rows, the torchtune speeds from notes) are left out here too.

A second table holds back one row at a time instead (factors from every other row, its own family's
included): the everyday use, where a team's earlier runs of the same stack calibrate the next plan.
The estimator's own constants were set against these same public rows, so little systematic bias is
left for any calibration to remove; the numbers are a weak test by construction.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_estimates import DEFAULT_DIR, Row, _calibration, memory_rows, throughput_rows

from planner.calibrate import Observation, fit, lookup


def observation(row: Row) -> Observation:
    est = row.estimate
    assert est is not None and row.predicted
    return Observation(row.id, est.cluster.gpu.id, est.layout.framework, est.method, row.kind, row.published,
                       row.predicted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validation-dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    vdir: Path = args.validation_dir
    if not vdir.is_dir():
        print(f"error: --validation-dir: {vdir} is not a directory", file=sys.stderr)
        return 2
    rows = throughput_rows(vdir / "throughput_public.csv") + memory_rows(vdir / "memory_public.csv")
    usable = [r for r in _calibration(rows) if not r.bound and not r.id.startswith("ZERO")]
    obs = {r.id: observation(r) for r in usable}
    family = {r.id: r.family for r in usable}
    print(f"{'held back':14} {'metric':10} {'n':>3} {'median |err| before':>20} {'after':>8}  scopes used")
    before_all: list[float] = []
    after_all: list[float] = []
    for fam in dict.fromkeys(family.values()):
        train = [o for rid, o in obs.items() if family[rid] != fam]
        fitted = fit(train)
        for metric in ("throughput", "memory"):
            held = [o for rid, o in obs.items() if family[rid] == fam and o.metric == metric]
            if not held:
                continue
            before, after, scopes = [], [], []
            for o in held:
                factor = lookup(fitted.factors, metric, o.gpu, o.framework, o.method)
                k = factor.factor if factor else 1.0
                scopes.append("/".join(factor.scope) if factor else "none")
                before.append(abs(o.ratio - 1))
                after.append(abs(o.ratio / k - 1))
            before_all += before
            after_all += after
            used = ", ".join(sorted(set(scopes)))
            print(f"{fam:14} {metric:10} {len(held):3} {statistics.median(before):20.1%} "
                  f"{statistics.median(after):8.1%}  {used}")
    print(f"{'all held-back rows':25} {len(before_all):3} {statistics.median(before_all):20.1%} "
          f"{statistics.median(after_all):8.1%}")
    print()
    # The everyday use: your own earlier runs of the same stack calibrate the next one. Each row is held
    # back in turn and the factors are fitted from every other row (its own family's included).
    print("leave-one-run-out (each row predicted from factors fitted on all the other rows):")
    print(f"{'metric':10} {'n':>3} {'median |err| before':>20} {'after':>8}")
    for metric in ("throughput", "memory"):
        before, after = [], []
        for rid, o in obs.items():
            if o.metric != metric:
                continue
            factor = lookup(fit([x for r2, x in obs.items() if r2 != rid]).factors, metric, o.gpu, o.framework,
                            o.method)
            before.append(abs(o.ratio - 1))
            after.append(abs(o.ratio / (factor.factor if factor else 1.0) - 1))
        print(f"{metric:10} {len(before):3} {statistics.median(before):20.1%} {statistics.median(after):8.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
