"""Query vectors made from text: the embedding a table declares (``embedding.function``) and
running it here."""

from __future__ import annotations

from lance_namespace.errors import InvalidInputError

from backend.demo import embedding as demo


def embedding_of(properties: dict[str, str] | None) -> str | None:
    """The embedding a table declares in its ``embedding.function`` property, if the console
    can run it here (``backend.demo.embedding``'s feature hashing)."""
    name = (properties or {}).get("embedding.function")
    return name if name in EMBEDDINGS else None


def embed_text(properties: dict[str, str] | None, text: str) -> list[float]:
    """``text`` embedded with the table's own embedding (see :func:`embedding_of`)."""
    name = embedding_of(properties)
    if name is None:
        raise InvalidInputError(
            "this table does not say how its vectors were made (no known embedding.function "
            "property): pick a row or paste a vector"
        )
    return EMBEDDINGS[name](text)


def _feature_hash(text: str) -> list[float]:
    return [float(x) for x in demo.embed([text])[0]]


EMBEDDINGS = {demo.EMBEDDING_FUNCTION: _feature_hash}
