"""The `plan` command: a thin typer layer over functions tests and programs call directly."""
