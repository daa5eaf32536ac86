"""Small wording helpers shared by services and pages."""

from __future__ import annotations


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``1 version``, ``2 versions``, ``1 property``, ``3 properties`` (thousands separated)."""
    return f"{n:,} {singular if n == 1 else (many or singular + 's')}"


__all__ = ["plural"]
