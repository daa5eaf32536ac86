"""The demo's embedding: 64-dimensional feature hashes of a text's tokens, L2-normalised, so
similar docstrings really are close. The demo tables' vectors are made with it
(``backend.demo.data``) and their ``embedding.function`` property names it
(:data:`EMBEDDING_FUNCTION`), so search (``backend.services.search``) embeds a typed text
query the same way. It needs numpy only: any layer may call it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable

import numpy as np

VECTOR_DIM = 64
EMBEDDING_FUNCTION = "lance-console/feature-hash-64"

_TOKEN = re.compile(r"[a-z_][a-z0-9_]+")
_TOKEN_CACHE: dict[str, tuple[int, float]] = {}


def _token_slot(token: str) -> tuple[int, float]:
    slot = _TOKEN_CACHE.get(token)
    if slot is None:
        h = zlib.crc32(token.encode("utf-8"))
        slot = (h % VECTOR_DIM, 1.0 if (h >> 16) & 1 else -1.0)
        _TOKEN_CACHE[token] = slot
    return slot


_STOP_WORDS_TEXT = """
a an and any are as at be been but by can do does for from has have if in into is it its may
more no not of on one or other same see should so such than that the their them then there
these this to use used uses using was when which will with would you
"""
_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def embed(texts: Iterable[str]) -> np.ndarray:
    """Feature-hash each text's tokens into ``VECTOR_DIM`` floats, L2-normalised (deterministic).

    Tokens are lower-case words without stop words, weighted ``1 + log(count)``; each token
    lands in one of the dimensions (crc32) with a hashed sign.
    """
    texts = list(texts)
    out = np.zeros((len(texts), VECTOR_DIM), dtype=np.float32)
    for row, text in enumerate(texts):
        counts: dict[str, int] = {}
        for token in _TOKEN.findall(text.lower()):
            if token not in _STOP_WORDS:
                counts[token] = counts.get(token, 0) + 1
        for token, count in (counts or {"empty": 1}).items():
            idx, sign = _token_slot(token)
            out[row, idx] += sign * (1.0 + np.log(count))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms
