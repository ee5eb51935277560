"""The last English-only messages said in Chinese too (issue 51 item 6, "every message exists in
both languages"): `plan calibrate` (its lines, its refusals of run files and calibration files, the
note a calibrated plan carries), the calendar and timeline's problems, a YAML error with no line and
the Ray backend's start lines. English stays as it was: each English line below is the one printed
before these messages were keyed (the same cases run on the commit before them)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.planner import i18n
from plan.planner.batch import ray_backend
from plan.planner.calibrate.parsers import run_from_fields
from plan.planner.calibrate.predict import predict
from plan.planner.cli.app import app
from plan.planner.i18n.said import local
from tests.planner.test_i18n_coverage import ENGLISH_LOCALE, REPO, english_runs

DESCRIPTION = {"model": "qwen2.5-72b", "method": "lora", "gpu": "a800-80gb", "gpus": 4,
               "layout": "tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", "seq_len": 4096,
               "framework": "megatron"}
LAYOUTS = (("tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", 4),
           ("tp=4 pp=1 dp=2 zero=0 mb=1 gb=128 recompute=none", 8),
           ("tp=8 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", 8))
# the words a log prints, quoted on purpose (what a reader looks for in the log)
LOG_MARKERS = ["'elapsed time per iteration (ms)'", "'step: ... memory: ...GiB ... tps: ...'"]


@pytest.fixture(scope="module")
def good_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three a800 LoRA runs at 0.8 x the estimate, +-3%: a factor fits."""
    path = tmp_path_factory.mktemp("runs") / "good.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*DESCRIPTION, "tokens_per_s", "peak_memory_gib"])
        writer.writeheader()
        for (layout, gpus), scatter in zip(LAYOUTS, (0.97, 1.0, 1.03), strict=True):
            run = run_from_fields({**DESCRIPTION, "layout": layout, "gpus": gpus,
                                   "tokens_per_s": 1.0}, "t")
            speed = predict(run, builtin_catalog()).tokens_per_s * 0.8 * scatter
            writer.writerow({**DESCRIPTION, "layout": layout, "gpus": gpus,
                             "tokens_per_s": f"{speed:.1f}", "peak_memory_gib": 60})
    return path


def _flat(text: str) -> str:
    """The output with the console's line wrapping (and any run of spaces) as one space."""
    return " ".join(text.split())


def _run(args: list[str], lang: str) -> tuple[int, str]:
    more = ["--lang", "zh"] if lang == "zh" else []
    result = CliRunner().invoke(app, [*args, *more], env={**ENGLISH_LOCALE, "COLUMNS": "140"})
    return result.exit_code, result.output


def test_a_calibration_is_said_in_chinese_and_writes_the_same_file(good_runs: Path,
                                                                   tmp_path: Path) -> None:
    english_file, chinese_file = tmp_path / "en.yaml", tmp_path / "zh.yaml"
    code, english = _run(["calibrate", str(good_runs), "-o", str(english_file)], "en")
    assert code == 0, english
    assert _flat(english).startswith(
        "fitted: throughput x0.801 on a800-80gb/megatron/lora from 3 runs (fitted x0.800, weight "
        "0.99 toward no correction; p10-p90 x0.77-x0.83; median residual 20.0% before, 2.9% after)")
    assert ("pooling (throughput): sd of true log factors about the broader scope, by level: "
            "*/*/* 0.223, framework -, gpu -, method - (- where no scope has runs of its own)"
            in _flat(english))
    assert "\n  the same throughput factor covers the broader scopes a800-80gb/megatron/*, " in (
        english)
    assert english.endswith(f"wrote {english_file} (3 runs)\n")
    code, chinese = _run(["calibrate", str(good_runs), "-o", str(chinese_file)], "zh")
    assert code == 0, chinese
    assert chinese.startswith("已拟合：吞吐 x0.801，范围 a800-80gb/megatron/lora，依据 3 次运行")
    assert "部分汇聚（吞吐）" in chinese
    assert chinese.endswith(f"已写入 {chinese_file}（3 次运行）\n")
    assert english_runs(chinese, []) == []
    # the file is data: the same whatever the language the lines were said in
    assert english_file.read_text(encoding="utf-8") == chinese_file.read_text(encoding="utf-8")


