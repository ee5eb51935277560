"""Upper bounds on every number a user or an overlay can give, checked when the file is loaded.

None of these is a fact about the world: each is `assumed`, chosen by the rule written beside it,
and generous enough that no real plan comes near it. They exist so that a typo (`1e9` GPUs per
node, `1e308` of budget) is refused with a clear error naming the field instead of building a
billion-node graph, looping for minutes or overflowing the solver's 64-bit integers.

Money and the CP-SAT integers: the model counts money in cents (`plan.models.problem.Scale`). With
money at most MAX_MONEY and a job's bill at most MAX_MONEY (a candidate above it is dropped), the
costs of MAX_JOBS jobs sum to at most 2e17 cents, under int64's 9.2e18 with a margin for the
products the solver forms; time is in minutes, at most 3 x MAX_DURATION_H (the horizon) = 1.6e7.
"""

from __future__ import annotations

# assumed: 10^12 of any currency is far above any training budget (the largest disclosed runs cost
# ~10^9 USD) and keeps cent-scaled sums under int64 (see above).
MAX_MONEY = 1e12
# assumed: rates of 10^5 per GPU-hour are 10^4 x today's dearest offers.
MAX_PRICE_PER_GPU_HOUR = 1e5
# assumed: 10^9 per GPU bought (with its server share) is 10^4 x today's dearest GPU.
MAX_PRICE_PER_GPU = 1e9
# assumed: a day of delay worth 10^9 of the currency; with the horizon's minutes it stays far below
# int64.
MAX_VALUE_OF_TIME_PER_DAY = 1e9
# assumed: ten years; no plan runs longer, and three of them (the horizon) stay small in minutes.
MAX_DURATION_H = 10 * 365 * 24.0
# assumed: 10^15 tokens is ~30x the largest disclosed pre-training corpus (36T tokens).
MAX_TOKENS = 1e15
# assumed: 16M tokens per sequence, 16x the longest context the catalog's models support.
MAX_SEQ_LEN = 2**24
# assumed: a million sequences per optimizer step, ~250x the largest published global batch (4M
# tokens).
MAX_GLOBAL_BATCH = 1_000_000
# assumed: the largest GPU domains sold are 576 GPUs (NVL576); 1024 leaves room.
MAX_GPUS_PER_NODE = 1024
# assumed: 10^6 GPUs per job or per pool, ~10x the largest clusters announced.
MAX_GPUS = 1_000_000
# assumed: tensor, pipeline and context parallel sizes beyond 4096 are not run anywhere.
MAX_PARALLEL = 4096
# assumed: LoRA ranks above 65536 exceed every model's hidden size.
MAX_LORA_RANK = 65536
# assumed: a scenario plans at most 500 jobs; more belongs in `plan batch`.
MAX_JOBS = 500
# assumed: a million GB (an exabyte) of training data per job.
MAX_DATA_GB = 1e9
# assumed: 10^6 Gb/s per link or per GPU, ~1000x today's fastest.
MAX_GBPS = 1e6
# assumed: an exchange rate outside 10^-6..10^6 is a typo, whatever the pair.
MIN_EXCHANGE_RATE, MAX_EXCHANGE_RATE = 1e-6, 1e6
# CP-SAT's random seed is a 32-bit signed integer.
MAX_SEED = 2**31 - 1
# assumed: 10^6 seconds (11.6 days) of wall clock or deterministic work for one command.
MAX_SOLVER_LIMIT = 1e6
# assumed: CP-SAT workers beyond 256 exceed every machine's cores.
MAX_WORKERS = 256
# assumed: alternatives within 10x (1000%) of the best are no longer "near-optimal".
MAX_GAP = 10.0
# assumed: a purchase lives at most 50 years and arrives within 10 years.
MAX_LIFE_YEARS = 50.0
MAX_LEAD_TIME_DAYS = 3650.0
# assumed: 10^6 expected interruptions per job is no policy anyone means.
MAX_INTERRUPTIONS = 1e6
# Ids: letters, digits and . _ - + : @ / (model paths aside); 1-128 characters. No spaces, markup
# brackets or control characters, so an id prints as itself everywhere.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+:@/-]{0,127}$"
ID_RULE = "1-128 characters: letters, digits and . _ - + : @ /, starting with a letter or digit"
# Free text (names, descriptions, sources): no control characters except tab and newline.
MAX_TEXT_CHARS = 10_000
