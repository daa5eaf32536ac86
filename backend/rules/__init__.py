"""Pure rules: checks with no I/O, each written once and used by every path."""
