"""`plan calibrate` 的中文消息（运行记录与校准文件的拒绝理由、拟合结果、使用校准的方案所附说明）；
键与 `calibrate_en` 一一对应（tests/planner/test_i18n.py 检查）。

Log markers ('elapsed time per iteration (ms)', 'global batch size') and field names (seq_len,
tokens_per_s) stay as the logs and files write them: they are what a reader looks for there."""

from __future__ import annotations

CALIBRATE: dict[str, str] = {
    "calib.factor_where": "{path}：calibration.factors[{i}]",
    "calib.body_where": "{path}：calibration.{name}",
    "calib.field_of": "{where}.{name}",
    "calib.at": "{where}：{problem}",
    "calib.beyond_range": "{where}：{metric}：实测 {measured:.4g} 是估算值 {predicted:.4g} 的 "
                          "{ratio:.3g} 倍；只有在 {low:g}-{high:g} 倍之内的运行才能参与拟合"
                          "（单位是否为{unit}？）",
    "calib.binary": "{path}：第 {line} 行：二进制数据（含 NUL 字节）；{what}应为 UTF-8 文本",
    "calib.column_twice": "{path}：第 1 行：列 {column} 出现了两次（第 {first} 列和第 {second} "
                          "列）；每列只能给一次",
    "calib.describe": "{metric} x{factor:.3f}，范围 {scope}，依据 {n} 次运行（{pooled}p10-p90 "
                      "x{low:.2f}-x{high:.2f}；残差中位数校准前 {before:.1%}，校准后 {after:.1%}）",
    "calib.description_mapping": "{path}：应为包含 model、method、gpu、gpus、layout、seq_len、"
                                 "framework 的映射",
    "calib.description_missing": "{path}：旁边需要有该运行的说明文件（{name}.run.yaml 或 "
                                 "run.yaml，写明 model、method、gpu、gpus、layout、seq_len、"
                                 "framework）",
    "calib.dp_mismatch": "{where}：layout：dp={dp} 与卡数不符（tp×pp×cp×dp 应等于 {gpus} 张卡；"
                         "估算器得到 dp={found}）",
    "calib.factor_fields": "{where}：需要 gpu、framework、method、metric 和一个数值型的 factor"
                           "（{why}）",
    "calib.factor_metric": "{where}.metric：应为 throughput 或 memory，收到 {metric}",
    "calib.factor_range": "{where}.factor：{factor} 超出 {low:g}-{high:g} 的范围（或 log_sd "
                          "不是大于等于 0 的有限数）",
    "calib.few_lines": "{path}：前 {warmup} 个预热迭代（启动和编译使其偏慢）之后只有 {n} 行迭代"
                       "记录；其数据至少需要 {least} 行：请记录更长的运行",
    "calib.few_steps": "{where}：{what} {steps}；一次运行的数据至少需要 {least} 个稳定迭代"
                       "（一个迭代只是噪声或预热期的数据）：请测量更长的运行",
    "calib.file_missing": "{where}：找不到 {path}（请用 `plan calibrate 运行记录 -o 文件` 生成）",
    "calib.file_too_big": "{label}：校准文件将有 {mb:,.1f} MB，超过校准文件允许的 {most:g} MB；"
                          "请用较少的运行来校准",
    "calib.fitted_line": "已拟合：{factor}",
    "calib.framework": "{where}：framework 必须是 megatron、deepspeed 或 fsdp（该运行所用的执行"
                       "模型），收到 {got}",
    "calib.gpu_plural": "{gpu}",
    "calib.in_parens": "（{text}）",
    "calib.json_beyond_double": "{text} 超出双精度浮点数的范围（约 1.8e308）；不是测量值",
    "calib.json_column": "第 {column} 列",
    "calib.json_constant": "{name} 不是测量值；请写一个有限的数",
    "calib.json_key_twice": "键 {name} 在同一个对象中出现了两次；只保留一个",
    "calib.json_line_column": "第 {line} 行第 {column} 列",
    "calib.json_long_int": "整数长达 {n:,} 位；最多读取 {most} 位",
    "calib.json_too_deep": "{where}：JSON 嵌套过深；一条运行记录应是扁平的对象",
    "calib.jsonl_object": "{where}：每一行都必须是一个 JSON 对象",
    "calib.layout_not_pair": "{where}：layout：{word} 不是 key=value 形式（例如 tp=2 pp=1 dp=4 "
                             "zero=1 mb=1）",
    "calib.layout_refused": "{where}：估算器无法运行此布局：{problem}",
    "calib.layout_setting": "{where}：layout：{name} 必须是 {allowed} 之一，收到 {value}",
    "calib.layout_unknown_key": "{where}：layout：未知的键 {name}；允许：{allowed}、framework"
                                "（mb、gb、vpp 为简写）",
    "calib.layout_whole": "{where}：layout：{name} 必须是整数，收到 {value}",
    "calib.level_framework": "框架",
    "calib.level_gpu": "显卡",
    "calib.level_method": "方法",
    "calib.level_sd": "{level} {sd}",
    "calib.lines_skipped": "（跳过了 {n:,} 行超过 {most:,} 个字符的长行）",
    "calib.log_elapsed": "迭代耗时（ms）",
    "calib.log_memory": "显存（GiB）",
    "calib.log_not_number": "{where}：{what} {text} 不是数字",
    "calib.log_not_positive": "{where}：{what} {text} 必须是大于 0 的有限数",
    "calib.log_reserved": "最大预留显存（MB）",
    "calib.long_field": "某个字段长 {n:,} 个字符（最多 {most:,} 个）",
    "calib.long_line": "{path}：第 {line} 行：{n:,} 个字符，超过运行记录每行允许的 {most:,} 个",
    "calib.loss": "{where}：loss {reason}",
    "calib.method": "{where}：method 必须是 {methods} 之一，收到 {method}",
    "calib.metric_memory": "显存",
    "calib.metric_throughput": "吞吐",
    "calib.missing": "{where}：缺少 {missing}（一次运行需要 {needed}）",
    "calib.model_problem": "{where}：model：{problem}",
    "calib.no_card_file": "{where}：model：找不到模型卡文件 {path}",
    "calib.no_correction": "无校正（x1）",
    "calib.no_factors": "{path}：calibration.factors：缺失；请用 `plan calibrate` 生成该文件",
    "calib.no_global_batch": "{path}：Megatron 日志的迭代行中没有 {marker}",
    "calib.no_iterations": "{path}：未找到 Megatron-LM 的迭代行（{megatron}）或 torchtitan 的"
                           "步骤行（{titan}）{skipped}",
    "calib.no_layout": "{where}：估算器找不到适合此运行的布局",
    "calib.no_measurement": "{where}：没有测量值：请给出 tokens_per_s、step_time_s 或 "
                            "peak_memory_gib",
    "calib.no_rows": "{path}：没有数据行（应有一行表头，每次运行一行）",
    "calib.no_samples_per_second": "{path}：log_history 中没有 train_samples_per_second"
                                   "（Trainer 在训练结束时写入）",
    "calib.not_a_list": "{where}：必须是列表",
    "calib.not_a_mapping": "{where}：必须是映射",
    "calib.not_csv": "{path}：第 {line} 行：不是 CSV：{problem}",
    "calib.not_json": "{where}：不是 JSON：{problem}（{at}）",
    "calib.not_number": "{where}：{field} 必须是数字，收到 {text}",
    "calib.not_trainer_state": "{path}：不是 Hugging Face 的 trainer_state.json（没有 "
                               "log_history 列表）",
    "calib.not_utf8": "{path}：第 {line} 行：字节 0x{byte:02x} 不是 UTF-8"
                      "（是 Latin-1 还是二进制？）；请把{what}存为 UTF-8",
    "calib.not_utf8_text": "非 UTF-8 的文本",
    "calib.not_whole": "{where}：{field} 必须是整数，收到 {shown}",
    "calib.note": "已按您在{on}上的 {n} 次运行校准{scope}（残差中位数 {residual:.0%}）：对 {gpu} "
                  "的吞吐乘以 x{factor:.2f}{pooled}",
    "calib.nothing": "（空）",
    "calib.on_your": " {gpus} ",
    "calib.on_your_gpus": "显卡",
    "calib.out_of_range": "{where}：{field} 必须是大于 0 且不超过 {limit:g} 的有限数，收到 {shown}",
    "calib.pooled_first": "{pooling}；",
    "calib.pooling": "自身拟合 x{fitted:.3f}，以权重 {weight:.2f} 向 {toward} 收缩",
    "calib.pooling_finite": "{where}：fitted、weight、toward_factor、log_se、level_sd 和残差"
                            "中位数必须是有限数（不能是 .nan 或 .inf）",
    "calib.pooling_line": "部分汇聚（{metric}）：各层级真实对数因子相对上一层范围的标准差："
                          "{levels}（- 表示该层没有自己独有运行的范围）",
    "calib.pooling_numbers": "{where}：fitted、weight、toward_factor、log_se、level_sd 和残差"
                             "中位数必须是数字（{why}）",
    "calib.py_float_type": "float() 的参数必须是字符串或实数，而不是 {kind}",
    "calib.py_missing_key": "缺少 {name}",
    "calib.py_not_float": "无法把字符串 {value} 转换为数字",
    "calib.refused_line": "未拟合：{line}",
    "calib.refused_scope": "{scope} 上的{metric}：只有 {n} 次运行，而需估计 {least} 个参数"
                           "（因子与离散度）；不拟合",
    "calib.scenario_field": "{path}：calibration",
    "calib.same_factor": "  同一个{metric}因子也覆盖更宽的范围 {scopes}",
    "calib.step_needs_batch": "{where}：由 step_time_s 换算 tokens/s 需要 global_batch"
                              "（每步的序列数）",
    "calib.steps_left": "global_step {total} 去掉 {warmup} 个预热迭代后，剩余稳定迭代数为",
    "calib.steps_measured": "steps：数据测量所覆盖的稳定迭代数为",
    "calib.too_many_rows": "{path}：超过 {most:,} 行；最多用 {most:,} 次运行来校准",
    "calib.too_many_runs": "{path}：超过 {most:,} 次运行；最多用 {most:,} 次运行来校准"
                           "（一个因子只需几十次）",
    "calib.toward_scope": "{scope} 的 x{factor:.3f}",
    "calib.tps_from_step": "tokens/s（global_batch x seq_len / step_time_s）",
    "calib.unit_memory": "每卡 GiB",
    "calib.unit_throughput": "整个作业的 tokens/s",
    "calib.unsupported": "{path}：不支持的运行记录文件；请用 .csv、.jsonl、trainer_state.json，"
                         "或 Megatron-LM / torchtitan 日志（.log、.txt、.out）",
    "calib.weight_range": "{where}.weight：{weight} 必须在 0-1 之内（且 fitted、toward_factor "
                          "大于 0）",
    "calib.would_be_refused": "{label}：未写入：读回时该校准文件会被拒绝（{why}）",
    "calib.would_not_read_back": "{label}：未写入：该校准文件读回后与写入内容不一致"
                                 "（运行名称中有 YAML 无法保存的字符？）",
    "calib.wrote": "已写入 {path}（{n} 次运行）",
}
