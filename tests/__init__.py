"""The test suite, as packages: helpers import as `tests.<area>.<module>`, and mypy checks them."""
