"""Reading a field of a spec model (the generated client's models) or of its dict form: the
console takes either wherever a request or a response is passed in."""

from __future__ import annotations

from typing import Any


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` of a dict, else the attribute ``name``; ``default`` when it is missing."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)