def test_too_few_runs_are_refused_in_chinese(tmp_path: Path) -> None:
    one = tmp_path / "one.csv"
    one.write_text("model,method,gpu,gpus,layout,seq_len,framework,tokens_per_s\nqwen2.5-72b,lora,"
                   "a800-80gb,4,tp=4 pp=1 dp=1 zero=0 mb=1 gb=128,4096,megatron,1800\n")
    args = ["calibrate", str(one), "-o", str(tmp_path / "c.yaml")]
    code, english = _run(args, "en")
    assert code == 2
    assert english.splitlines() == [
        "refused: throughput on a800-80gb/megatron/lora: 1 run(s) for 2 parameters (factor and "
        "spread); not fitted",
        f"error: {one}: 1 run(s): too few to fit any factor (each needs at least 2 runs: a factor "
        "and its spread)"]
    code, chinese = _run(args, "zh")
    assert code == 2
    assert chinese.startswith("未拟合：a800-80gb/megatron/lora 上的吞吐：只有 1 次运行")
    assert "错误：" in chinese and english_runs(chinese, []) == []


HEAD = "model,method,gpu,gpus,layout,seq_len,framework,tokens_per_s\n"
ROW = "qwen2.5-72b,lora,a800-80gb,4,tp=4 pp=1 dp=1 zero=0 mb=1 gb=128,4096,megatron,1800\n"
DESCRIBED = ("model: qwen2.5-7b\nmethod: sft\ngpu: h800\ngpus: 8\nseq_len: 4096\n"
             "framework: megatron\n")
