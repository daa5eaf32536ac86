"""``components.writes``: the one write path. Every page write runs through ``perform``, which
runs its after-steps once; no page or component calls a write any other way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import backend
from backend.services import versions as vsv
from backend.spec import operations
from components import state
from tests.ui.conftest import REPO, alerts, assert_no_exception, figures, texts

# The console's own write functions besides the namespace's write operations
# (``operations.WRITE_OPS``), by the name the pages and components import their module as.
SERVICE_WRITES = {
    "jobs": {"submit", "cancel", "rerun", "annotate"},
    "build_jobs": {"mark_dropped", "start_build", "run_build_job"},
    "batch_builder": {"commit", "stage_change", "discard_staged", "alter_transaction"},
    "txn_guide": {"commit_watched", "fault_watched", "conflict_watched", "reset", "advance"},
    "nsv": {"declare_and_check"},
    "lc": {"restore_version", "delete_versions", "run_cleanup", "answer_rebuild_offer"},
    "rsv": {"delete_rows", "update_rows", "upsert_rows"},
    "mt": {"save_policy", "reset_policy"},
    "imports": {"import_table"},
    "transfer": {"run_import"},
    "writes": {"start_task", "submit_job"},
    "conns": {"save_connection", "delete_connection"},
    "session": {"create_directory"},
}
# ``Write.call``: a described write run by hand (``perform`` runs it).
WRITE_RUNS = {"call"}
# After-steps only ``perform`` takes (a page calling one repeats it).
AFTER_STEPS = {
    "st": {"rerun"},
    "feedback": {"flash"},
    "state": {"reset_forms", "follow_job"},
    "tables": {"go_to"},
}
AFTER_STEP_NAMES = {"invalidate_tables", "invalidate"}
OUTSIDE = {"components/writes.py"}  # perform itself


def _is_write(node: ast.AST) -> bool:
    """A reference to a write function: ``x.<namespace write>``, ``<module>.<service
    write>``, or a described write's ``x.call``."""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr in operations.WRITE_OPS or node.attr in WRITE_RUNS:
        return True
    base = node.value.id if isinstance(node.value, ast.Name) else None
    return base is not None and node.attr in SERVICE_WRITES.get(base, ())


def _is_write_call(node: ast.AST) -> bool:
    """``Write(...)`` or ``writes.Write(...)``: a write described, for ``perform`` to run."""
    func = getattr(node, "func", None)
    return isinstance(node, ast.Call) and (
        (isinstance(func, ast.Name) and func.id == "Write")
        or (isinstance(func, ast.Attribute) and func.attr == "Write")
    )


def _write_fns(tree: ast.Module) -> set[str]:
    """The functions of a module that a ``Write`` runs: named as a Write's ``fn`` (first
    argument or ``fn=``), and every function of the module those call (their helpers)."""
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    found: set[str] = set()
    for call in ast.walk(tree):
        if _is_write_call(call):
            assert isinstance(call, ast.Call)
            fn = call.args[0] if call.args else None
            fn = next((k.value for k in call.keywords if k.arg == "fn"), fn)
            if isinstance(fn, ast.Name):
                found.add(fn.id)
    todo = list(found)
    while todo:
        node = defs.get(todo.pop())
        for inner in ast.walk(node) if node is not None else ():
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
                name = inner.func.id
                if name in defs and name not in found:
                    found.add(name)
                    todo.append(name)
    return found


def _parents(tree: ast.Module) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _inside(node: ast.AST, parents: dict[ast.AST, ast.AST], test) -> bool:
    while node in parents:
        node = parents[node]
        if test(node):
            return True
    return False


def write_outside_perform(path: Path, text: str) -> list[str]:
    """Where a module calls a write other than through ``perform``: a write function
    referenced outside a ``Write(...)`` and outside the functions a Write runs, and (pages)
    an after-step taken by hand."""
    tree = ast.parse(text)
    parents = _parents(tree)
    runs = _write_fns(tree)
    page = path.parts[0] == "app"
    found = []
    for node in ast.walk(tree):
        if _is_write(node) and not _inside(node, parents, _is_write_call):
            in_fn = _inside(
                node,
                parents,
                lambda n: isinstance(n, ast.FunctionDef) and n.name in runs,
            )
            if not in_fn:
                found.append(f"{path}:{node.lineno} {ast.unparse(node)}")
        if page and isinstance(node, ast.Call):
            func = node.func
            base = getattr(getattr(func, "value", None), "id", None)
            if (
                isinstance(func, ast.Attribute) and func.attr in AFTER_STEPS.get(base or "", ())
            ) or (isinstance(func, ast.Name) and func.id in AFTER_STEP_NAMES):
                found.append(f"{path}:{node.lineno} {ast.unparse(func)} (an after-step)")
    return found


