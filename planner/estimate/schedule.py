"""What a pipeline stage holds at its peak: the model chunks its schedule has run forward and not
yet backward, each with its own layers.

Megatron-LM's schedules (schedules.py, `forward_backward_pipelining_with_interleaving` and
`..._without_interleaving`) and torch.distributed.pipelining's Schedule1F1B/ScheduleInterleaved1F1B
run stage r's chunk-forwards in rounds of pp micro-batches per model chunk, the last round what is
left (backward k runs the chunk v - 1 - forward k's), with 2(pp - r - 1) + (v - 1) pp warm-up
forwards when interleaved and pp - r - 1 with 1F1B, then one forward and one backward in turn. With
equal chunks the peak is the warm-up plus one chunk (held_chunks); with unequal ones (the first
chunk of the first stage holds the embedding in place of a layer, the last chunk of the last stage
the loss) the held layers are summed op by op.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache


def stage_chunk_layers(
    stage_layers: int, mid_layers: int, virtual: int, edge: str
) -> tuple[float, ...]:
    """Layers in each of a stage's `virtual` model chunks. A stage of the middle stages' length
    splits evenly. A shorter first (`edge` "first") or last ("last") stage takes its shortfall from
    its first or last chunk, where the embedding or the loss stands in for the missing layers
    (Megatron's --account-for-embedding/loss-in-pipeline-split; torchtitan counts them as layers
    too: Llama 3 405B's 126 layers over 16 x 8 chunks leave the first chunk the embedding alone).
    Where the chunks cannot be equal elsewhere, each is charged an even share."""
    if virtual == 1:
        return (float(stage_layers),)
    per_chunk = mid_layers // virtual
    short = mid_layers - stage_layers
    if mid_layers % virtual or short < 0 or short > per_chunk or edge not in ("first", "last"):
        return (stage_layers / virtual,) * virtual
    chunks = [float(per_chunk)] * virtual
    chunks[0 if edge == "first" else -1] -= short
    return tuple(chunks)


def held_peak(chunk_bytes: tuple[float, ...], pp: int, micro_batches: int, rank: int) -> float:
    """The most bytes stage `rank` holds at once: the sum of `chunk_bytes` (one micro-batch's stored
    activations on each model chunk) over the chunk-forwards it has run and not yet run backward."""
    virtual = len(chunk_bytes)
    values = set(chunk_bytes)
    if len(values) <= 1:  # equal chunks: the warm-up plus one (the closed form)
        return chunk_bytes[0] * held_chunks(pp, virtual, micro_batches, rank)
    if len(values) == 2:
        # Two sizes (an edge chunk and the rest, as stage_chunk_layers gives): what is held is a mix
        # of counts that depends only on the schedule, so the mixes are found once per schedule
        # (cached) and weighed here.
        low, high = min(values), max(values)
        pattern = tuple(b == low for b in chunk_bytes)
        return max(n_low * low + (n_all - n_low) * high
                   for n_low, n_all in _held_mixes(pattern, pp, micro_batches, rank))
    return _simulated_peak(chunk_bytes, pp, micro_batches, rank)


@lru_cache(maxsize=4096)
def _held_mixes(
    low_chunks: tuple[bool, ...], pp: int, micro_batches: int, rank: int
) -> tuple[tuple[int, int], ...]:
    """(chunk-forwards of the `low_chunks` held, all held) at the moments a peak can occur: for each
    count held (the warm-up's, then one more after every forward), the fewest of the lighter chunks
    among them, since with weights low <= high that is the heaviest mix of that count."""
    is_low = tuple(1.0 if low else 0.0 for low in low_chunks)
    fewest: dict[int, int] = {}
    for held_low, held_all in _held_counts(is_low, pp, micro_batches, rank):
        fewest[held_all] = min(fewest.get(held_all, held_all), round(held_low))
    return tuple((n_low, n_all) for n_all, n_low in fewest.items())


def _warm_up(pp: int, virtual: int, micro_batches: int, rank: int) -> int:
    total = micro_batches * virtual
    warm = 2 * (pp - rank - 1) + (virtual - 1) * pp if virtual > 1 else pp - rank - 1
    return min(warm, total)


def held_chunks(pp: int, virtual: int, micro_batches: int, rank: int) -> int:
    """Chunk-forwards stage `rank` holds at its peak: its warm-up and one more, at most the
    step's."""
    return min(_warm_up(pp, virtual, micro_batches, rank) + 1, micro_batches * virtual)


def _chunk_of(k: int, pp: int, virtual: int, micro_batches: int) -> int:
    """The model chunk of a stage's k-th chunk-forward: rounds of pp micro-batches per chunk, the
    last round whatever is left (megatron-core `get_schedule_table`, its default group of pp
    micro-batches). The k-th backward runs chunk v - 1 - this."""
    whole = (micro_batches // pp) * pp * virtual
    if k < whole:
        return (k % (pp * virtual)) // pp
    return (k - whole) // (micro_batches - (micro_batches // pp) * pp)


def _done(chunk_bytes: tuple[float, ...], pp: int, micro_batches: int, n: int) -> float:
    """Bytes of the first n chunk-forwards in a stage's order (_chunk_of)."""
    virtual = len(chunk_bytes)
    rounds, r = divmod(n, pp * virtual)
    rounds = min(rounds, micro_batches // pp)
    r = n - rounds * pp * virtual
    size = pp if rounds < micro_batches // pp else micro_batches - rounds * pp
    return rounds * pp * sum(chunk_bytes) + sum(b * min(size, max(0, r - c * size))
                                                for c, b in enumerate(chunk_bytes))


def _held_counts(chunk_bytes: tuple[float, ...], pp: int, micro_batches: int, rank: int,
                 ) -> Iterator[tuple[float, int]]:
    """(held bytes, held chunk-forwards) at the end of the warm-up and after each forward of the
    one-forward-one-backward phase. While both stay in whole rounds the held bytes repeat every pp v
    steps, so one period at its start and the steps from one period before the last round onwards
    cover every value."""
    virtual = len(chunk_bytes)
    total = micro_batches * virtual
    warm = _warm_up(pp, virtual, micro_batches, rank)
    period = pp * virtual
    steady = total - warm
    repeating = max(0, min(steady, (micro_batches // pp) * period - warm))
    first = (0, min(steady, period + 1))
    last = (max(first[1], repeating - period - 1), steady)
    yield _done(chunk_bytes, pp, micro_batches, warm), warm
    for start, stop in (first, last):
        held = _done(chunk_bytes, pp, micro_batches, warm + start) - _done(
            chunk_bytes[::-1], pp, micro_batches, start
        )
        for i in range(start, stop):
            held += chunk_bytes[_chunk_of(warm + i, pp, virtual, micro_batches)]
            yield held, warm + 1
            held -= chunk_bytes[virtual - 1 - _chunk_of(i, pp, virtual, micro_batches)]


@lru_cache(maxsize=8192)
def _simulated_peak(
    chunk_bytes: tuple[float, ...], pp: int, micro_batches: int, rank: int
) -> float:
    """The most held bytes, chunk sizes of any kind (_held_counts)."""
    return max(held for held, _ in _held_counts(chunk_bytes, pp, micro_batches, rank))
