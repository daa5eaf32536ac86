"""Arrow: types (printed forms, import type rules) and IPC streams."""