def product_modules() -> list[Path]:
    files = [*sorted((REPO / "app").rglob("*.py")), *sorted((REPO / "components").rglob("*.py"))]
    return [p.relative_to(REPO) for p in files if str(p.relative_to(REPO)) not in OUTSIDE]


def test_no_page_or_component_writes_outside_perform() -> None:
    found = [
        where
        for path in product_modules()
        for where in write_outside_perform(path, (REPO / path).read_text())
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "feedback.run(ns.drop_table_index, request)",
        "ns.create_table_tag(request)",
        "jobs.submit(ns, 'compact', tid)",
        "writes.start_task(task)",
        "feedback.run(request.write.call, action=request.write.action)",
        "conns.save_connection(spec)",
        "def f():\n    batch_builder.commit(ns, ops)",
    ],
)
def test_the_scan_finds_a_write_called_by_hand(source: str) -> None:
    assert write_outside_perform(Path("components/x.py"), source)


@pytest.mark.parametrize(
    "source",
    ["st.rerun()", "invalidate_tables([t])", "state.reset_forms('tables')", "feedback.flash(p)"],
)
def test_the_scan_finds_an_after_step_a_page_takes_by_hand(source: str) -> None:
    assert write_outside_perform(Path("app/views/x.py"), source)
    assert not write_outside_perform(Path("components/x.py"), source)


def test_the_scan_lets_a_write_be_described_and_its_helpers_run_it() -> None:
    source = (
        "def _restore(ns, t):\n"
        "    lc.restore_version(ns, t)\n"
        "def restore_write(ns, t):\n"
        "    def go():\n"
        "        return _restore(ns, t)\n"
        "    return Write(go, (), 'Restoring', 'Restored')\n"
        "def drop(ns):\n"
        "    return Write(ns.drop_table, (), 'Dropping', 'Dropped')\n"
    )
    assert write_outside_perform(Path("components/x.py"), source) == []


# -- perform: a write and its after-steps, once ---------------------------------------------------


def test_a_write_runs_its_after_steps_once(make_app, ui_env, monkeypatch) -> None:
    """A delete by range on the Versions page (sent from its button's callback): the page
    runs once after the click, the table is read again once, the forms start afresh once,
    the result is said once and shown once, and the page shows the table after the write;
    the next run no longer says it."""
    from components import writes
    from components.versions import listing

    calls: list[str] = []
    for name in ("invalidate_tables",):
        real = getattr(writes, name)
        monkeypatch.setattr(
            writes, name, lambda *a, _real=real, _n=name, **k: (calls.append(_n), _real(*a, **k))
        )
    for module, name in ((writes.state, "reset_forms"), (writes.feedback, "flash")):
        real = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _real=real, _n=name, **k: (calls.append(_n), _real(*a, **k))
        )
    real_summary = listing.render_summary
    monkeypatch.setattr(
        listing, "render_summary", lambda *a, **k: (calls.append("page run"), real_summary(*a, **k))
    )
    at = make_app("versions", query_params={"ns": "logs", "table": "events"})
    at.session_state[state.Versions.MANAGE_OPEN] = True
    at.session_state[state.Versions.MANAGE_TAB] = "Delete by range"
    at.run()
    assert_no_exception(at)
    calls.clear()
    next(t for t in at.text_input if t.label == "Versions to delete").input("2-3")
    next(t for t in at.text_input if "to confirm" in t.label).input("events")
    next(b for b in at.button if b.label == "Delete versions").click().run()
    assert_no_exception(at)
    assert sorted(calls) == ["flash", "invalidate_tables", "page run", "reset_forms"]
    assert alerts(at, "success") == ["Deleted 2 versions of logs › events."]
    assert figures(at)["Versions"] == "58"  # read again
    remaining = vsv.list_versions(backend.connect(str(ui_env)), ["logs", "events"])
    assert len(remaining) == 58
    at.run()
    assert alerts(at, "success") == [], texts(at)