# (files written, the run file given, the English line printed before these messages were keyed)
REFUSED_RUNS: dict[str, tuple[dict[str, str], str, str]] = {
    "unknown model": ({"r.csv": HEAD + ROW.replace("qwen2.5-72b", "qwen9-999b")}, "r.csv",
                      "r.csv:2: unknown model 'qwen9-999b'; did you mean 'Qwen3 8B' (qwen3-8b)"),
    "layout word": ({"r.csv": HEAD + ROW.replace("tp=4 pp=1", "tp=4 pp")}, "r.csv",
                    "r.csv:2: layout: 'pp' is not key=value (e.g. tp=2 pp=1 dp=4 zero=1 mb=1)"),
    "layout key": ({"r.csv": HEAD + ROW.replace("tp=4 pp=1", "tp=4 xx=1")}, "r.csv",
                   "r.csv:2: layout: unknown key 'xx'; allowed: tp, pp, dp, cp, zero, micro_batch, "
                   "global_batch, virtual_pipeline, recompute, kernels, loss, optimizer, "
                   "lora_targets, framework (mb, gb, vpp as short forms)"),
    "layout setting": ({"r.csv": HEAD + ROW.replace("gb=128", "gb=128 recompute=sometimes")},
                       "r.csv", "r.csv:2: layout: recompute must be one of none, selective, full, "
                       "full_offload, offload, got 'sometimes'"),
    "missing": ({"r.csv": "model,method,gpu\nqwen2.5-72b,lora,a800-80gb\n"}, "r.csv",
                "r.csv:2: missing gpus, seq_len (a run needs model, method, gpu, gpus, seq_len)"),
    "no framework": ({"r.csv": HEAD + ROW.replace(",megatron,", ",,")}, "r.csv",
                     "r.csv:2: framework must be megatron, deepspeed or fsdp (the execution model "
                     "the run used), got 'nothing'"),
    "not a number": ({"r.csv": HEAD + ROW.replace(",1800", ",abc")}, "r.csv",
                     "r.csv:2: tokens_per_s must be a number, got 'abc'"),
    "negative": ({"r.csv": HEAD + ROW.replace(",1800", ",-5")}, "r.csv",
                 "r.csv:2: tokens_per_s must be a finite number above 0 and at most 1e+12, got -5"),
    "not whole": ({"r.csv": HEAD + ROW.replace(",4,tp", ",4.5,tp")}, "r.csv",
                  "r.csv:2: gpus must be a whole number, got 4.5"),
    "method": ({"r.csv": HEAD + ROW.replace(",lora,", ",lorra,")}, "r.csv",
               "r.csv:2: method must be one of pretrain, continued_pretrain, full_finetune, sft, "
               "lora, qlora, dpo, lora_dpo, qlora_dpo, got 'lorra'"),
    "dp": ({"r.csv": HEAD + ROW.replace("dp=1", "dp=3")}, "r.csv",
           "r.csv:2: layout: dp=3 does not match tp x pp x cp x dp = 4 GPUs (the estimator gets "
           "dp=1)"),
    "far off": ({"r.csv": HEAD + ROW.replace(",1800", ",1e9")}, "r.csv",
                "r.csv:2: throughput: measured 1e+09 is 4.37e+05 x the estimate 2290; a run within "
                "0.05-20 x can be fitted (is it tokens/s of the whole job?)"),
    "column twice": ({"r.csv": "model,model\nx,y\n"}, "r.csv",
                     "r.csv: line 1: column 'model' appears twice (columns 1 and 2); give each "
                     "column once"),
    "step needs batch": ({"r.csv": HEAD.replace("tokens_per_s", "step_time_s")
                          + ROW.replace("gb=128", "")}, "r.csv",
                         "r.csv:2: step_time_s needs global_batch (sequences per step) to give "
                         "tokens/s"),
    "not json": ({"r.jsonl": '{"model": 1,}\n'}, "r.jsonl",
                 "r.jsonl:1: not JSON: Expecting property name enclosed in double quotes (column "
                 "13)"),
    "json key twice": ({"r.jsonl": '{"model": "a", "model": "b"}\n'}, "r.jsonl",
                       "r.jsonl:1: key 'model' appears twice in one object; keep one"),
    "json NaN": ({"r.jsonl": '{"tokens_per_s": NaN}\n'}, "r.jsonl",
                 "r.jsonl:1: NaN is not a measurement; write a finite number"),
    "unsupported": ({"r.parquet": "x"}, "r.parquet",
                    "r.parquet: unsupported run file; use .csv, .jsonl, trainer_state.json, or a "
                    "Megatron-LM or torchtitan log (.log, .txt, .out)"),
    "binary": ({"r.csv": "model\x00\n"}, "r.csv",
               "r.csv: line 1: binary data (a NUL byte); a run file is UTF-8 text"),
    "log without iterations": ({"t.log": "hello\n", "t.log.run.yaml": DESCRIBED}, "t.log",
                               "t.log: no Megatron-LM iteration lines ('elapsed time per iteration "
                               "(ms)') or torchtitan step lines ('step: ... memory: ...GiB ... "
                               "tps: ...') found"),
    "short log": ({"t.log": "iteration 1/ 10 | elapsed time per iteration (ms): 100 | global "
                            "batch size: 8\niteration 3/ 10 | elapsed time per iteration (ms): "
                            "100 | global batch size: 8\n", "t.log.run.yaml": DESCRIBED}, "t.log",
                  "t.log: 1 iteration line(s) after the first 2 warm-up iterations (start-up and "
                  "compilation make those slow); its figures need at least 2: log a longer run"),
    "log figure": ({"t.log": "iteration 3/ 10 | elapsed time per iteration (ms): 0 | global "
                             "batch size: 8\n", "t.log.run.yaml": DESCRIBED}, "t.log",
                   "t.log:1: elapsed time (ms) '0' must be a finite number above 0"),
    "trainer state": ({"s/trainer_state.json": '{"log_history": [{"loss": 1}]}',
                       "s/run.yaml": DESCRIBED}, "s/trainer_state.json",
                      "s/trainer_state.json: log_history has no train_samples_per_second (the "
                      "Trainer writes it at the end of training)"),
}


@pytest.mark.parametrize("case", REFUSED_RUNS)
def test_refused_runs_are_said_in_chinese_and_unchanged_in_english(case: str,
                                                                   tmp_path: Path) -> None:
    files, given, line = REFUSED_RUNS[case]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    args = ["calibrate", str(tmp_path / given), "-o", str(tmp_path / "c.yaml")]
    code, english = _run(args, "en")
    assert code == 2 and english.startswith(f"error: {tmp_path}/{line}"), english
    code, chinese = _run(args, "zh")
    assert code == 2 and chinese.startswith(f"错误：{tmp_path}/"), chinese
    assert english_runs(chinese, LOG_MARKERS) == [], chinese
    assert not (tmp_path / "c.yaml").exists()


