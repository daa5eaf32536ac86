"""Files under a namespace root, or in the console's own stores, that the console finds are
not its own (a damaged or hand-written record, a journal of another format): they are left
where they are, neither acted on nor deleted, and each is said once per process in the log
(a listing that meets it at every read would otherwise repeat it)."""

from __future__ import annotations

import logging


class LeftOut:
    """The files of one kind left as they are in this process (``where in left``), and the
    one warning each gets."""

    def __init__(self, logger: logging.Logger, kind: str) -> None:
        self._logger = logger
        self._kind = kind
        self._said: set[str] = set()

    def say(self, where: str, why: str) -> None:
        """Say once per process that the ``kind`` at ``where`` is left as it is, and why."""
        if where not in self._said:
            self._said.add(where)
            self._logger.warning("%s %s left as it is: %s", self._kind, where[:200], why)

    def __contains__(self, where: object) -> bool:
        return where in self._said
