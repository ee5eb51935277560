"""English input errors (plan.models: files, YAML, validation, units, catalog overlays, the
scenario's cross-references): the wording these messages always had, so English output is
unchanged. Each is a `say_as` template in models/ (tests/planner/test_i18n_rules.py checks they
agree); keys match `inputs_zh` one for one."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "rule.kind_other": "not a plain file",
    "rule.what_file": "file",
    "rule.what_scenario": "scenario file",
    "rule.what_card": "model card",
    "rule.what_overlay": "catalog overlay",
    "rule.what_results": "results file",
    "rule.what_run_description": "run description",
    "rule.what_calibration": "calibration file",
    "rule.what_run_file": "run file",
    "rule.what_log": "log",
    "rule.os_loop": "Too many levels of symbolic links",
    "rule.os_access": "Permission denied",
    "rule.os_permission": "Operation not permitted",
    "rule.os_name_too_long": "File name too long",
    "rule.os_not_dir": "Not a directory",
    "rule.os_io": "Input/output error",
    "rule.kind_fifo": "a FIFO",
    "rule.kind_chardev": "a character device",
    "rule.kind_blockdev": "a block device",
    "rule.kind_socket": "a socket",
    "rule.file_unreadable": "{label}: cannot read the {what}: {reason}",
    "rule.file_empty": "{label}: empty {what}",
    "rule.file_binary": "{label}: binary file, expected YAML text",
    "rule.file_folder": "{label}: is a folder, expected a {what}",
    "rule.file_special": "{label}: not a regular file ({kind}); the {what} must be a regular file",
    "rule.file_too_large": "{label}: {mb:,.1f} MB, larger than the {limit:g} MB allowed for a "
                           "{what}",
    "rule.file_not_utf8": "{label}: not UTF-8 text, expected a YAML {what}",
    "rule.file_missing": "{label}: {what} not found",
    "rule.file_not_regular": "{label}: not a regular file; the {what} must be a regular file",
    "rule.yaml_duplicate": "{label}: line {line}: duplicate key {name}; each key may appear once",
    "rule.yaml_too_deep": "{label}: YAML nested too deeply",
    "rule.yaml_long_int": "{label}: line {line}: an integer of {digits:,} digits; at most {most} "
                          "digits are read (no quantity in a plan needs more)",
    "rule.file_grew": "{label}: larger than the {limit:g} MB allowed for a {what}",
    "rule.yaml_too_many": "{label}:{where} more than {limit:,} YAML values (mapping keys, list "
                          "items and scalars); refused: a scenario, catalog overlay or run "
                          "description needs far fewer",
    "rule.yaml_line": " line {line}:",
    "rule.yaml_alias_bomb": "{label}:{where} YAML aliases expand to more than {limit:,} values; "
                            "refused (write the values out, or use fewer aliases)",
    "rule.yaml_nested": "{label}:{where} nested deeper than {depth} levels; refused",
    "rule.one_item": "{n} item",
    "rule.many_items": "{n} items",
    "rule.one_char": "{n} character",
    "rule.many_chars": "{n} characters",
    "rule.pyd_missing": "Field required",
    "rule.pyd_list": "Input should be a valid list",
    "rule.pyd_dict": "Input should be a valid dictionary",
    "rule.pyd_string": "Input should be a valid string",
    "rule.pyd_int": "Input should be a valid integer",
    "rule.pyd_float": "Input should be a valid number",
    "rule.pyd_bool": "Input should be a valid boolean",
    "rule.pyd_int_parsing": "Input should be a valid integer, unable to parse string as an integer",
    "rule.pyd_float_parsing": "Input should be a valid number, unable to parse string as a number",
    "rule.pyd_bool_parsing": "Input should be a valid boolean, unable to interpret input",
    "rule.pyd_int_from_float": "Input should be a valid integer, got a number with a fractional "
                               "part",
    "rule.pyd_model": "Input should be a valid dictionary or instance of {name}",
    "rule.pyd_too_short": "List should have at least {items} after validation, not {actual}",
    "rule.pyd_too_long": "List should have at most {items} after validation, not {actual}",
    "rule.pyd_string_too_long": "String should have at most {chars}",
    "rule.pyd_string_too_short": "String should have at least {chars}",
    "rule.pyd_pattern": "String should match pattern {pattern}",
    "rule.unit_money": "an amount of money",
    "rule.unit_count": "a count",
    "rule.unit_seq_len": "a sequence length",
    "rule.unit_duration": "a duration",
    "rule.unit_size": "a size",
    "rule.allowed_money": "a number, optionally with k, M, 万 or 亿 and a currency (¥, $, 元, USD, "
                          "CNY, ...), e.g. 400k, 40万, 2万元, ¥20,000 or 20k USD",
    "rule.allowed_count": "a number, optionally with K, M, B or T, e.g. 200M or 2B",
    "rule.allowed_seq_len": "a whole number of tokens, or with k (x1024), e.g. 4096 or 4k",
    "rule.allowed_duration": "a number with h, d, w or min (or hours, days, weeks), e.g. 30d, "
                             "12h or 2 weeks",
    "rule.allowed_size": "a number with B, KB, MB, GB, TB, PB (or KiB..TiB), e.g. 50GB",
    "rule.unit_expected": "expected {what} ({allowed}), got {value}",
    "rule.unit_suffix": "unknown suffix {suffix} in {value}; allowed: {allowed}",
    "rule.unit_not_finite": "expected {what} ({allowed}) that is a finite number, got {value}",
    "rule.unit_names_currency": "{value} names a currency ({currency}); give the amount in the "
                                "scenario's currency",
    "rule.unit_whole_tokens": "expected {allowed}, got {value}",
    "rule.unit_duration_needs": "a duration needs a unit ({allowed}), got {value}",
    "rule.unit_size_needs": "a size needs a unit ({allowed}), got {value}",
    "rule.unit_two_currencies": "{value} names two currencies ({first} and {second})",
    "rule.more_problems": "{where}... and {count:,} more problems (the first {shown} are shown)",
    "rule.label_problem": "{label}: {problem}",
    "rule.moe_top_k": "top_k ({top_k}) cannot exceed experts ({experts})",
    "rule.card_heads": "num_heads ({heads}) must be a multiple of num_kv_heads ({kv_heads})",
    "rule.card_assumed": "an assumed card must say what was assumed in `assumption`",
    "rule.none_declared": "none declared",
    "rule.balanced_needs_value": "value_of_time_per_day: objective balanced needs a value > 0",
    "rule.undeclared_site": "{path}: {site} is not a declared site ({declared})",
    "rule.after_cycle": "jobs.after: cycle {cycle}; `after` must not loop",
    "rule.budget_needs_start": "budget: a budget per period needs the scenario's start date "
                               "(start: 2027-01-01)",
    "rule.duplicate_id": "{section}[{i}].id: duplicate id {id}; ids must be unique",
    "rule.after_itself": "jobs[{i}].after: job {job} cannot come after itself",
    "rule.after_unknown": "jobs[{i}].after: unknown job {dep}{hint}",
    "rule.same_id": "id",
    "rule.same_gpu": "GPU",
    "rule.same_gpu_billing": "GPU and billing",
    "rule.overlay_repeated": "{label}: {where}[{i}]: the same {what} as {where}[{first}] "
                             "({shown}); one entry each, or the last would silently win",
    "rule.and_more": " and {count} more",
    "rule.overlay_fine": "{label}: the other entries are fine: {shown}{more}",
    "rule.overlay_not_list": "{label}: {section}: expected a list of entries",
    "rule.overlay_unknown_section": "{label}: {section}: unknown section; allowed: {allowed}",
    "rule.overlay_not_mapping": "{label}: expected a mapping with sections {sections}",
    "rule.offer_no_rate": "catalog: platforms.{platform}.offers[{i}].currency: no exchange rate "
                          "for {currency}",
    "rule.lora_rank_only": "lora_rank is only for lora or qlora (or lora_dpo, qlora_dpo), not "
                           "{method}",
    "rule.lora_targets_only": "lora_targets is only for lora or qlora (or lora_dpo, qlora_dpo), "
                              "not {method}",
    "rule.no_rate": "{label}: currency: no exchange rate for {currency}; known: {known}",
    "rule.purchase_unlisted": "{label}: purchase[{i}].gpu: the catalog has no purchase entry for "
                              "{gpu} (it has: {listed}); add one in a catalog overlay (power, "
                              "staff, life) and quote your price here",
    "rule.scenario_not_mapping": "{label}: expected a mapping of scenario fields (name, jobs, "
                                 "...), got {kind}",
    "rule.seq_len_over": "{label}: jobs[{i}].seq_len: {seq_len} exceeds {card}'s max_positions "
                         "{most}",
    "rule.overlay_missing": "{label}: catalog: overlay file {name} not found (looked at {path})",
    "rule.none": "none",
    "rule.comma": "{head}, {last}",
    "rule.card_params": "params ({declared:,.4g}) does not match the shape ({implied:,.4g} "
                        "parameters from layers, hidden_size, ffn_hidden_size, heads, "
                        "vocab_size) within {tolerance:.0%}; fix the card, or say why in "
                        "params_note",
    "rule.id_rule": "1-128 characters: letters, digits and . _ - + : @ /, starting with a letter "
                    "or digit",
    "rule.bad_id": "{value} is not a valid id ({rule})",
    "rule.control_chars": "contains control characters (terminal escapes); only tab and newline "
                          "are allowed",
    # command-line errors (plan.planner.cli, --why-not parsing, the solver's overflow guards)
    "cli.address_ray": "--address is for --backend ray",
    "cli.at_least_one": "{option}: must be at least 1, got {value}",
    "cli.at_most": "{option}: at most {most:,}, got {value:,}",
    "cli.calibration_yaml": "{path}: the calibration overlay is YAML; name it .yaml",
    "cli.folder_missing": "{path}: folder {folder} not found",
    "cli.headroom": "--headroom: a fraction of the card from 0 to {most:g}, got {value:g}",
    "cli.model_overflow": "scenario {name}: the money and time figures are too large for the "
                          "solver's 64-bit integers (prices, exchange rates, budget or "
                          "value_of_time_per_day near their bounds; see docs/limits.md); lower "
                          "them",
    "cli.money_overflow": "{label}: the money figures are too large for the solver's 64-bit "
                          "integers (the costs could reach {cost:.3g} {currency}): lower the "
                          "prices, exchange rates or value_of_time_per_day (see docs/limits.md)",
    "cli.need_gpu": "a catalog GPU id or name (plan catalog gpus)",
    "cli.need_gpus": "how many GPUs, e.g. --gpus 8",
    "cli.need_model": "a catalog model id or name (plan catalog models)",
    "cli.need_one_of": "one of {names}",
    "cli.not_one_of": "{option}: {value} is not one of {names}",
    "cli.nothing_written": "{problem}; nothing was written",
    "cli.only_for": "{option}: only for {methods}, not for {method}",
    "cli.overlay_missing": "{path}: --catalog overlay file not found",
    "cli.plan_beyond": "--plan: {rank} is beyond the {n} plan(s) found",
    "cli.report_html": "{path}: the report is an HTML page; name it .html",
    "cli.required": "{option}: required: {what}",
    "cli.seq_len_positions": "--seq-len: {seq_len} exceeds {model}'s max_positions {positions}",
    "cli.step_over_tokens": "--global-batch: one step ({batch} x {seq_len} tokens) is more than "
                            "--tokens ({tokens})",
    "cli.sweep_too_many": "--sweep: {files} scenario file(s) x {variants} variant(s) = {rows} "
                          "rows; at most {most} per run (--max-variants N raises it)",
    "cli.tokens_range": "--tokens: from 1 to {most:g}, got {value}",
    "cli.tokens_short": "--tokens: {tokens:,.0f} is less than one sequence of --seq-len {seq_len}",
    "cli.too_few_runs": "{runs}: {n} run(s): too few to fit any factor (each needs at least 2 "
                        "runs: a factor and its spread)",
    "cli.unknown_job": "--job: unknown job {job}; jobs: {jobs}",
    "cli.why_not_billing": "billing: {value} is not a billing mode; use one of {modes}",
    "cli.why_not_empty": "give at least one of {keys}",
    "cli.why_not_gpus": "gpus must be a whole number from 1 to {most:,}, got {value}",
    "cli.why_not_job": "--why-not: job: unknown job {job}; jobs: {jobs}",
    "cli.why_not_pairs": "expected key=value pairs with keys {keys}, got {part}",
    "cli.work_limit": "{file}: no plan within the work limit; raise solver.work_limit, then ask "
                      "again",
    # output files a command refuses to write (plan.planner.output_target, export/writer.py)
    "out.same_folder": "{one} and {other} would be written to the same folder {folder}; rename "
                       "one",
    "out.no_folder": "{shown}: folder {folder} does not exist",
    "out.symlink": "{shown}: is a symbolic link; refusing to write through it (remove it, or name "
                   "the file it points to)",
    "out.folder": "{shown}: is a folder; name a file",
    "out.not_regular": "{shown}: is not a regular file",
    "out.is_input": "{shown}: is one of this command's inputs ({source}); writing it would lose "
                    "the input: name another file",
    "out.outside": "-o {folder}: {target} lies outside it",
    "out.inner_symlink": "-o {folder}: {path} is a symbolic link; refusing to write through it "
                         "(remove it first)",
    "out.dangling": "-o {folder}: is a symbolic link to no folder",
    "out.not_folder": "-o {folder}: exists and is not a folder",
    "out.inner_folder": "-o {folder}: {path} is a folder",
    "out.inner_input": "-o {folder}: {path} is one of this command's inputs; writing it would "
                       "lose the input: choose another folder",
    # plan batch: --sweep and the results file (planner/batch)
    "batch.range_form": "--sweep {spec}: a range is START..STOP:STEP, e.g. budget=100k..500k:50k",
    "batch.range_not_number": "--sweep {spec}: {field} is not a number; give a list of values, "
                              "e.g. {name}=A,B",
    "batch.range_bad_value": "--sweep {spec}: {problem} (a range of {field} reads like {example})",
    "batch.step_positive": "--sweep {spec}: STEP must be > 0",
    "batch.stop_below": "--sweep {spec}: STOP is below START",
    "batch.range_too_long": "--sweep {spec}: {count} values; at most {most} (check STEP)",
    "batch.empty_item": "--sweep {spec}: empty item in the list; write FIELD=A,B,C",
    "batch.sweep_form": "--sweep {spec}: expected FIELD=A,B,C or FIELD=START..STOP:STEP, e.g. "
                        "budget=100k..500k:50k or deadline=14d,21d,30d",
    "batch.unknown_field": "--sweep {spec}: unknown or unsweepable field {field}{hint} "
                           "(sweepable: {fields}, policy.*, solver.*)",
    "batch.swept_twice": "--sweep {field}: the field is already swept by --sweep {other}",
    "batch.grid_too_large": "--sweep: the grid has {total} variants per scenario; at most {most}",
    "batch.results_format": "{path}: unknown results format {suffix}; use a .csv or .jsonl file",
    "batch.results_foreign": "{path}: exists and is not a `plan batch` results file ({problem}); "
                             "refusing to overwrite it: choose another -o or remove it",
    "batch.results_read_only": "{path}: the results file is not writable; choose another -o",
    "batch.results_locked": "{path}: another `plan batch` is writing this file (it holds {lock}); "
                            "wait for it to finish, or choose another -o",
    "batch.folder_unwritable": "{path}: cannot write in {folder} ({reason}); choose a writable "
                               "folder for -o",
    "batch.results_no_header": "no header line",
    "batch.results_columns": "columns are {columns}",
    # a YAML parser's problems (models/yaml_words.py): libyaml's words, the pure-Python parser's
    "rule.yaml_mapping_values": "mapping values are not allowed in this context",
    "rule.yaml_mapping_values_here": "mapping values are not allowed here",
    "rule.yaml_mapping_keys": "mapping keys are not allowed in this context",
    "rule.yaml_sequence_entries": "block sequence entries are not allowed in this context",
    "rule.yaml_sequence_entries_here": "sequence entries are not allowed here",
    "rule.yaml_expected_list_end": "did not find expected ',' or ']'",
    "rule.yaml_expected_mapping_end": "did not find expected ',' or {close}",
    "rule.yaml_expected_key": "did not find expected key",
    "rule.yaml_expected_dash": "did not find expected '-' indicator",
    "rule.yaml_expected_content": "did not find expected node content",
    "rule.yaml_expected_document": "did not find expected <document start>",
    "rule.yaml_expected_line_break": "did not find expected comment or line break",
    "rule.yaml_expected_hex": "did not find expected hexdecimal number",
    "rule.yaml_expected_colon": "could not find expected ':'",
    "rule.yaml_undefined_alias": "found undefined alias",
    "rule.yaml_bad_character": "found character that cannot start any token",
    "rule.yaml_unknown_escape": "found unknown escape character",
    "rule.yaml_end_of_stream": "found unexpected end of stream",
    "rule.yaml_tab_indent": "found a tab character that violates indentation",
    "rule.yaml_another_document": "but found another document",
    "rule.yaml_unknown_directive": "found unknown directive name",
    "rule.yaml_second_occurrence": "second occurrence",
    "rule.yaml_bad_character_found": "found character {found} that cannot start any token",
    "rule.yaml_expected_found": "expected {wanted}, but found {found}",
    "rule.yaml_expected_got": "expected {wanted}, but got {found}",
    # Python's JSON decoder's problems (models/json_words.py)
    "rule.json_value": "Expecting value",
    "rule.json_extra": "Extra data",
    "rule.json_colon": "Expecting ':' delimiter",
    "rule.json_comma": "Expecting ',' delimiter",
    "rule.json_name": "Expecting property name enclosed in double quotes",
    "rule.json_unterminated": "Unterminated string starting at",
    "rule.json_control": "Invalid control character at",
    "rule.json_escape": "Invalid \\escape",
    "rule.json_unicode_escape": "Invalid \\uXXXX escape",
    "rule.json_comma_object": "Illegal trailing comma before end of object",
    "rule.json_comma_array": "Illegal trailing comma before end of array",
    "rule.json_problem": "{problem}: line {line} column {column} (char {char})",
    "rule.json_too_deep": "nested too deeply",
    # the calendar and the timeline (models/calendar.py, models/timeline.py)
    "rule.at_field": "{field}: {problem}",
    "rule.budget_per_form": "budget: {form} takes an amount and no list of periods",
    "rule.budget_no_period": "budget: a list of {form} needs at least one period",
    "rule.budget_twice": "budget: period {label} is listed twice",
    "rule.budget_one_kind": "budget: list periods of one kind (all years, all quarters or all "
                            "months)",
    "rule.date_needs_start": "{field}: a date needs the scenario's start date (start: "
                             "{year}-01-01)",
    "rule.date_before_start": "{field}: {day} is before the plan's start ({start})",
    "rule.repeat_deadline_date": "{field}: a recurring job's deadline is a duration after each "
                                 "release (e.g. 30d)",
    "rule.repeat_beyond": "jobs: {job}'s last instance would be released at {last:,.0f} h, "
                          "beyond the planner's limit of {most:g} h: fewer or closer repeats",
    "rule.repeat_id_clash": "jobs: instance id {id} of a recurring job is also another job's id",
    "rule.not_a_date": "{value} is not a date of the calendar ({reason})",
    "rule.day_range": "day is out of range for month",
    "rule.month_range": "month must be in 1..12",
    "rule.year_range": "year {year} is out of range",
    "rule.step_positive": "expected a positive step, got {value}",
    "rule.step_years": "{value} is longer than the planner's limit of {most:g} years",
    "rule.step_hours": "{value} is longer than the planner's limit of {most:g} h",
    "rule.step_form": "expected a calendar unit (1 month, quarter, year) or a duration (30d, 2w), "
                      "got {value}",
    "rule.fiscal_form": "expected MM-DD (e.g. 04-01 for a year from April), got {value}",
    "rule.period_form": "expected a period as 2027 (a fiscal year), 2027-Q1 or 2027-03, got "
                        "{value}",
    # a character no YAML may hold (models/yaml_words.py): the reader names no line, a position
    "rule.yaml_unacceptable": "unacceptable character #x{code:04x}: {reason}\n  in {name}, "
                              "position {position}",
    "rule.yaml_control_characters": "control characters are not allowed",
    "rule.yaml_special_characters": "special characters are not allowed",
    "rule.yaml_nesting_depth": "exceeded maximum nesting depth",
}
