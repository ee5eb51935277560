"""Layout searches shared between the builds of one loaded scenario's variants.

An infeasible answer builds a dozen changed copies of the scenario (its relaxations: no deadline,
a data level stepped down, a leaner optimizer for one job, a smaller memory headroom), and a
batch builds hundreds. Each build asked its own estimates again (most of its time: one layout
search per job, place and count, read back from the estimate store and decoded). The answer of a
search depends on the job's fields and the cluster (both in `Estimating._estimate`'s key) and on
three figures of the builder: the memory headroom and the confidence (here, in the key of the
shared cache) and whether only PyTorch stacks may run (in `_estimate`'s key); never on a deadline,
a budget, another job or a rule. So the builds of copies of one loaded scenario (the same catalog
and model cards, `Session.variant`) with the same headroom and confidence share one cache: a job a
variant does not change is estimated once.
"""

from __future__ import annotations

from collections import OrderedDict

from plan.models.loading import LoadedScenario
from plan.planner.candidates.estimating import EstimateCache

# (catalog id, model cards' id, headroom, confidence) -> (catalog, cards, cache); the catalog and
# the cards are kept so that their ids are not reused while the entry lives
_SHARED: OrderedDict[tuple[int, int, float, float], tuple[object, object, EstimateCache]] = (
    OrderedDict())
SHARED_KEPT = 4


def shared_estimates(loaded: LoadedScenario) -> EstimateCache:
    """The estimate cache of builds of `loaded`'s catalog and model cards at its scenario's memory
    headroom and confidence (empty at first)."""
    scenario = loaded.scenario
    key = (id(loaded.catalog), id(loaded.models), scenario.policy.memory_headroom,
           scenario.confidence)
    if key in _SHARED:
        _SHARED.move_to_end(key)
    else:
        _SHARED[key] = (loaded.catalog, loaded.models, {})
        while len(_SHARED) > SHARED_KEPT:
            _SHARED.popitem(last=False)
    return _SHARED[key][2]


def forget() -> None:
    """Drop every shared cache (a test's from-scratch build)."""
    _SHARED.clear()