FACTOR = "calibration:\n  factors:\n  - {gpu: h800, framework: megatron, method: sft, "
# (the calibration file, the English line after its path)
BAD_CALIBRATIONS: dict[str, tuple[str, str]] = {
    "no factors": ("calibration: {}\n", ": calibration.factors: missing; write the file with "
                   "`plan calibrate`"),
    "factor range": (FACTOR + "metric: throughput, factor: 99}\n",
                     ": calibration.factors[0].factor: 99.0 is outside 0.05-20 (or log_sd is not a "
                     "finite number >= 0)"),
    "metric": (FACTOR + "metric: speed, factor: 1}\n",
               ": calibration.factors[0].metric: throughput or memory, got 'speed'"),
    "no factor": (FACTOR + "metric: throughput}\n", ": calibration.factors[0]: needs gpu, "
                  "framework, method, metric and a numeric factor ('factor')"),
    "not a number": (FACTOR + "metric: throughput, factor: abc}\n",
                     ": calibration.factors[0]: needs gpu, framework, method, metric and a numeric "
                     "factor (could not convert string to float: 'abc')"),
    "weight": (FACTOR + "metric: throughput, factor: 1, fitted: 1, weight: 5}\n",
               ": calibration.factors[0].weight: 5.0 must be within 0-1 (and fitted, "
               "toward_factor > 0)"),
    "runs not a list": ("calibration:\n  factors: []\n  runs: 5\n",
                        ": calibration.runs: must be a list"),
}


@pytest.mark.parametrize("case", BAD_CALIBRATIONS)
def test_bad_calibration_files_are_said_in_chinese_and_unchanged_in_english(
        case: str, tmp_path: Path) -> None:
    text, line = BAD_CALIBRATIONS[case]
    path = tmp_path / "cal.yaml"
    path.write_text(text, encoding="utf-8")
    args = ["solve", str(REPO / "scenarios" / "student_no_ops.yaml"), "--calibration", str(path)]
    code, english = _run(args, "en")
    assert code == 2 and english == f"error: {path}{line}\n"
    code, chinese = _run(args, "zh")
    assert code == 2 and chinese.startswith(f"错误：{path}：calibration")
    assert english_runs(chinese, []) == [], chinese


