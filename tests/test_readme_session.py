"""README.md's "Use from Python" session runs as printed, on a fresh local namespace.

The first fenced ``python`` block under the first heading mentioning Python is executed in an
empty temporary working directory (so any relative namespace path in it is brand new). The
effects are then read back through a separate connection: the snippet must have connected,
declared a table, built an index, printed that index's stats and a recall check.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lance_namespace import (
    CountTableRowsRequest,
    DescribeTableIndexStatsRequest,
    DescribeTableRequest,
    LanceNamespace,
    ListNamespacesRequest,
    ListTableIndicesRequest,
    ListTablesRequest,
)

import backend

README = Path(__file__).resolve().parents[1] / "README.md"
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.*)$")
FENCE_OPEN = re.compile(r"^```\s*python\s*$", re.IGNORECASE)


def python_session(markdown: str) -> str:
    """The first ```python block after the first heading whose title contains "Python"."""
    lines = markdown.splitlines()
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if (m := HEADING.match(line)) and "python" in m.group("title").lower()
        ),
        None,
    )
    if start is None:
        raise LookupError("README.md has no heading mentioning Python")
    for i in range(start + 1, len(lines)):
        if FENCE_OPEN.match(lines[i].strip()):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            if end is None:
                raise LookupError(f"README.md: the python block at line {i + 1} is not closed")
            return "\n".join(lines[i + 1 : end]) + "\n"
    raise LookupError(f"README.md: no ```python block after line {start + 1}")


def test_python_session_extraction() -> None:
    md = (
        "# Title\n```python\nprint('not this')\n```\n"
        "## Use from Python\nSome text.\n```\nshell block\n```\n"
        "```python\nx = 1\nprint(x)\n```\n```python\nprint('nor this')\n```\n"
    )
    assert python_session(md) == "x = 1\nprint(x)\n"
    with pytest.raises(LookupError):
        python_session("# Only shell\n```\nls\n```\n")


def _namespace_roots(cwd: Path) -> list[Path]:
    """Directory namespaces created under ``cwd`` (each keeps a ``__manifest`` table)."""
    return sorted(p.parent for p in cwd.rglob("__manifest") if p.is_dir())


def _walk(ns: LanceNamespace, ns_id: list[str]) -> list[list[str]]:
    """Every table id below ``ns_id`` (recursively)."""
    tables = [[*ns_id, t] for t in ns.list_tables(ListTablesRequest(id=ns_id)).tables]
    for child in ns.list_namespaces(ListNamespacesRequest(id=ns_id)).namespaces:
        tables.extend(_walk(ns, [*ns_id, child]))
    return tables


def test_readme_python_session_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = python_session(README.read_text(encoding="utf-8"))
    except (OSError, LookupError) as exc:
        pytest.fail(f"README.md must show a Python session under a 'Python' heading: {exc}")

    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{README}:python-session", "exec"), {"__name__": "__readme__"})
    printed = capsys.readouterr().out
    assert printed.strip(), "the README session prints nothing"

    roots = _namespace_roots(tmp_path)
    assert len(roots) == 1, f"expected one fresh local namespace under the cwd, found {roots}"
    ns = backend.connect(str(roots[0]))
    tables = _walk(ns, [])
    assert tables, "the README session created no table"

    declared = [
        t
        for t in tables
        if ns.describe_table(DescribeTableRequest(id=t, check_declared=True)).is_only_declared
    ]
    assert declared, "the README session declares no table"

    stats_seen = []
    for t in tables:
        if t in declared:
            continue
        for index in ns.list_table_indices(ListTableIndicesRequest(id=t)).indexes:
            stats = ns.describe_table_index_stats(
                DescribeTableIndexStatsRequest(id=t, index_name=index.index_name)
            )
            assert stats.num_indexed_rows and stats.num_indexed_rows > 0
            stats_seen.append(stats)
    assert stats_seen, "the README session builds no index"
    assert re.search(r"recall@10 [01]\.\d\d \(standard deviation \d\.\d\d\)", printed), (
        f"the README session does not print a recall check; it printed:\n{printed}"
    )
    assert any(
        re.search(rf"num_indexed_rows\W+{s.num_indexed_rows}\b", printed) for s in stats_seen
    ), f"the README session does not print the index stats; it printed:\n{printed}"
    # The lifecycle part: tagged, restored, cleaned up, renamed.
    assert ["docs", "notes_2026"] in tables and ["docs", "notes"] not in tables
    from backend.services import tags as tagsv

    assert list(tagsv.list_tags(ns, ["docs", "notes_2026"])["tag"]) == ["indexed"]
    assert "cleanup deletes [1, 3], keeps tagged {2: ['indexed']}" in printed
    assert ns.count_table_rows(CountTableRowsRequest(id=["docs", "notes_2026"])).count == 200
