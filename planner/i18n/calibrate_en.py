"""English messages of `plan calibrate` (plan.planner.cli.calibrate_cmd, plan.planner.calibrate):
its lines, its refusals of run files and calibration files, and the note a plan that used a
calibration carries. The wording these messages always had, so English output is unchanged; each
`say_as` template in those modules is the table's own (tests/planner/test_i18n_coverage.py checks
it); keys match `calibrate_zh` one for one."""

from __future__ import annotations

CALIBRATE: dict[str, str] = {
    "calib.factor_where": "{path}: calibration.factors[{i}]",
    "calib.body_where": "{path}: calibration.{name}",
    "calib.field_of": "{where}.{name}",
    "calib.at": "{where}: {problem}",
    "calib.beyond_range": "{where}: {metric}: measured {measured:.4g} is {ratio:.3g} x the "
                          "estimate {predicted:.4g}; a run within {low:g}-{high:g} x can be "
                          "fitted (is it {unit}?)",
    "calib.binary": "{path}: line {line}: binary data (a NUL byte); a {what} is UTF-8 text",
    "calib.column_twice": "{path}: line 1: column {column} appears twice (columns {first} and "
                          "{second}); give each column once",
    "calib.describe": "{metric} x{factor:.3f} on {scope} from {n} runs ({pooled}p10-p90 "
                      "x{low:.2f}-x{high:.2f}; median residual {before:.1%} before, {after:.1%} "
                      "after)",
    "calib.description_mapping": "{path}: must be a mapping of model, method, gpu, gpus, "
                                 "layout, seq_len, framework",
    "calib.description_missing": "{path}: needs the run's description beside it "
                                 "({name}.run.yaml or run.yaml: model, method, gpu, gpus, "
                                 "layout, seq_len, framework)",
    "calib.dp_mismatch": "{where}: layout: dp={dp} does not match tp x pp x cp x dp = {gpus} "
                         "GPUs (the estimator gets dp={found})",
    "calib.factor_fields": "{where}: needs gpu, framework, method, metric and a numeric factor "
                           "({why})",
    "calib.factor_metric": "{where}.metric: throughput or memory, got {metric}",
    "calib.factor_range": "{where}.factor: {factor} is outside {low:g}-{high:g} (or log_sd is "
                          "not a finite number >= 0)",
    "calib.few_lines": "{path}: {n} iteration line(s) after the first {warmup} warm-up "
                       "iterations (start-up and compilation make those slow); its figures need "
                       "at least {least}: log a longer run",
    "calib.few_steps": "{where}: {what} {steps} steady iteration(s); a run's figures need at "
                       "least {least} (one is noise or the warm-up's): measure a longer run",
    "calib.file_missing": "{where}: {path} not found (write it with `plan calibrate RUNS -o FILE`)",
    "calib.file_too_big": "{label}: the calibration would be {mb:,.1f} MB, more than the "
                          "{most:g} MB a calibration file may have; calibrate from fewer runs",
    "calib.fitted_line": "fitted: {factor}",
    "calib.framework": "{where}: framework must be megatron, deepspeed or fsdp (the execution "
                       "model the run used), got {got}",
    "calib.gpu_plural": "{gpu}s",
    "calib.in_parens": " ({text})",
    "calib.json_beyond_double": "{text} is beyond a double (about 1.8e308); not a measurement",
    "calib.json_column": "column {column}",
    "calib.json_constant": "{name} is not a measurement; write a finite number",
    "calib.json_key_twice": "key {name} appears twice in one object; keep one",
    "calib.json_line_column": "line {line}, column {column}",
    "calib.json_long_int": "an integer of {n:,} digits; at most {most} are read",
    "calib.json_too_deep": "{where}: JSON nested too deeply; a run record is a flat object",
    "calib.jsonl_object": "{where}: each line must be a JSON object",
    "calib.layout_not_pair": "{where}: layout: {word} is not key=value (e.g. tp=2 pp=1 dp=4 "
                             "zero=1 mb=1)",
    "calib.layout_refused": "{where}: the estimator cannot run this layout: {problem}",
    "calib.layout_setting": "{where}: layout: {name} must be one of {allowed}, got {value}",
    "calib.layout_unknown_key": "{where}: layout: unknown key {name}; allowed: {allowed}, "
                                "framework (mb, gb, vpp as short forms)",
    "calib.layout_whole": "{where}: layout: {name} must be a whole number, got {value}",
    "calib.level_framework": "framework",
    "calib.level_gpu": "gpu",
    "calib.level_method": "method",
    "calib.level_sd": "{level} {sd}",
    "calib.lines_skipped": " ({n:,} lines longer than {most:,} characters were skipped)",
    "calib.log_elapsed": "elapsed time (ms)",
    "calib.log_memory": "memory (GiB)",
    "calib.log_not_number": "{where}: {what} {text} is not a number",
    "calib.log_not_positive": "{where}: {what} {text} must be a finite number above 0",
    "calib.log_reserved": "max reserved (MB)",
    "calib.long_field": "a field of {n:,} characters (at most {most:,})",
    "calib.long_line": "{path}: line {line}: {n:,} characters, more than the {most:,} a row of "
                       "runs may have",
    "calib.loss": "{where}: loss {reason}",
    "calib.method": "{where}: method must be one of {methods}, got {method}",
    "calib.metric_memory": "memory",
    "calib.metric_throughput": "throughput",
    "calib.missing": "{where}: missing {missing} (a run needs {needed})",
    "calib.model_problem": "{where}: model: {problem}",
    "calib.no_card_file": "{where}: model: no such model-card file: {path}",
    "calib.no_correction": "no correction",
    "calib.no_factors": "{path}: calibration.factors: missing; write the file with `plan "
                        "calibrate`",
    "calib.no_global_batch": "{path}: Megatron log without {marker} on its iteration lines",
    "calib.no_iterations": "{path}: no Megatron-LM iteration lines ({megatron}) or torchtitan "
                           "step lines ({titan}) found{skipped}",
    "calib.no_layout": "{where}: the estimator finds no layout for this run",
    "calib.no_measurement": "{where}: no measurement: give tokens_per_s, step_time_s or "
                            "peak_memory_gib",
    "calib.no_rows": "{path}: no rows (a header line and one row per run)",
    "calib.no_samples_per_second": "{path}: log_history has no train_samples_per_second (the "
                                   "Trainer writes it at the end of training)",
    "calib.not_a_list": "{where}: must be a list",
    "calib.not_a_mapping": "{where}: must be a mapping",
    "calib.not_csv": "{path}: line {line}: not CSV: {problem}",
    "calib.not_json": "{where}: not JSON: {problem} ({at})",
    "calib.not_number": "{where}: {field} must be a number, got {text}",
    "calib.not_trainer_state": "{path}: not a Hugging Face trainer_state.json (no log_history "
                               "list)",
    "calib.not_utf8": "{path}: line {line}: byte 0x{byte:02x} is not UTF-8 (Latin-1, or "
                      "binary?); save the {what} as UTF-8",
    "calib.not_utf8_text": "text that is not UTF-8",
    "calib.not_whole": "{where}: {field} must be a whole number, got {shown}",
    "calib.note": "calibrated from {n} runs on {on}{scope} (median residual {residual:.0%}): "
                  "throughput x{factor:.2f}{pooled} applied to {gpu}",
    "calib.nothing": "'nothing'",
    "calib.on_your": "your {gpus}",
    "calib.on_your_gpus": "your GPUs",
    "calib.out_of_range": "{where}: {field} must be a finite number above 0 and at most "
                          "{limit:g}, got {shown}",
    "calib.pooled_first": "{pooling}; ",
    "calib.pooling": "fitted x{fitted:.3f}, weight {weight:.2f} toward {toward}",
    "calib.pooling_finite": "{where}: fitted, weight, toward_factor, log_se, level_sd and the "
                            "median residuals must be finite numbers (not .nan or .inf)",
    "calib.pooling_line": "pooling ({metric}): sd of true log factors about the broader scope, "
                          "by level: {levels} (- where no scope has runs of its own)",
    "calib.pooling_numbers": "{where}: fitted, weight, toward_factor, log_se, level_sd and the "
                             "median residuals must be numbers ({why})",
    "calib.py_float_type": "float() argument must be a string or a real number, not {kind}",
    "calib.py_missing_key": "{name}",
    "calib.py_not_float": "could not convert string to float: {value}",
    "calib.refused_line": "refused: {line}",
    "calib.refused_scope": "{metric} on {scope}: {n} run(s) for {least} parameters (factor and "
                           "spread); not fitted",
    "calib.scenario_field": "{path}: calibration",
    "calib.same_factor": "  the same {metric} factor covers the broader scopes {scopes}",
    "calib.step_needs_batch": "{where}: step_time_s needs global_batch (sequences per step) to "
                              "give tokens/s",
    "calib.steps_left": "global_step {total} leaves, after {warmup} warm-up iterations,",
    "calib.steps_measured": "steps: the figures are measured over",
    "calib.too_many_rows": "{path}: more than {most:,} rows; calibrate from at most {most:,} runs",
    "calib.too_many_runs": "{path}: more than {most:,} runs; calibrate from at most {most:,} (a "
                           "factor needs tens)",
    "calib.toward_scope": "{scope} x{factor:.3f}",
    "calib.tps_from_step": "tokens/s (global_batch x seq_len / step_time_s)",
    "calib.unit_memory": "GiB per GPU",
    "calib.unit_throughput": "tokens/s of the whole job",
    "calib.unsupported": "{path}: unsupported run file; use .csv, .jsonl, trainer_state.json, "
                         "or a Megatron-LM or torchtitan log (.log, .txt, .out)",
    "calib.weight_range": "{where}.weight: {weight} must be within 0-1 (and fitted, "
                          "toward_factor > 0)",
    "calib.would_be_refused": "{label}: not written: read back, the calibration would be "
                              "refused ({why})",
    "calib.would_not_read_back": "{label}: not written: the calibration would not read back as "
                                 "written (a run name YAML cannot hold?)",
    "calib.wrote": "wrote {path} ({n} runs)",
}
