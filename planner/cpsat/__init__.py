"""CP-SAT assembly and solving. `CpSolver` never leaves this package."""
