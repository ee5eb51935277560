"""The cost/time Pareto front: the walk (front), its pruned models (pruning), files (export),
charts (plot) and the interactive page (html)."""
