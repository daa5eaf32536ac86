"""Maintenance policies (backend.services.maintenance.policy): the stored form read back, the
default policy against the health verdict's thresholds, per-table overrides, and the bad-input
catalogue: every nonsense value refused with a message in the user's terms, all problems of a
form named at once."""

from __future__ import annotations

import json
import math

import pytest
from lance_namespace.errors import InvalidInputError

from backend.services import health
from backend.services import maintenance as mt


def test_default_policy_is_the_health_thresholds_and_a_week_of_versions() -> None:
    rules = mt.DEFAULT_POLICY.rules
    assert rules.compact == mt.CompactRule(
        small_share=health.COMPACT_SMALL_SHARE,
        deleted_share=health.DELETED_SHARE,
        small_fragment_rows=health.SMALL_FRAGMENT_ROWS,
    )
    assert rules.optimize == mt.OptimizeRule(unindexed_share=health.UNINDEXED_SHARE)
    assert rules.cleanup == mt.CleanupRule(older_than_days=7)
    assert rules.thresholds() == health.DEFAULT_THRESHOLDS
    assert mt.DEFAULT_POLICY.tables == {}
    text = "\n".join(mt.DEFAULT_POLICY.describe())
    assert "more than 20% of the fragments are small" in text
    assert "older than 7 days (never the latest, never a tagged one)" in text


def test_stored_form_round_trips_through_json() -> None:
    form = {
        "kinds": {
            "compact": {"small_share": 0.3, "small_fragment_rows": 1000},
            "cleanup": {"older_than_days": 14},
        },
        "tables": {
            "events": {"cleanup": {"older_than_days": 30}, "optimize": {}},
            "scratch": {"compact": False},
        },
    }
    policy = mt.policy_from_dict(form)
    again = mt.policy_from_dict(json.loads(json.dumps(policy.to_dict())))
    assert again == policy
    assert policy.rules.optimize is None  # not listed: off for the namespace
    assert policy.rules.compact == mt.CompactRule(
        small_share=0.3, deleted_share=health.DELETED_SHARE, small_fragment_rows=1000
    )
    # a table's override merges over the namespace's settings (or the defaults when off)
    events = policy.rules_for("events")
    assert events.cleanup == mt.CleanupRule(30)
    assert events.optimize == mt.OptimizeRule()  # on, with the defaults
    assert events.compact == policy.rules.compact
    scratch = policy.rules_for("scratch")
    assert scratch.compact is None and scratch.cleanup == mt.CleanupRule(14)
    assert policy.rules_for("other") == policy.rules
    # the thresholds the health verdict reads for a table follow its rules
    limits = policy.rules_for("events").thresholds()
    assert (limits.compact_small_share, limits.small_fragment_rows) == (0.3, 1000)
    assert limits.cleanup_keep_days == 30  # the table's own cleanup
    assert policy.rules_for("scratch").thresholds().cleanup_keep_days == 14
    # cleanup off: 0 days, so the health reads no second dry run of lance's cleanup for it
    # (``test_the_cleanup_keeping_days_asks_lance_only_where_the_cut_falls_among_old_versions``)
    off = mt.policy_from_dict({"kinds": {"compact": True}}).rules
    assert off.cleanup is None and off.thresholds().cleanup_keep_days == 0
    # true: on as the namespace; a whole float is a whole number
    assert mt.policy_from_dict({"kinds": {"optimize": True}}).rules.optimize == mt.OptimizeRule()
    days = mt.policy_from_dict({"kinds": {"cleanup": {"older_than_days": 3.0}}}).rules.cleanup
    assert days == mt.CleanupRule(3) and isinstance(days.older_than_days, int)


