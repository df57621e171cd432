"""The skincare shop processes: composition roots, settings, logging and the CLI."""
