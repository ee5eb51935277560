"""One module per constraint family. Each posts its CP-SAT constraints under a stable group name,
guarded by that group's assumption literal, so explanations can name the rule that binds."""
