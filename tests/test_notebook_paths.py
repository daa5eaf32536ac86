"""The tour notebook finds the project's demo folder wherever Jupyter started: ``jupyter lab
notebooks/tour.ipynb`` runs it in ``notebooks/``, where ``./.lance-console/demo`` would build
a second demo; the path it prints is absolute."""

from __future__ import annotations

import json
from pathlib import Path

from backend import notebook

PROJECT = Path(__file__).resolve().parent.parent


def test_the_demo_is_found_from_the_notebooks_folder() -> None:
    found = notebook.default_demo_dir(PROJECT / "notebooks")
    assert found == PROJECT / ".lance-console" / "demo"
    assert found.is_absolute()
    assert notebook.default_demo_dir(PROJECT) == found


def test_a_folder_outside_the_project_falls_back_to_the_installed_project(tmp_path: Path) -> None:
    assert notebook.project_root(tmp_path) == PROJECT


def test_the_notebooks_use_it() -> None:
    for name in ("tour.ipynb", "transactions.ipynb"):
        cells = json.loads((PROJECT / "notebooks" / name).read_text())["cells"]
        setup = "".join(cells[1]["source"])
        assert "notebook.default_demo_dir()" in setup, name
        assert "./.lance-console/demo" not in setup, name
