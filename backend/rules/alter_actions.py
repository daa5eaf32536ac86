"""Transaction statuses and AlterTransaction actions: parse, validate, apply. One engine for
table transactions (pylance's) and batch transactions (the console's), and for the builder.

* Statuses are reported upper-case (``SUCCEEDED``), as pylance reports them; input is
  case-insensitive and accepts PascalCase or snake_case (``Succeeded``, ``succeeded``).
* :func:`parse_actions` checks a request's actions up front (numbered from 1 in every
  message): exactly one kind per action, a known status, a non-empty key, a value for a set,
  known modes, at most one set-status, each key at most once.
* :func:`apply_actions` applies them all or none to a status and properties: a status change
  must pass the transaction kind's :data:`StatusPolicy`; read-only properties (what Lance or
  the batch recorded) cannot change; a Fail-mode set of an existing key raises
  ``ConcurrentModificationError``; a Fail-mode unset of a missing key ``InvalidInputError``;
  Skip modes leave the value as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lance_namespace.errors import (
    ConcurrentModificationError,
    InvalidInputError,
    LanceNamespaceError,
)
from lance_namespace_urllib3_client.models import (
    AlterTransactionAction,
    AlterTransactionSetProperty,
    AlterTransactionSetStatus,
    AlterTransactionUnsetProperty,
)

from backend.text import capital

QUEUED = "QUEUED"
RUNNING = "RUNNING"
SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
CANCELED = "CANCELED"
TRANSACTION_STATUSES: tuple[str, ...] = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELED)
TERMINAL_STATUSES: frozenset[str] = frozenset({SUCCEEDED, FAILED, CANCELED})
_STATUS_ALIASES = {"CANCELLED": CANCELED}

SET_STATUS = "set_status"
SET_PROPERTY = "set_property"
UNSET_PROPERTY = "unset_property"
ACTION_KINDS: tuple[str, ...] = (SET_STATUS, SET_PROPERTY, UNSET_PROPERTY)
SET_MODES: tuple[str, ...] = ("OVERWRITE", "FAIL", "SKIP")
UNSET_MODES: tuple[str, ...] = ("SKIP", "FAIL")
DEFAULT_MODE = {SET_PROPERTY: "OVERWRITE", UNSET_PROPERTY: "SKIP"}
MAX_ACTIONS = 100


def normalize_status(status: Any) -> str:
    """``"Succeeded"``, ``"succeeded"``, ``"SUCCEEDED"`` -> ``"SUCCEEDED"``; unknown ->
    ``InvalidInputError``."""
    if not isinstance(status, str) or not status.strip():
        raise InvalidInputError("a transaction status must be a non-empty string")
    key = status.strip().replace("-", "_").upper()
    key = _STATUS_ALIASES.get(key, key)
    if key not in TRANSACTION_STATUSES:
        valid = ", ".join(s.capitalize() for s in TRANSACTION_STATUSES)
        raise InvalidInputError(f"unknown transaction status {status!r}; valid: {valid}")
    return key


def normalize_mode(value: Any, kind: str) -> str:
    """A property action's mode, upper-case (``Overwrite``/``fail``/``SKIP``); the spec default
    when ``None``."""
    allowed = SET_MODES if kind == SET_PROPERTY else UNSET_MODES
    if value is None:
        return DEFAULT_MODE[kind]
    mode = str(value).strip().replace("-", "").replace("_", "").upper()
    if mode not in allowed:
        what = "set-property" if kind == SET_PROPERTY else "unset-property"
        valid = ", ".join(m.capitalize() for m in allowed)
        raise InvalidInputError(f"unknown {what} mode {value!r}; valid: {valid}")
    return mode


# -- status policies ------------------------------------------------------------------------------
# ``policy(current, new)`` -> why the change is refused, or ``None`` when allowed. Setting the
# current status again is always allowed (a no-op).
StatusPolicy = Callable[[str, str], "str | None"]

# Table transactions: work never goes back to QUEUED or RUNNING once it moved on; finished
# transactions may be re-labelled (an operator marking a committed change CANCELED after
# rolling it back, say).
TABLE_TRANSITIONS: dict[str, frozenset[str]] = {
    QUEUED: frozenset({RUNNING, SUCCEEDED, FAILED, CANCELED}),
    RUNNING: frozenset({SUCCEEDED, FAILED, CANCELED}),
    SUCCEEDED: frozenset({FAILED, CANCELED}),
    FAILED: frozenset({SUCCEEDED, CANCELED}),
    CANCELED: frozenset({SUCCEEDED, FAILED}),
}


def table_policy(current: str, new: str) -> str | None:
    """Status changes of a table transaction (see :data:`TABLE_TRANSITIONS`)."""
    if new in TABLE_TRANSITIONS[current]:
        return None
    return f"{new} is only valid before the transaction has " + (
        "started" if new == QUEUED and current == RUNNING else "finished"
    )


def batch_policy(current: str, new: str) -> str | None:
    """Status changes of a batch commit: only cancelling a running batch (before its commit
    point; it then rolls back). A finished batch's outcome is final."""
    if current == RUNNING and new == CANCELED:
        return None
    if current in TERMINAL_STATUSES:
        return f"{current} is final: the batch's outcome cannot change"
    return "only cancelling a running batch is possible; its outcome is decided by the commit"


