"""The frame freezes the code loaded so far (app/nav.py ``freeze_loaded_code``): a full garbage
collection during a page run no longer walks the console's and its libraries' objects."""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterator

import pytest

from app import nav


@pytest.fixture
def unfrozen(monkeypatch) -> Iterator[None]:
    """No object frozen and no freeze recorded; afterwards everything frozen is let go."""
    gc.unfreeze()
    monkeypatch.setattr(nav, "_frozen_modules", 0)
    yield
    gc.unfreeze()


def test_loaded_code_is_frozen_again_only_after_more_is_loaded(unfrozen, monkeypatch) -> None:
    # A frozen object that dies leaves the permanent generation, so the count can drop while
    # other threads of the test process run; it grows only by a freeze.
    assert nav.freeze_loaded_code()
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the modules' functions, classes, dicts
    kept = [[] for _ in range(1_000)]  # made after the freeze: collected as before
    assert not nav.freeze_loaded_code()  # no module loaded since
    assert gc.get_freeze_count() <= frozen  # kept was not frozen
    monkeypatch.setitem(sys.modules, "freshly_loaded", types.ModuleType("freshly_loaded"))
    before = gc.get_freeze_count()
    assert nav.freeze_loaded_code()
    assert gc.get_freeze_count() - before >= len(kept)  # now kept is frozen too


def test_a_page_run_freezes_the_loaded_code(unfrozen, make_app) -> None:
    make_app("versions")
    assert gc.get_freeze_count() > 10_000
    assert nav._frozen_modules > 0
