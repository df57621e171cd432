"""The `skincare` command line."""