def test_a_missing_calibration_file_is_said_in_chinese(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text((REPO / "scenarios" / "student_no_ops.yaml").read_text(encoding="utf-8")
                        + "calibration: nope.yaml\n", encoding="utf-8")
    code, english = _run(["solve", str(scenario)], "en")
    assert code == 2 and english == (f"error: {scenario}: calibration: {tmp_path}/nope.yaml not "
                                     "found (write it with `plan calibrate RUNS -o FILE`)\n")
    code, chinese = _run(["solve", str(scenario)], "zh")
    assert code == 2 and chinese == (f"错误：{scenario}：calibration：找不到 {tmp_path}/nope.yaml"
                                     "（请用 `plan calibrate 运行记录 -o 文件` 生成）\n")


def test_a_calibrated_estimate_says_so_in_chinese_and_its_json_does_not_change(
        good_runs: Path, tmp_path: Path) -> None:
    calibration = tmp_path / "c.yaml"
    assert _run(["calibrate", str(good_runs), "-o", str(calibration)], "en")[0] == 0
    args = ["estimate", "--model", "qwen2.5-72b", "--method", "lora", "--gpu", "a800-80gb",
            "--gpus", "8", "--calibration", str(calibration)]
    code, english = _run(args, "en")
    assert code == 0 and ("- calibrated from 3 runs on your a800-80gbs (megatron/lora) (median "
                          "residual 3%): throughput x0.80 (fitted x0.800, weight 0.99 toward no "
                          "correction) applied to a800-80gb") in _flat(english)
    code, chinese = _run(args, "zh")
    note = next(line for line in chinese.splitlines() if "校准" in line)
    assert code == 0 and note.startswith("- 已按您在 a800-80gb 上的 3 次运行校准（megatron/lora）")
    assert english_runs(note, []) == []
    json_args = [*args, "--format", "json"]
    assert _run(json_args, "en") == _run(json_args, "zh")


BASE = (REPO / "scenarios" / "student_no_ops.yaml").read_text(encoding="utf-8")
# (the scenario's change, the English lines after the file's name)
BAD_DATES: dict[str, tuple[tuple[str, str], list[str]]] = {
    "no such day": (("objective: cost", "objective: cost\nstart: '2027-02-30'"),
                    ["start: '2027-02-30' is not a date of the calendar (day is out of range for "
                     "month)"]),
    "period form": (("budget: 5k", "budget:\n  - {period: 2027-13, amount: 5k}"),
                    ["budget[0].period: expected a period as 2027 (a fiscal year), 2027-Q1 or "
                     "2027-03, got '2027-13'",
                     "budget: a budget per period needs the scenario's start date (start: "
                     "2027-01-01)"]),
    "before the start": (("deadline: 7d", "start: 2027-03-01\ndeadline: '2027-02-01'"),
                         ["deadline: 2027-02-01 is before the plan's start (2027-03-01)"]),
    "no start": (("deadline: 7d", "deadline: '2027-02-01'"),
                 ["deadline: a date needs the scenario's start date (start: 2027-01-01)"]),
    "fiscal year": (("objective: cost", "objective: cost\nfiscal_year_start: '13-01'"),
                    ["fiscal_year_start: expected MM-DD (e.g. 04-01 for a year from April), got "
                     "'13-01'"]),
    "step": (("    lora_rank: 16", "    lora_rank: 16\n    repeat: {every: fortnight, count: 3}"),
             ["jobs[0].repeat.every: expected a calendar unit (1 month, quarter, year) or a "
              "duration (30d, 2w), got 'fortnight'"]),
    "periods twice": (("budget: 5k", "start: 2027-01-01\nbudget:\n  - {period: 2027-01, amount: "
                       "5k}\n  - {period: 2027-01, amount: 5k}\n  - {period: 2027-Q2, amount: "
                       "5k}"), ["budget: period 2027-01 is listed twice",
                                "budget: list periods of one kind (all years, all quarters or all "
                                "months)"]),
}


@pytest.mark.parametrize("case", BAD_DATES)
def test_calendar_timeline_and_yaml_problems_are_said_in_chinese(case: str,
                                                                 tmp_path: Path) -> None:
    (old, new), lines = BAD_DATES[case]
    path = tmp_path / "s.yaml"
    assert old in BASE
    path.write_text(BASE.replace(old, new, 1), encoding="utf-8")
    code, english = _run(["solve", str(path)], "en")
    assert code == 2 and english == "".join(f"error: {path}: {line}\n" for line in lines)
    code, chinese = _run(["solve", str(path)], "zh")
    assert code == 2 and chinese.count("错误：") == len(lines)
    assert english_runs(chinese, []) == [], chinese


def test_a_yaml_error_with_no_line_is_said_in_chinese(tmp_path: Path) -> None:
    """The YAML reader refuses a control character naming a position in the text, not a line."""
    path = tmp_path / "s.yaml"
    path.write_text("name: a\x07b\n", encoding="utf-8")
    code, english = _run(["solve", str(path)], "en")
    assert code == 2 and english == (f"error: {path}:: malformed YAML: unacceptable character "
                                     "#x0007: control characters are not allowed\\n  in "
                                     "\"<unicode string>\", position 7\n")
    code, chinese = _run(["solve", str(path)], "zh")
    assert code == 2 and chinese == (f"错误：{path}：YAML 格式有误（不可接受的字符 #x0007："
                                     "不允许控制字符（位于 \"<unicode string>\"，位置 7））\n")


def test_the_ray_backends_lines_are_said_in_chinese() -> None:
    with pytest.raises(ray_backend.RayStartError) as refused:
        ray_backend._check_reachable("127.0.0.1:1")
    line = refused.value.args[0]
    assert line.startswith("--backend ray: nothing answers at '127.0.0.1:1' (")
    assert line.endswith("); is the Ray head running (ray start --head)?")
    assert ray_backend.INSTALL_HINT == (
        "--backend ray needs Ray, which is not installed; install it with: pip install "
        "'plan[ray]' (in a checkout: pip install -e '.[ray]')")
    with i18n.kept_language():
        i18n.choose("zh")
        unreachable, missing = local(line), local(ray_backend.INSTALL_HINT)
    assert "无应答" in unreachable and "ray start --head" in unreachable
    assert missing.startswith("--backend ray 需要 Ray") and "pip install 'plan[ray]'" in missing
    # (the commands to type stay as typed; the sentence around them is Chinese)
    assert english_runs(unreachable, ["ray start --head"]) == []
    assert english_runs(missing, ["pip install 'plan[ray]'", "pip install -e '.[ray]'"]) == []


def test_the_calibration_tables_have_no_key_left_unsaid() -> None:
    """Every `calib.` key of the English table is said somewhere in the code (a template or a key
    given to `say`), so no message is kept for nothing."""
    from plan.planner.i18n import calibrate_en

    sources = "".join(path.read_text(encoding="utf-8") for path in
                      (*(REPO / "planner" / "calibrate").glob("*.py"),
                       REPO / "planner" / "cli" / "calibrate_cmd.py"))
    assert [key for key in calibrate_en.CALIBRATE if f'"{key}"' not in sources] == []


def test_compares_unknown_job_and_the_plot_hint_are_said_in_chinese() -> None:
    args = ["compare", str(REPO / "scenarios" / "student_no_ops.yaml"), "--job", "nope"]
    code, english = _run(args, "en")
    assert code == 2 and english == "error: --job: unknown job 'nope'; jobs: qwen14b-lora\n"
    code, chinese = _run(args, "zh")
    assert code == 2 and chinese == "错误：--job：未知的作业 'nope'；现有作业：qwen14b-lora\n"
    from plan.planner.pareto.plot import INSTALL_HINT

    assert INSTALL_HINT == ("plotting PNG/SVG needs matplotlib: pip install 'plan[plot]' (or use "
                            "a .html plot, which needs nothing)")
    with i18n.kept_language():
        i18n.choose("zh")
        hint = local(INSTALL_HINT)
    assert english_runs(hint, ["pip install 'plan[plot]'"]) == [] and "matplotlib" in hint


def test_validate_says_ok_in_chinese() -> None:
    args = ["validate", str(REPO / "scenarios" / "medical_hybrid.yaml")]
    code, english = _run(args, "en")
    assert code == 0 and _flat(english) == (f"ok: {REPO}/scenarios/medical_hybrid.yaml: scenario "
                                            "'medical-hybrid', 2 job(s), 1 owned pool(s)")
    code, chinese = _run(args, "zh")
    assert code == 0 and _flat(chinese) == (f"通过：{REPO}/scenarios/medical_hybrid.yaml：场景 "
                                            "'medical-hybrid'，2 个作业，1 个自有算力池")


def test_the_report_page_says_its_calibration_in_the_readers_language(
        good_runs: Path, tmp_path: Path) -> None:
    """The page's line under the headline (the plan used the team's own runs) comes from the
    plan's assumptions: English as before, Chinese said again from its key."""
    calibration = tmp_path / "c.yaml"
    assert _run(["calibrate", str(good_runs), "-o", str(calibration)], "en")[0] == 0
    pages = {}
    for lang in ("en", "zh"):
        page = tmp_path / f"{lang}.html"
        code, output = _run(["report", str(REPO / "scenarios" / "medical_hybrid.yaml"),
                             "--calibration", str(calibration), "-o", str(page)], lang)
        assert code == 0, output
        pages[lang] = page.read_text(encoding="utf-8")
    assert ('<p class="muted">calibrated from 3 runs on your a800-80gbs (megatron/lora) (median '
            'residual 3%): throughput x0.80 (fitted x0.800, weight 0.99 toward no correction) '
            'applied to a800-80gb</p>') in pages["en"]
    assert ('<p class="muted">已按您在 a800-80gb 上的 3 次运行校准（megatron/lora）（残差中位数 '
            '3%）：对 a800-80gb 的吞吐乘以 x0.80') in pages["zh"]