# -- actions ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Action:
    """One validated action; ``number`` counts from 1 in the request."""

    number: int
    kind: str
    status: str | None = None
    key: str | None = None
    value: str | None = None
    mode: str | None = None

    def describe(self) -> str:
        if self.kind == SET_STATUS:
            return f"set status {self.status}"
        if self.kind == SET_PROPERTY:
            return f"set property {self.key} = {self.value!r} (if it exists: {str(self.mode).capitalize()})"
        return f"unset property {self.key} (if it is missing: {str(self.mode).capitalize()})"

    def to_model(self) -> AlterTransactionAction:
        if self.kind == SET_STATUS:
            return AlterTransactionAction.model_validate(
                {
                    "set_status_action": AlterTransactionSetStatus(
                        status=str(self.status).capitalize()
                    )
                }
            )
        if self.kind == SET_PROPERTY:
            return AlterTransactionAction.model_validate(
                {
                    "set_property_action": AlterTransactionSetProperty(
                        key=self.key, value=self.value, mode=str(self.mode).capitalize()
                    )
                }
            )
        return AlterTransactionAction.model_validate(
            {
                "unset_property_action": AlterTransactionUnsetProperty(
                    key=self.key, mode=str(self.mode).capitalize()
                )
            }
        )

    def to_wire(self) -> dict[str, Any]:
        """The spec's JSON shape (camelCase, PascalCase values)."""
        return self.to_model().to_dict()


def _fields(action: Any) -> list[tuple[str, Any]]:
    if isinstance(action, Mapping):
        try:
            action = AlterTransactionAction.from_dict(dict(action))
        except Exception as exc:  # noqa: BLE001 - pydantic ValidationError, ValueError
            raise InvalidInputError(f"not an AlterTransactionAction: {exc}") from None
    return [
        (kind, getattr(action, f"{kind}_action", None))
        for kind in ACTION_KINDS
        if getattr(action, f"{kind}_action", None) is not None
    ]


def _parse_one(number: int, action: Any) -> Action:
    given = _fields(action)
    if len(given) != 1:
        raise InvalidInputError(
            f"action {number}: exactly one of setStatusAction, setPropertyAction, "
            "unsetPropertyAction must be set"
        )
    kind, body = given[0]
    try:
        if kind == SET_STATUS:
            if body.status is None:
                raise InvalidInputError("setStatusAction needs a status")
            return Action(number, kind, status=normalize_status(body.status))
        key = body.key
        if not isinstance(key, str) or not key.strip():
            raise InvalidInputError("a property action needs a non-empty key")
        mode = normalize_mode(body.mode, kind)
        if kind == SET_PROPERTY:
            if body.value is None:
                raise InvalidInputError(
                    "setPropertyAction needs a value (use unsetPropertyAction to remove a key)"
                )
            return Action(number, kind, key=key, value=str(body.value), mode=mode)
        return Action(number, kind, key=key, mode=mode)
    except LanceNamespaceError as exc:
        raise InvalidInputError(f"action {number}: {exc}") from None


