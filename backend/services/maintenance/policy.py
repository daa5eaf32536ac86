"""A maintenance policy: what to maintain in one namespace, and when (no I/O here).

A policy holds up to three kinds of maintenance (:data:`KINDS`), each with its thresholds,
and per-table overrides. Its stored form (JSON, what :func:`policy_from_dict` reads)::

    {
      "kinds": {
        "compact":  {"small_share": 0.2, "deleted_share": 0.1, "small_fragment_rows": 524288},
        "optimize": {"unindexed_share": 0.05},
        "cleanup":  {"older_than_days": 7}
      },
      "tables": {
        "events":  {"cleanup": {"older_than_days": 30}},
        "scratch": {"compact": false, "optimize": false, "cleanup": false}
      }
    }

* ``compact`` a table when more than ``small_share`` of its fragments are small (under
  ``small_fragment_rows`` physical rows, and at least two of them), or more than
  ``deleted_share`` of its physical rows are deleted, and lance's compaction plan has work;
* ``optimize`` its indexes when an index misses more than ``unindexed_share`` of the rows;
* ``cleanup``: remove the files of versions older than ``older_than_days`` days; the latest
  version and every tagged version always stay (lance's ``cleanup_old_versions``).

A kind missing from ``kinds`` is off for the namespace. A table's override turns a kind off
(``false``) or on with its own settings (a mapping, merged over the namespace's settings of
that kind, or over the defaults when the namespace has it off; ``{}`` or ``true``: as the
namespace). Shares are fractions (``0.2`` for 20%).

:data:`DEFAULT_POLICY` applies where none is saved: the three kinds with the thresholds of
``backend.services.health`` (the health verdict's own: compact beyond 20% small fragments or
10% deleted rows, optimize beyond 5% unindexed rows) and cleanup keeping 7 days (what
lancedb's ``Table.optimize`` keeps by default), every tagged version and the latest.

:func:`policy_problems` lists every problem of a stored form in the user's terms;
:func:`policy_from_dict` raises them as one ``InvalidInputError``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.errors import invalid
from backend.rules import ids, version_ranges
from backend.spec.fields import is_number

from .. import health

COMPACT, OPTIMIZE, CLEANUP = "compact", "optimize", "cleanup"
KINDS: tuple[str, ...] = (COMPACT, OPTIMIZE, CLEANUP)
FORMAT = 1  # the stored form's version
TOP_KEYS = ("version", "kinds", "tables")
MAX_DAYS = version_ranges.MAX_KEEP_DAYS
MAX_TABLE_OVERRIDES = 10_000


@dataclass(frozen=True)
class CompactRule:
    """Compact when more than ``small_share`` of the fragments are small (under
    ``small_fragment_rows`` physical rows; at least two), or more than ``deleted_share`` of the
    physical rows are deleted."""

    small_share: float = health.COMPACT_SMALL_SHARE
    deleted_share: float = health.DELETED_SHARE
    small_fragment_rows: int = health.SMALL_FRAGMENT_ROWS


@dataclass(frozen=True)
class OptimizeRule:
    """Optimize the indexes when one misses more than ``unindexed_share`` of the rows."""

    unindexed_share: float = health.UNINDEXED_SHARE


@dataclass(frozen=True)
class CleanupRule:
    """Remove versions older than ``older_than_days`` (never the latest, never a tagged one)."""

    older_than_days: int = health.CLEANUP_KEEP_DAYS


RULES: dict[str, type] = {COMPACT: CompactRule, OPTIMIZE: OptimizeRule, CLEANUP: CleanupRule}
Rule = CompactRule | OptimizeRule | CleanupRule


@dataclass(frozen=True)
class Rules:
    """The kinds that apply to one table (``None``: off), with their thresholds."""

    compact: CompactRule | None = CompactRule()
    optimize: OptimizeRule | None = OptimizeRule()
    cleanup: CleanupRule | None = CleanupRule()

    def get(self, kind: str) -> Rule | None:
        return getattr(self, kind)

    def thresholds(self) -> health.Thresholds:
        """The health verdict's thresholds for these rules. A compaction or an optimize that
        is off keeps the default: its action is not taken anyway. A cleanup that is off keeps 0
        days: the health then reads what every old version holds from lance's one dry run,
        without a second one for the days' cut (``health._cleanup_keeping_days``), figures
        nothing would use."""
        compact = self.compact or CompactRule()
        optimize = self.optimize or OptimizeRule()
        return dataclasses.replace(
            health.DEFAULT_THRESHOLDS,
            small_fragment_rows=compact.small_fragment_rows,
            compact_small_share=compact.small_share,
            deleted_share=compact.deleted_share,
            unindexed_share=optimize.unindexed_share,
            cleanup_keep_days=self.cleanup.older_than_days if self.cleanup else 0,
        )


@dataclass(frozen=True)
class Policy:
    """A namespace's policy: the namespace's :class:`Rules` and per-table overrides
    (table name -> kind -> the settings given, or ``None``: off). See the module docstring."""

    rules: Rules = Rules()
    tables: Mapping[str, Mapping[str, Mapping[str, Any] | None]] = field(default_factory=dict)

    def rules_for(self, table: str) -> Rules:
        """The rules of table ``table``: the namespace's, with the table's overrides."""
        override = self.tables.get(table)
        if not override:
            return self.rules
        changed: dict[str, Any] = {}
        for kind, settings in override.items():
            if settings is None:
                changed[kind] = None
                continue
            base = self.rules.get(kind) or RULES[kind]()
            changed[kind] = dataclasses.replace(base, **dict(settings))
        return dataclasses.replace(self.rules, **changed)

    def to_dict(self) -> dict[str, Any]:
        """The stored form (see the module docstring)."""
        kinds = {
            kind: dataclasses.asdict(rule)
            for kind in KINDS
            if (rule := self.rules.get(kind)) is not None
        }
        tables = {
            name: {k: (dict(v) if v is not None else False) for k, v in override.items()}
            for name, override in sorted(self.tables.items())
        }
        return {"version": FORMAT, "kinds": kinds, "tables": tables}

    def describe(self) -> list[str]:
        """The policy in words, one line per kind, then one per table override."""
        lines = [_rule_text(kind, self.rules.get(kind)) for kind in KINDS]
        for name, override in sorted(self.tables.items()):
            parts = []
            for kind, settings in override.items():
                if settings is None:
                    parts.append(f"no {kind}")
                else:
                    rule = self.rules_for(name).get(kind)
                    parts.append(_rule_text(kind, rule))
            lines.append(f"table {name}: " + "; ".join(parts))
        return lines


DEFAULT_POLICY = Policy()


def _percent(share: float) -> str:
    return f"{share * 100:g}%"


def _rule_text(kind: str, rule: Rule | None) -> str:
    if rule is None:
        return f"{kind}: off"
    if isinstance(rule, CompactRule):
        return (
            f"compact when more than {_percent(rule.small_share)} of the fragments are small "
            f"(under {rule.small_fragment_rows:,} rows) or more than "
            f"{_percent(rule.deleted_share)} of the rows are deleted"
        )
    if isinstance(rule, OptimizeRule):
        return (
            f"optimize indexes when one misses more than {_percent(rule.unindexed_share)} of "
            "the rows"
        )
    return (
        f"clean up versions older than {rule.older_than_days} days (never the latest, never "
        "a tagged one)"
    )


# -- reading the stored form ------------------------------------------------------------------------


def _share_problem(where: str, name: str, value: Any) -> str | None:
    if not is_number(value):
        return f"{where} {name} must be a fraction from 0 to 1 (0.2 for 20%), not {value!r}"
    if not 0 <= value <= 1:
        hint = f" ({value / 100:g} for {value:g}%?)" if 1 < value <= 100 else ""
        return f"{where} {name} must be a fraction from 0 to 1 (0.2 for 20%), not {value:g}{hint}"
    return None


def _whole_problem(where: str, name: str, value: Any, low: int, high: int) -> str | None:
    if name == "older_than_days":  # the cleanup's own rule
        problem = version_ranges.keep_days_problem(value, name)
        return f"{where} {problem}" if problem else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{where} {name} must be a whole number from {low:,} to {high:,}, not {value!r}"
    if not low <= value <= high:
        return f"{where} {name} must be from {low:,} to {high:,}, not {value:,}"
    return None


# What each setting may be: a share, or a whole number in a range (with why the range).
_SETTINGS: dict[str, dict[str, tuple[str, int, int]]] = {
    COMPACT: {
        "small_share": ("share", 0, 1),
        "deleted_share": ("share", 0, 1),
        # a fragment at lance's compaction target is not small: compaction would leave it
        "small_fragment_rows": ("whole", 1, health.TARGET_ROWS_PER_FRAGMENT),
    },
    OPTIMIZE: {"unindexed_share": ("share", 0, 1)},
    CLEANUP: {"older_than_days": ("whole", 0, MAX_DAYS)},
}


def _settings(where: str, kind: str, raw: Any, problems: list[str]) -> dict[str, Any] | None | bool:
    """The settings of ``kind`` as given (``None``: off, ``True``: as they are), or
    ``False`` when they have problems (added to ``problems``)."""
    if raw is None or raw is False:
        return None
    if raw is True:
        return {}
    if not isinstance(raw, Mapping):
        example = json.dumps(dataclasses.asdict(RULES[kind]()))
        problems.append(
            f"{where} {kind} takes its settings (a mapping such as {example}), true or false, "
            f"not {raw!r}"
        )
        return False
    known = _SETTINGS[kind]
    ok = True
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in known:
            problems.append(
                f"{where} {kind}: unknown setting {name!r} (its settings are {', '.join(known)})"
            )
            ok = False
            continue
        what, low, high = known[name]
        problem = (
            _share_problem(f"{where} {kind}", name, value)
            if what == "share"
            else _whole_problem(f"{where} {kind}", name, value, low, high)
        )
        if problem:
            problems.append(problem)
            ok = False
        else:
            out[name] = int(value) if what == "whole" else float(value)
    return out if ok else False


def _unknown_kind(where: str, kind: Any) -> str:
    return f"{where}unknown maintenance kind {kind!r} (the kinds are {', '.join(KINDS)})"


def _parse(data: Any, problems: list[str]) -> Policy | None:
    if not isinstance(data, Mapping):
        problems.append(
            "a maintenance policy is a mapping with kinds (compact, optimize, cleanup) and "
            f"tables, not {type(data).__name__}"
        )
        return None
    for key in data:
        if key not in TOP_KEYS:
            problems.append(f"unknown key {key!r} in the policy (its keys are kinds and tables)")
    version = data.get("version", FORMAT)
    if version != FORMAT:
        problems.append(f"the policy is of format {version!r}; this console reads format {FORMAT}")
    kinds_raw = data.get("kinds", {})
    if kinds_raw is None:
        kinds_raw = {}
    if not isinstance(kinds_raw, Mapping):
        problems.append(
            f"the policy's kinds must be a mapping of kind -> settings, not {kinds_raw!r}"
        )
        kinds_raw = {}
    rules: dict[str, Rule | None] = dict.fromkeys(KINDS)
    for kind, raw in kinds_raw.items():
        if kind not in RULES:
            problems.append(_unknown_kind("", kind))
            continue
        settings = _settings("namespace:", kind, raw, problems)
        if isinstance(settings, dict):
            rules[kind] = RULES[kind](**settings)
    tables_raw = data.get("tables", {}) or {}
    tables: dict[str, dict[str, dict[str, Any] | None]] = {}
    if not isinstance(tables_raw, Mapping):
        problems.append(
            f"the policy's tables must be a mapping of table name -> kinds, not {tables_raw!r}"
        )
        tables_raw = {}
    if len(tables_raw) > MAX_TABLE_OVERRIDES:
        problems.append(
            f"the policy overrides {len(tables_raw):,} tables; at most {MAX_TABLE_OVERRIDES:,}"
        )
        tables_raw = {}
    for name, override in tables_raw.items():
        problem = ids.part_problem(name, what="table")
        if problem:
            problems.append(f"tables: {problem}")
            continue
        if not isinstance(override, Mapping):
            problems.append(
                f"table {name}: the overrides are a mapping of kind -> settings or false, "
                f"not {override!r}"
            )
            continue
        kept: dict[str, dict[str, Any] | None] = {}
        for kind, raw in override.items():
            if kind not in RULES:
                problems.append(_unknown_kind(f"table {name}: ", kind))
                continue
            settings = _settings(f"table {name}:", kind, raw, problems)
            if settings is not False:
                kept[kind] = settings if isinstance(settings, dict) else None
        if kept:
            tables[name] = kept
    if problems:
        return None
    return Policy(Rules(**rules), tables)  # type: ignore[arg-type]


def policy_problems(data: Any) -> list[str]:
    """Every problem of a policy's stored form, in the user's terms (empty: it is valid)."""
    problems: list[str] = []
    _parse(data, problems)
    return problems


def policy_from_dict(data: Any) -> Policy:
    """The policy of a stored form; ``InvalidInputError`` naming every problem
    (:func:`policy_problems`)."""
    if isinstance(data, Policy):
        return data
    problems: list[str] = []
    policy = _parse(data, problems)
    if policy is None:
        raise invalid("The maintenance policy is not valid: " + "; ".join(problems) + ".")
    return policy
