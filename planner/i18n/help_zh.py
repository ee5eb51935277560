"""Every command's `--help` in Chinese (issue 51 item 6), gettext-style: the key is the English help
as planner/cli writes it (a docstring cleaned as `inspect.cleandoc` cleans it), so the code keeps
its English strings and English help stays as it was. Option names, ids, units, file formats and
command names stay as written. plan.planner.cli.help_words applies the table to the command tree
before click renders it, and only when the language is Chinese; this module imports nothing (the
light commands, `plan --version` and `plan validate`, stay light)."""

from __future__ import annotations

HELP: dict[str, str] = {
    # plan (planner/cli/app.py)
    "Plan LLM training compute: GPU, count, layout, platform and billing, under your constraints. "
    "Scenario, model-card and overlay formats: docs/README.md (and `plan schema`).":
        "规划大模型训练算力：在你的约束下选定显卡、卡数、并行布局、平台与计费方式。场景文件、模型卡与"
        "目录叠加文件的格式见 docs/README.md（以及 `plan schema`）。",
    "print the version and exit": "显示版本号并退出",
    "do not read or write the persistent estimate cache (also: PLAN_CACHE_DIR=off)":
        "不读也不写持久的估算缓存（也可设 PLAN_CACHE_DIR=off）",
    "Show this message and exit.": "显示此帮助并退出。",
    # shared by several commands (planner/cli/common.py and the commands' own options)
    "scenario file": "场景文件",
    "scenario files": "场景文件（可多个）",
    "catalog overlay": "目录叠加文件",
    "catalog overlay (your quotes)": "目录叠加文件（你拿到的报价）",
    "calibration overlay from plan calibrate (your measured speed)":
        "plan calibrate 写出的校准文件（你实测的速度）",
    "en or zh (default: the scenario's lang:, else LANG/LC_ALL zh*)":
        "en 或 zh（默认：场景的 lang:，否则看 LANG/LC_ALL 是否为 zh*）",
    "table or json": "table 或 json",
    "wall-clock safety net, seconds, all solves": "墙钟安全上限，单位秒，所有求解合计",
    "deterministic time, all solves (the stop that does not depend on load)":
        "确定性时间，所有求解合计（不随机器负载而变的停止条件）",
    # plan solve
    "Find the optimal plan and near-optimal alternatives, with explanations.\n\n"
    "Exit codes: 0 solved, 1 infeasible (with explanation), 2 bad input, 3 no solution within the\n"
    "work limit, or an answer the wall-clock safety net cut (status cut).":
        "求出最优方案与接近最优的备选方案，并附说明。\n\n"
        "退出码：0 已求解；1 不可行（附说明）；2 输入有误；3 在工作量上限内没有方案，"
        "或答案被墙钟安全上限截断（状态 cut）。",
    "override the scenario's objective": "改用此目标，覆盖场景中的设定",
    "plans to return": "返回的方案数",
    "alternatives within this fraction": "备选方案与最优的差距上限（比例）",
    "also write a self-contained HTML report": "另外写出一份自包含的 HTML 报告",
    # plan explain
    "Why not X? Force an option and report its extra cost, or the rules it breaks.":
        "为什么不选 X？强制采用某个选项，报告它多出的费用，或它违反的规则。",
    'e.g. "job=sft platform=aliyun-pai gpu=h800 gpus=16 billing=hourly"':
        '例如 "job=sft platform=aliyun-pai gpu=h800 gpus=16 billing=hourly"',
    # plan compare
    "One job's best layout under every billing mode and platform: cost, time, interruptions,\n"
    "payback; the cheapest marked. A recurring job is compared over all its instances.\n\n"
    "Exit codes: 0 compared, 2 bad input, 3 no answer within the time limit.":
        "一个任务在每种计费方式、每个平台下的最佳布局：费用、工期、中断次数、"
        "回本期；最便宜的一项会标出。周期性任务按其全部实例比较。\n\n"
        "退出码：0 已比较；2 输入有误；3 在时间上限内没有答案。",
    "the job (or recurring job) to compare": "要比较的任务（或周期性任务）",
    # plan pareto
    "The exact cost/time Pareto front: for each finishing time, the cheapest plan.\n\n"
    "Exit codes: 0 the whole front found, 1 infeasible, 2 bad input, 3 no plan within the limits "
    "or\n"
    "a front the limits cut short (`complete: false`: the points found are shown).":
        "精确的费用/工期帕累托前沿：每个完工时间对应的最便宜方案。\n\n"
        "退出码：0 找到了完整前沿；1 不可行；2 输入有误；3 在上限内没有方案，"
        "或前沿被上限截断（`complete: false`：列出已找到的点）。",
    "horizontal axis": "横轴",
    "vertical axis (time = makespan)": "纵轴（time 即总工期）",
    "third axis: risk = expected interruptions": "第三个轴：risk 即预计中断次数",
    "at most this many points, evenly spread in time (default: every point of the exact front)":
        "最多取这么多个点，按时间均匀分布（默认：精确前沿上的每个点）",
    "front.csv or front.json": "front.csv 或 front.json",
    "front.png, front.svg or front.html": "front.png、front.svg 或 front.html",
    "lift the budget and deadlines to show what lies beyond them":
        "取消预算与截止期限，显示超出它们之后的方案",
    "no progress bar on stderr": "不在 stderr 上显示进度条",
    # plan validate
    "Check scenario files: schema, cross-references and catalog ids. Exit 2 if any is bad.":
        "检查场景文件：字段格式、相互引用与目录 id。有任何一个出错时退出码为 2。",
    # plan estimate
    "Estimate memory per GPU, step time, throughput and (with --tokens) hours and GPU-hours.":
        "估算每卡显存、单步时间、吞吐，以及（给出 --tokens 时）所需小时数与卡时。",
    "catalog model id/alias, or a model-card YAML file":
        "目录中的模型 id 或别名，或一个模型卡 YAML 文件",
    "pretrain | continued_pretrain | full_finetune | sft | lora | qlora | dpo | lora_dpo | "
    "qlora_dpo":
        "训练方法：pretrain | continued_pretrain | full_finetune | sft | lora | qlora | dpo | "
        "lora_dpo | qlora_dpo",
    "catalog GPU id or alias": "目录中的显卡 id 或别名",
    "number of GPUs": "显卡张数",
    "tensor-parallel size (searched if omitted)": "张量并行规模（省略时自动搜索）",
    "pipeline stages (searched if omitted)": "流水线级数（省略时自动搜索）",
    "ZeRO stage 0-3 (searched if omitted)": "ZeRO 阶段 0-3（省略时自动搜索）",
    "none | selective | full | full_offload | offload (selective: Megatron's attention core; "
    "FSDP's op-level policy, as torchtitan. full_offload: full, with the checkpoints in host "
    "memory, Unsloth's gradient checkpointing; offload: no recomputation, every saved activation "
    "in host memory)":
        "none | selective | full | full_offload | offload（selective：Megatron 只重算注意力核心；"
        "FSDP 按算子粒度的策略，同 torchtitan。full_offload：即 full，检查点放在主机内存，"
        "同 Unsloth 的梯度检查点；offload：不重算，所有保存的激活值都放在主机内存）",
    "megatron | deepspeed | fsdp (searched if omitted)":
        "megatron | deepspeed | fsdp（省略时自动搜索）",
    "Megatron block recomputation: layers recomputed per model chunk (implies --recompute full; "
    "chosen when needed if omitted)":
        "Megatron 的 block 重计算：每个模型块中重算的层数（意味着 --recompute full；"
        "省略时按需选定）",
    "context-parallel size (searched from 8k tokens)":
        "上下文并行规模（序列达 8k tokens 起自动搜索）",
    "interleaved virtual pipeline stages (searched)": "交错式虚拟流水线级数（自动搜索）",
    "expert-parallel size, MoE models (searched if omitted)":
        "专家并行规模，用于 MoE 模型（省略时自动搜索）",
    "MoE: token slots per routed expert relative to an even split, each expert's input padded to "
    "them (GShard-style, Megatron's --moe-expert-capacity-factor with "
    "--moe-pad-expert-input-to-capacity): that many times the experts' FLOPs, activations and "
    "all-to-all bytes (default 1: dropless routing at an even load)":
        "MoE：每个路由专家的 token 槽位数相对于均分的倍数，每个专家的输入都补齐到该槽位数"
        "（GShard 式，即 Megatron 的 --moe-expert-capacity-factor 加 "
        "--moe-pad-expert-input-to-capacity）：专家的 FLOPs、激活值与 all-to-all 字节数都乘以该倍数"
        "（默认 1：负载均匀时的无丢弃路由）",
    "flash | eager (eager: the s x s scores stored, as Hugging Face's eager attention; context "
    "parallelism then only on DeepSpeed's Ulysses)":
        "flash | eager（eager：保存 s×s 的注意力分数，同 Hugging Face 的 eager 注意力；"
        "此时上下文并行只能用 DeepSpeed 的 Ulysses）",
    "eager | fused: how a PyTorch stack (fsdp, deepspeed) runs the model's layers; eager as "
    "Hugging Face, torchtune and peft do, fused under torch.compile, Liger or Unsloth (fewer saved "
    "activations, no host floor); default eager. Megatron is always fused":
        "eager | fused：PyTorch 技术栈（fsdp、deepspeed）如何运行模型各层；eager 同 Hugging Face、"
        "torchtune 与 peft 的做法，fused 用 torch.compile、Liger 或 Unsloth（保存的激活值更少，"
        "没有主机内存下限）；默认 eager。Megatron 总是 fused",
    "plain | chunked | fused: how the cross-entropy holds the logits; plain, whole in fp32; "
    "chunked, the bf16 logits but not their fp32 copy (flash-attn's cross-entropy, torchtune's "
    "compiled chunked loss); fused, never whole (Liger's fused linear cross-entropy, Unsloth's Cut "
    "Cross-Entropy). Chunked and fused are a PyTorch stack's (fsdp, deepspeed), searched on FSDP "
    "when --framework is left out: Megatron's is always plain":
        "plain | chunked | fused：交叉熵如何保存 logits；plain，以 fp32 完整保存；"
        "chunked，保存 bf16 的 logits 但不保存其 fp32 副本（flash-attn 的交叉熵、"
        "torchtune 编译后的分块损失）；fused，"
        "从不完整保存（Liger 的融合线性交叉熵、Unsloth 的 Cut Cross-Entropy）。chunked 与 fused "
        "只用于 PyTorch 技术栈（fsdp、deepspeed），省略 --framework 时在 FSDP 上自动搜索；"
        "Megatron 总是 plain",
    "on | off (default: on when tp > 1)": "on | off（默认：tp > 1 时为 on）",
    "on | off: ZeRO-3 with the parameters, gradients and optimizer states in host memory "
    "(FSDP/DeepSpeed CPU offload; default: searched where nothing fits without it)":
        "on | off：ZeRO-3，参数、梯度与优化器状态放在主机内存（FSDP/DeepSpeed 的 CPU 卸载；"
        "默认：不卸载就放不下时才搜索）",
    "on | off: FSDP hybrid sharding (HSDP: HYBRID_SHARD, torchtitan's "
    "data_parallel_replicate_degree): ZeRO-2/3 states sharded over one node's GPUs and replicated "
    "across nodes (default: searched where the data-parallel group spans nodes)":
        "on | off：FSDP 混合分片（HSDP：HYBRID_SHARD，即 torchtitan 的 "
        "data_parallel_replicate_degree）：ZeRO-2/3 的状态在单个节点的显卡间分片、在节点间复制"
        "（默认：数据并行组跨节点时自动搜索）",
    "adamw | adamw-8bit | paged-adamw-8bit | adafactor | sgd | adamw-precision-aware | adamw-bf16":
        "优化器：adamw | adamw-8bit | paged-adamw-8bit | adafactor | sgd | adamw-precision-aware"
        " | adamw-bf16",
    "sequences/micro-batch": "每个微批的序列数",
    "sequences per step": "每步的序列数",
    "tokens per sequence, e.g. 4096 or 4k": "每条序列的 token 数，例如 4096 或 4k",
    "bf16 | fp16 | fp8": "精度：bf16 | fp16 | fp8",
    "LoRA rank (default 16)": "LoRA 的秩（默认 16）",
    "all | attention: the linear layers LoRA adapts (default all: q, k, v, o and the FFN's; "
    "attention: q, k, v, o only)":
        "all | attention：LoRA 适配的线性层（默认 all：q、k、v、o 以及 FFN 的各层；"
        "attention：只有 q、k、v、o）",
    "tokens to train on, e.g. 10B": "要训练的 token 数，例如 10B",
    "catalog platform: fabric, node size, reliability": "目录中的平台：互联网络、节点规模、可靠性",
    "fraction of the card kept free; fits means peak <= (1 - headroom) x card":
        "显存预留余量的比例；放得下指峰值 <= (1 - headroom) × 显卡显存",
    "mature | new: the training stack at this scale, for a pre-training run's hours (default: "
    "timed as the published runs of mature stacks)":
        "mature | new：该规模下训练技术栈的成熟度，用于估算预训练的小时数"
        "（默认：按成熟技术栈已公开的训练记录计时）",
    # plan catalog
    "List the catalog's models, GPUs, platforms, offers (derived prices marked), purchase prices\n"
    "or capacity limits, each with its source; `diff` lists what the --catalog overlays change.":
        "列出目录中的模型、显卡、平台、报价（推算出的价格会标出）、采购价格"
        "或容量限制，每项附来源；`diff` 列出 --catalog 叠加文件所做的改动。",
    "what to list": "要列出的内容",
    "overlay file(s)": "叠加文件（可多个）",
    "add each entry's source to the table": "在表格中加上每个条目的来源",
    # plan schema
    "Print the JSON Schema (Draft 2020-12) of the scenario file, for editor completion and "
    "checks.\n\n"
    "Save it (`plan schema > plan-scenario.schema.json`) and start a scenario with the line\n"
    "`# yaml-language-server: $schema=./plan-scenario.schema.json` for VS Code's YAML extension.":
        "打印场景文件的 JSON Schema（Draft 2020-12），供编辑器补全与检查。\n\n"
        "把它保存下来（`plan schema > plan-scenario.schema.json`），并在场景文件第一行写上"
        "`# yaml-language-server: $schema=./plan-scenario.schema.json`，"
        "供 VS Code 的 YAML 扩展使用。",
    # plan batch
    "Solve many scenarios (and sweep variants of each): one row each, in input order.\n\n"
    "Exit codes: 0 all solved, 1 some infeasible, without a solution in time or bad, 2 nothing "
    "could\nbe read.":
        "求解多个场景（以及每个场景的扫描变体）：每个一行，按输入顺序。\n\n"
        "退出码：0 全部求解；1 有的不可行、未能及时求得方案或有误；2 一个都读不进来。",
    "scenario files, folders (their *.yaml/*.yml) or glob patterns":
        "场景文件、文件夹（其中的 *.yaml/*.yml）或通配模式",
    "results.csv or results.jsonl; re-running with the same file skips rows already solved":
        "results.csv 或 results.jsonl；用同一文件再次运行时，跳过已求解的行",
    "scenarios solved at once (default: CPU count; on a Ray cluster given by --address, its size)":
        "同时求解的场景数（默认：CPU 核数；用 --address 指定 Ray 集群时为集群规模）",
    "where to solve": "在哪里求解",
    "Ray cluster address, e.g. auto or ray://head:10001 (default: a new local Ray with --jobs "
    "CPUs)":
        "Ray 集群地址，例如 auto 或 ray://head:10001（默认：新起一个本地 Ray，使用 --jobs 个 CPU）",
    "FIELD=A,B,C or FIELD=START..STOP:STEP, e.g. budget=100k..500k:50k; repeat for a grid":
        "FIELD=A,B,C 或 FIELD=START..STOP:STEP，例如 budget=100k..500k:50k；重复给出即成网格",
    "override each scenario's objective": "改用此目标，覆盖每个场景中的设定",
    "wall-clock safety net, seconds, per scenario (default: each's own)":
        "墙钟安全上限，单位秒，每个场景（默认：各场景自己的设定）",
    "deterministic time, per scenario (default: each's own) (the stop that does not depend on "
    "load)":
        "确定性时间，每个场景（默认：各场景自己的设定）（不随机器负载而变的停止条件）",
    "on resume, also re-use rows not proven optimal (feasible, no solution in time); by default "
    "they are solved again":
        "续跑时，未证明最优的行（可行、未能及时求得方案）也沿用；默认会重新求解它们",
    "CP-SAT workers per scenario (default 1: the parallelism is across scenarios)":
        "每个场景的 CP-SAT 工作线程数（默认 1：并行发生在场景之间）",
    "catalog overlay for every scenario": "用于每个场景的目录叠加文件",
    "calibration overlay from plan calibrate, for every scenario":
        "plan calibrate 写出的校准文件，用于每个场景",
    "most rows (scenario files x sweep variants) one run may ask for; raise it for a larger run":
        "一次运行最多可求解的行数（场景文件数 × 扫描变体数）；运行规模更大时请调高",
    # plan export
    "Write the plan's layout as launch configs for torchrun-fsdp, deepspeed, megatron, "
    "torchtitan,\nllamafactory or accelerate, with a README.md of the commands in order.\n\n"
    "Exit codes: 0 written, 1 infeasible, 2 bad input or a layout the stack cannot express, 3 no\n"
    "solution.":
        "把方案的布局写成 torchrun-fsdp、deepspeed、megatron、torchtitan、"
        "llamafactory 或 accelerate 的启动配置，并附一份按顺序列出命令的 README.md。\n\n"
        "退出码：0 已写出；1 不可行；2 输入有误，或该技术栈无法表达此布局；3 没有方案。",
    "training stack to write configs for": "要为之写配置的训练技术栈",
    "folder to write into": "写入的文件夹",
    "which plan (1 = best)": "第几个方案（1 为最佳）",
    "one job id (default: every job of the plan)": "某一个任务 id（默认：方案中的每个任务）",
    "release of the stack you will run (llamafactory: e.g. 0.9.5 or main; torchtitan: 0.2.2); "
    "refused when that release cannot run the export":
        "你将运行的技术栈版本（llamafactory：例如 0.9.5 或 main；torchtitan：0.2.2）；"
        "该版本无法运行导出的配置时拒绝",
    # plan report
    "Write one self-contained HTML page: the best plan, alternatives, a Gantt chart per "
    "platform\nand pool, cost by job and billing line, memory per GPU against the card, the "
    "assumptions (and\nthe Pareto front).\n\n"
    "Exit codes: 0 written, 1 infeasible (the page says why), 2 bad input, 3 no solution within "
    "the\nlimits, or an answer the wall-clock safety net cut.":
        "写出一个自包含的 HTML 页面：最佳方案、备选方案、每个平台与资源池的甘特图、"
        "按任务与计费项划分的费用、每卡显存与显卡容量的对比、所用假设（以及帕累托前沿）。\n\n"
        "退出码：0 已写出；1 不可行（页面中说明原因）；2 输入有误；3 在上限内没有方案，"
        "或答案被墙钟安全上限截断。",
    "the HTML page to write": "要写出的 HTML 页面",
    "add the cost/time front (a solve per point)": "加上费用/工期前沿（每个点求解一次）",
    # plan calibrate
    "Fit throughput and memory factors (measured / predicted) per GPU, framework and method "
    "from\nyour runs, with their spread, and write an overlay that `--calibration` (or "
    "`calibration:` in a\nscenario) applies.\n\n"
    "A factor has two parameters (level and spread): a group with fewer than two runs is "
    "refused.\nEach factor is pooled toward its broader scope's (the broadest toward no "
    "correction) by how far\nits runs' mean could be off by chance against how far scopes differ; "
    "the weight is shown and\nwritten. Exit codes: 0 written, 2 bad input or nothing could be "
    "fitted.":
        "根据你的训练记录，按显卡、框架与训练方法拟合吞吐与显存的修正因子（实测 / 预测）"
        "及其离散度，"
        "并写出一个校准文件，供 `--calibration`（或场景中的 `calibration:`）使用。\n\n"
        "每个因子有两个参数（水平与离散度）：少于两次运行的分组会被拒绝。"
        "每个因子都向其上一级范围的因子收缩（最宽的范围向不修正收缩），收缩程度取决于其运行均值"
        "可能因偶然偏离多少、与各范围之间相差多少；权重会显示并写入文件。"
        "退出码：0 已写出；2 输入有误或没有可拟合的内容。",
    "measured runs: .csv, .jsonl, trainer_state.json, or Megatron-LM / torchtitan logs (each with "
    "run.yaml beside it)":
        "实测的训练记录：.csv、.jsonl、trainer_state.json，或 Megatron-LM / torchtitan 的日志"
        "（旁边各有一个 run.yaml）",
    "the calibration overlay to write (.yaml)": "要写出的校准文件（.yaml）",
    "catalog overlay (models, GPUs)": "目录叠加文件（模型、显卡）",
}

# the words typer and click put around the help (their names in typer.rich_utils, click's usage
# prefix and metavars), said while a Chinese help renders
FRAME: dict[str, str] = {
    "Usage: ": "用法：",
    "[OPTIONS]": "[选项]",
    "COMMAND [ARGS]...": "命令 [参数]...",
    "Arguments": "参数",
    "Options": "选项",
    "Commands": "命令",
    "[default: {}]": "[默认：{}]",
    "[required]": "[必填]",
}
