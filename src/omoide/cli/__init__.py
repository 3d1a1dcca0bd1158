"""The `omoide` command line: every typer command group, one module each,
mounted by `omoide.cli.app`."""
