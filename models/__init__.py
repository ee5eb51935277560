"""Domain schemas and the built-in catalog. Imports nothing of the solver."""