def parse_actions(actions: Sequence[Any] | None) -> list[Action]:
    """Every action of a request, validated (``InvalidInputError`` naming action N)."""
    actions = list(actions or [])
    if not actions:
        raise InvalidInputError("AlterTransaction needs at least one action")
    if len(actions) > MAX_ACTIONS:
        raise InvalidInputError(f"AlterTransaction takes at most {MAX_ACTIONS} actions")
    parsed = [_parse_one(i, a) for i, a in enumerate(actions, start=1)]
    statuses = [a for a in parsed if a.kind == SET_STATUS]
    if len(statuses) > 1:
        raise InvalidInputError(
            f"action {statuses[1].number}: only one set-status action per request"
        )
    seen: dict[str, Action] = {}
    for a in parsed:
        if a.key is None:
            continue
        if a.key in seen:
            raise InvalidInputError(
                f"action {a.number}: property {a.key!r} is already changed by action "
                f"{seen[a.key].number}"
            )
        seen[a.key] = a
    return parsed


def action_problems(actions: Sequence[Any]) -> list[str]:
    """For the builder: the problem :func:`parse_actions` reports (empty list: fine)."""
    try:
        parse_actions(actions)
    except InvalidInputError as exc:
        return [capital(str(exc))]
    return []


def apply_actions(
    actions: Sequence[Action],
    status: str,
    properties: Mapping[str, str],
    *,
    readonly: Iterable[str] = (),
    policy: StatusPolicy,
    subject: str = "the transaction",
) -> tuple[str, dict[str, str], list[Action]]:
    """Apply all ``actions`` or none: ``(new status, new properties, actions that changed
    something)``. Raises before anything is applied; see the module docstring."""
    status = normalize_status(status)
    props = {str(k): str(v) for k, v in properties.items()}
    locked = set(readonly)
    effective: list[Action] = []
    for a in actions:
        where = f"action {a.number} ({a.describe()})"
        if a.kind == SET_STATUS:
            assert a.status is not None
            if a.status == status:
                effective.append(a)
                continue
            why = policy(status, a.status)
            if why:
                raise InvalidInputError(
                    f"{where}: {subject} cannot change status from {status} to {a.status}: {why}"
                )
            status = a.status
            effective.append(a)
            continue
        key = str(a.key)
        exists = key in props
        if a.kind == SET_PROPERTY:
            if exists and a.mode == "SKIP":
                continue
            if key in locked:
                raise InvalidInputError(
                    f"{where}: property {key!r} is recorded by {subject}'s commit and cannot be "
                    "changed; nothing was changed"
                )
            if exists and a.mode == "FAIL":
                raise ConcurrentModificationError(
                    f"{where}: property {key!r} already exists (mode Fail); nothing was changed"
                )
            props[key] = str(a.value)
            effective.append(a)
            continue
        if key in locked:
            raise InvalidInputError(
                f"{where}: property {key!r} is recorded by {subject}'s commit and cannot be "
                "removed; nothing was changed"
            )
        if not exists:
            if a.mode == "FAIL":
                raise InvalidInputError(
                    f"{where}: property {key!r} does not exist (mode Fail); nothing was changed"
                )
            continue
        del props[key]
        effective.append(a)
    return status, props, effective


# -- builder helpers (plain dicts in the UI's session state) ----------------------------------------
def set_status_action(status: str) -> dict[str, Any]:
    return {"setStatusAction": {"status": status}}


def set_property_action(key: str, value: str, mode: str = "Overwrite") -> dict[str, Any]:
    return {"setPropertyAction": {"key": key, "value": value, "mode": mode}}


def unset_property_action(key: str, mode: str = "Skip") -> dict[str, Any]:
    return {"unsetPropertyAction": {"key": key, "mode": mode}}


def describe_action(action: Any, number: int = 1) -> str:
    """One line for an action (validated or not)."""
    try:
        return _parse_one(number, action).describe()
    except InvalidInputError as exc:
        return f"invalid action: {exc}"


def to_models(actions: Sequence[Any]) -> list[AlterTransactionAction]:
    """Validated request models for ``actions`` (``InvalidInputError`` as :func:`parse_actions`)."""
    return [a.to_model() for a in parse_actions(actions)]
