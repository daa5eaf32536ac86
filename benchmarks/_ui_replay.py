"""Record a console page as Streamlit draws it, and draw it again without the console's logic:
the baseline of benchmarks/bench_ui_interactions.py ("the same elements, none of the logic").

Recording runs the console in ``streamlit.testing`` (AppTest, in process) and keeps the
messages of the last script run (:func:`recording`). :func:`page_tree` takes the page's part of
the main area from them (from the page's title on): every element and block as the browser
received it, widgets included, with their ids, values and layout.

:func:`draw` sends that tree again from another app: blocks as they were (columns, expanders,
tabs, forms, dialogs), elements as they were (``DeltaGenerator._enqueue`` of the recorded
proto and its width and height). Nothing is computed, read or registered: a widget drawn so is
shown and sends its value like any other, and :func:`widget_value` reads what the browser sent
for a widget id, so that the replaying app can react to a click without the widget's code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Path = tuple[int, ...]
MAIN = 0  # the main area's root container
EVENT = 2  # the root container of dialogs and toasts


@dataclass
class Node:
    """One recorded element or block (its proto, serialised) and, for a block, its children."""

    kind: str  # "element" | "block"
    data: bytes
    children: list[Node] = field(default_factory=list)


@contextlib.contextmanager
def recording() -> Iterator[list[Any]]:
    """While open, every AppTest run replaces the list's content with that run's messages."""
    from streamlit.testing.v1 import local_script_runner

    kept: list[Any] = []
    real = local_script_runner.parse_tree_from_messages

    def keep(messages: list[Any]) -> Any:
        kept[:] = [m.__deepcopy__() if hasattr(m, "__deepcopy__") else m for m in messages]
        return real(messages)

    local_script_runner.parse_tree_from_messages = keep
    try:
        yield kept
    finally:
        local_script_runner.parse_tree_from_messages = real


def _final(messages: list[Any]) -> dict[Path, tuple[str, Any]]:
    """What the browser holds after ``messages``: path -> (kind, proto); a delta at a path
    replaces what was there and everything below it."""
    nodes: dict[Path, tuple[str, Any]] = {}
    for msg in messages:
        if not msg.HasField("delta"):
            continue
        path = tuple(msg.metadata.delta_path)
        kind = msg.delta.WhichOneof("type")
        if kind not in ("new_element", "add_block"):
            continue
        for old in [p for p in nodes if p[: len(path)] == path]:
            del nodes[old]
        if kind == "new_element":
            nodes[path] = ("element", msg.delta.new_element)
        else:
            nodes[path] = ("block", msg.delta.add_block)
    return nodes


def page_tree(messages: list[Any], title: str) -> list[Node]:
    """The page's nodes: those of the main area from the heading ``title`` on (the frame may
    draw before the page), then those of the event container (an open dialog), each with
    everything below it (:class:`Node`; an event node's ``kind`` is prefixed ``event.``)."""
    nodes = _final(messages)

    def build(path: Path, prefix: str = "") -> Node:
        kind, proto = nodes[path]
        below = sorted(p for p in nodes if len(p) == len(path) + 1 and p[: len(path)] == path)
        return Node(prefix + kind, proto.SerializeToString(), [build(p) for p in below])

    top = sorted(p for p in nodes if len(p) == 2 and p[0] == MAIN)
    start = next(
        (
            i
            for i, p in enumerate(top)
            if nodes[p][0] == "element"
            and nodes[p][1].WhichOneof("type") == "heading"
            and nodes[p][1].heading.body == title
        ),
        None,
    )
    if start is None:
        raise ValueError(f"no heading {title!r} in the main area")
    events = sorted(p for p in nodes if len(p) == 2 and p[0] == EVENT)
    return [build(p) for p in top[start:]] + [build(p, "event.") for p in events]


def widget_ids(tree: list[Node]) -> dict[str, str]:
    """Every widget of ``tree``: id -> label (buttons, inputs, selectboxes, ...)."""
    from streamlit.proto.Element_pb2 import Element

    out: dict[str, str] = {}

    def walk(nodes: list[Node]) -> None:
        for node in nodes:
            if node.kind.endswith("element"):
                el = Element.FromString(node.data)
                inner = getattr(el, el.WhichOneof("type") or "empty")
                wid = getattr(inner, "id", "")
                if wid:
                    out[wid] = str(getattr(inner, "label", ""))
            walk(node.children)

    walk(tree)
    return out


def _layout(el: Any) -> Any:
    from streamlit.elements.lib.layout_utils import LayoutConfig

    def size(config: Any, pixel: str) -> Any:
        which = (
            config.WhichOneof(config.DESCRIPTOR.oneofs[0].name)
            if config.DESCRIPTOR.oneofs
            else None
        )
        if which == "use_stretch":
            return "stretch"
        if which == "use_content":
            return "content"
        if which == pixel:
            return int(getattr(config, pixel))
        return None

    width = size(el.width_config, "pixel_width") if el.HasField("width_config") else None
    height = size(el.height_config, "pixel_height") if el.HasField("height_config") else None
    if width is None and height is None:
        return None
    return LayoutConfig(width=width, height=height)


def draw(tree: list[Node], dg: Any = None) -> None:
    """Send ``tree`` to the browser again, below ``dg`` (default: the main area; nodes marked
    ``event.``: the event container)."""
    import streamlit as st
    from streamlit.delta_generator_singletons import get_dg_singleton_instance
    from streamlit.elements.lib.form_utils import FormData
    from streamlit.proto.Block_pb2 import Block
    from streamlit.proto.Element_pb2 import Element

    for node in tree:
        kind = node.kind
        where = dg if dg is not None else st._main
        if kind.startswith("event."):
            kind, where = kind.removeprefix("event."), get_dg_singleton_instance().event_dg
        if kind == "block":
            block = Block.FromString(node.data)
            child = where._block(block)
            if block.WhichOneof("type") == "form":
                child._form_data = FormData(block.form.form_id)
            draw(node.children, child)
        else:
            el = Element.FromString(node.data)
            which = el.WhichOneof("type")
            if which:
                where._enqueue(which, getattr(el, which), layout_config=_layout(el))


def widget_value(widget_id: str) -> Any:
    """What the browser sent for widget ``widget_id`` with this run (``None``: nothing): the
    proto ``WidgetState``'s value (a button's ``trigger_value``, a text's ``string_value``...)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    states = ctx.session_state._state._new_widget_state
    with contextlib.suppress(KeyError, AttributeError):
        state = states.get_serialized(widget_id)
        if state is not None:
            kind = state.WhichOneof("value")
            return getattr(state, kind) if kind else None
    return None


__all__ = ["Node", "draw", "page_tree", "recording", "widget_ids", "widget_value"]