# (the stored form, what the one message must say)
BAD_FORMS = [
    ([], "is a mapping with kinds (compact, optimize, cleanup) and tables, not list"),
    ("compact", "not str"),
    ({"kinds": {"vacuum": {}}}, "unknown maintenance kind 'vacuum' (the kinds are compact, optimize, cleanup)"),
    ({"kinds": {"compact": {"small": 0.2}}}, "compact: unknown setting 'small' (its settings are small_share, deleted_share, small_fragment_rows)"),
    ({"kinds": {"compact": {"small_share": 20}}}, "small_share must be a fraction from 0 to 1 (0.2 for 20%), not 20 (0.2 for 20%?)"),
    ({"kinds": {"compact": {"small_share": -0.1}}}, "small_share must be a fraction from 0 to 1 (0.2 for 20%), not -0.1"),
    ({"kinds": {"compact": {"deleted_share": math.nan}}}, "deleted_share must be a fraction from 0 to 1 (0.2 for 20%), not nan"),
    ({"kinds": {"compact": {"deleted_share": "10%"}}}, "deleted_share must be a fraction from 0 to 1 (0.2 for 20%), not '10%'"),
    ({"kinds": {"optimize": {"unindexed_share": True}}}, "unindexed_share must be a fraction from 0 to 1 (0.2 for 20%), not True"),
    ({"kinds": {"optimize": {"unindexed_share": math.inf}}}, "not inf"),
    ({"kinds": {"compact": {"small_fragment_rows": 0}}}, "small_fragment_rows must be from 1 to 1,048,576, not 0"),
    ({"kinds": {"compact": {"small_fragment_rows": 2_000_000}}}, "small_fragment_rows must be from 1 to 1,048,576, not 2,000,000"),
    ({"kinds": {"compact": {"small_fragment_rows": 10.5}}}, "small_fragment_rows must be a whole number from 1 to 1,048,576, not 10.5"),
    ({"kinds": {"cleanup": {"older_than_days": -1}}}, "older_than_days must be from 0 to 36,500 days, not -1"),
    ({"kinds": {"cleanup": {"older_than_days": 1.5}}}, "older_than_days must be a whole number of days from 0 to 36,500, not 1.5"),
    ({"kinds": {"cleanup": {"older_than_days": "7"}}}, "older_than_days must be a whole number of days from 0 to 36,500, not '7'"),
    ({"kinds": {"cleanup": 7}}, 'cleanup takes its settings (a mapping such as {"older_than_days": 7}), true or false, not 7'),
    ({"kinds": ["compact"]}, "the policy's kinds must be a mapping of kind -> settings, not ['compact']"),
    ({"kinds": {}, "schedule": "daily"}, "unknown key 'schedule' in the policy (its keys are kinds and tables)"),
    ({"version": 2}, "the policy is of format 2; this console reads format 1"),
    ({"tables": ["events"]}, "the policy's tables must be a mapping of table name -> kinds, not ['events']"),
    ({"tables": {"events": True}}, "table events: the overrides are a mapping of kind -> settings or false, not True"),
    ({"tables": {"events": {"reindex": {}}}}, "table events: unknown maintenance kind 'reindex'"),
    ({"tables": {"events": {"cleanup": {"older_than_days": -3}}}}, "table events: cleanup older_than_days must be from 0 to 36,500 days, not -3"),
    ({"tables": {"a/b": {"compact": False}}}, "contains a path separator"),
    ({"tables": {"": {"compact": False}}}, "a table name must not be empty"),
    ({"tables": {" x": {"compact": False}}}, "starts or ends with white space"),
]  # fmt: skip


@pytest.mark.parametrize(("form", "says"), BAD_FORMS)
def test_bad_policies_are_refused_in_the_users_terms(form, says) -> None:
    problems = mt.policy_problems(form)
    assert len(problems) == 1, problems
    assert says in problems[0], problems
    with pytest.raises(InvalidInputError) as caught:
        mt.policy_from_dict(form)
    message = str(caught.value)
    assert message.startswith("The maintenance policy is not valid: ")
    assert says in message
    assert "Traceback" not in message and "KeyError" not in message


def test_every_problem_of_a_form_is_named_at_once() -> None:
    form = {
        "kinds": {"compact": {"small_share": 2}, "vacuum": {}},
        "tables": {"t": {"cleanup": {"older_than_days": -1}, "x": False}},
    }
    problems = mt.policy_problems(form)
    assert len(problems) == 4, problems
    assert [p.split(" ")[0] for p in problems] == ["namespace:", "unknown", "table", "table"]
