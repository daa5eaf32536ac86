"""The demo namespace: Python standard-library docstrings as Lance tables.

Everything is made locally from ``inspect`` on a fixed list of standard-library modules; nothing
is downloaded. Layout (ids joined with ``$``)::

    stdlib                         namespace (properties: description, source, python)
    stdlib$modules                 one row per module            2 versions, BTREE
    stdlib$symbols                 functions, classes, methods  11 versions, 5 indexes
    stdlib$text                    namespace: text-processing modules
    stdlib$text$functions          their functions and methods   4 versions, IVF_HNSW_SQ + FTS
    stdlib$passages                ~25,000 docstring passages    IVF_PQ (64 partitions) + FTS
    sandbox                        namespace
    sandbox$embeddings_v2          declared only (no data yet)

``stdlib$symbols`` has history for the version browser (initial write, append, a deleted
batch, an added column, a config change, index builds) and rows appended after its indexes
were built, so index coverage lags. Vectors are 64-dimensional feature hashes of the docstring
tokens (L2-normalised), so similar docstrings really are close.

``stdlib$passages`` is the table for search and tuning: sliding windows of
:data:`PASSAGE_WORDS` words (stride :data:`PASSAGE_STRIDE`) over every docstring, enough rows
for an IVF index whose recall visibly depends on ``nprobes``. Its ``embedding.function``
property names the feature hashing, so the console can embed a typed text query the same way.

``create_demo_namespace(root)`` never deletes anything: ``<root>/_console/demo.json`` is
written last and an existing demo is opened as it is, whatever the user did to it since (tables
dropped, renamed, imported). Demo tables that are missing are listed in the summary and built
again only on request (``rebuild_missing=True``, ``lance-console --rebuild-demo``); an
interrupted build (``demo.building`` marker) is finished by building the tables it had not made.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
from lance_namespace import (
    CreateNamespaceRequest,
    CreateTableIndexRequest,
    CreateTableRequest,
    DeclareTableRequest,
    DescribeNamespaceRequest,
    DescribeTableRequest,
    UpdateTableSchemaMetadataRequest,
)
from lance_namespace.errors import (
    LanceNamespaceError,
    NamespaceNotFoundError,
    TableNotFoundError,
)

from backend.demo.embedding import EMBEDDING_FUNCTION, VECTOR_DIM, embed
from backend.local import LocalNamespace, normalise_target
from backend.rules import ids
from backend.spec.fields import is_number, is_texts

DEMO_VERSION = 2
PASSAGE_WORDS = 10
PASSAGE_STRIDE = 1
PASSAGE_PARTITIONS = 64
MARKER = "_console/demo.json"
BUILDING_MARKER = "_console/demo.building"
MAX_METHODS_PER_CLASS = 12

# Deterministic module list: pure-Python or always-built-in modules without import side effects.
DEMO_MODULES: tuple[str, ...] = (
    "abc",
    "argparse",
    "array",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "enum",
    "fnmatch",
    "fractions",
    "functools",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "itertools",
    "json",
    "logging",
    "math",
    "operator",
    "pathlib",
    "pprint",
    "queue",
    "random",
    "re",
    "secrets",
    "shlex",
    "shutil",
    "statistics",
    "string",
    "struct",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "types",
    "unicodedata",
    "urllib.parse",
    "uuid",
    "warnings",
    "zipfile",
    "zlib",
)
TEXT_MODULES = frozenset(
    {"difflib", "html", "re", "shlex", "string", "textwrap", "unicodedata", "fnmatch", "csv"}
)
# Appended after the indexes were built (so coverage charts show unindexed rows).
LATE_MODULES = frozenset({"zipfile", "zlib", "uuid"})
# Appended as the second version of stdlib$symbols.
SECOND_BATCH = frozenset({"threading", "time", "types", "unicodedata", "urllib.parse", "warnings"})

SYMBOLS_ID = ["stdlib", "symbols"]
MODULES_ID = ["stdlib", "modules"]
TEXT_ID = ["stdlib", "text", "functions"]
PASSAGES_ID = ["stdlib", "passages"]
DECLARED_ID = ["sandbox", "embeddings_v2"]
DATA_TABLES = [MODULES_ID, PASSAGES_ID, SYMBOLS_ID, TEXT_ID]
DEMO_TABLES = [*DATA_TABLES, DECLARED_ID]  # every table the demo makes


@dataclasses.dataclass
class DemoSummary:
    root: str
    tables: list[list[str]]
    namespaces: list[list[str]]
    declared: list[list[str]]
    rows: dict[str, int]
    versions: dict[str, int]
    indexes: dict[str, list[str]]
    build_seconds: float
    created: bool = True
    demo_version: int = DEMO_VERSION
    missing: list[list[str]] = dataclasses.field(default_factory=list)  # dropped or renamed

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DemoSummary:
        """The summary a marker records; ``ValueError`` for one of other shapes."""
        fields = {f.name for f in dataclasses.fields(cls)}
        summary = cls(**{k: v for k, v in data.items() if k in fields})
        for name in ("tables", "namespaces", "declared", "missing"):
            value = getattr(summary, name)
            if not isinstance(value, list) or not all(is_texts(t) for t in value):
                raise ValueError(f"the demo marker's {name} are not a list of ids")
        for name in ("rows", "versions", "indexes"):
            if not isinstance(getattr(summary, name), dict):
                raise ValueError(f"the demo marker's {name} are not a mapping")
        return summary


# -- data ------------------------------------------------------------------------------------
def _tags(module: str, kind: str, name: str, doc: str) -> list[str]:
    lower = doc.lower()
    tags = [module.split(".")[0], kind]
    if ">>>" in doc:
        tags.append("has_examples")
    if "deprecated" in lower:
        tags.append("deprecated")
    if "raise" in lower:
        tags.append("raises")
    if "return" in lower:
        tags.append("returns")
    if name.isupper():
        tags.append("constant_like")
    if len(doc) < 60:
        tags.append("short_doc")
    return tags


def _own(obj: Any, module_name: str) -> bool:
    owner = getattr(obj, "__module__", None) or ""
    base = module_name.split(".")[0]
    return owner == module_name or owner.lstrip("_").split(".")[0] == base


def collect_symbols(modules: Iterable[str] = DEMO_MODULES) -> list[dict[str, Any]]:
    """Public functions, classes and (some) methods with docstrings, in a stable order."""
    rows: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module_name in modules:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            for name, obj in sorted(vars(module).items()):
                if name.startswith("_") or not _own(obj, module_name):
                    continue
                if inspect.isclass(obj):
                    rows.append(_row(module_name, "class", name, name, obj))
                    methods = 0
                    for mname, member in sorted(vars(obj).items()):
                        if methods >= MAX_METHODS_PER_CLASS or mname.startswith("_"):
                            continue
                        if callable(member) or isinstance(member, (classmethod, staticmethod)):
                            row = _row(module_name, "method", mname, f"{name}.{mname}", member)
                            if row["doc"]:
                                rows.append(row)
                                methods += 1
                elif inspect.isroutine(obj):
                    rows.append(_row(module_name, "function", name, name, obj))
    return [r for r in rows if r["doc"]]


def _row(module: str, kind: str, name: str, qualname: str, obj: Any) -> dict[str, Any]:
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    try:
        doc = inspect.getdoc(obj) or ""
    except Exception:
        doc = ""
    return {"module": module, "kind": kind, "name": name, "qualname": qualname, "doc": doc}


def symbols_table(rows: list[dict[str, Any]], first_id: int = 0) -> pa.Table:
    docs = [r["doc"] for r in rows]
    vectors = embed(f"{r['qualname']} {r['doc']}" for r in rows)
    return pa.table(
        {
            "id": pa.array(range(first_id, first_id + len(rows)), pa.int64()),
            "module": pa.array([r["module"] for r in rows], pa.string()),
            "kind": pa.array([r["kind"] for r in rows], pa.string()),
            "name": pa.array([r["name"] for r in rows], pa.string()),
            "qualname": pa.array([r["qualname"] for r in rows], pa.string()),
            "doc": pa.array(docs, pa.string()),
            "doc_length": pa.array([len(d) for d in docs], pa.int64()),
            "n_lines": pa.array([d.count("\n") + 1 for d in docs], pa.int32()),
            "tags": pa.array(
                [_tags(r["module"], r["kind"], r["name"], r["doc"]) for r in rows],
                pa.list_(pa.string()),
            ),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.reshape(-1), pa.float32()), VECTOR_DIM
            ),
        }
    )


def modules_table(rows: list[dict[str, Any]], modules: Iterable[str] = DEMO_MODULES) -> pa.Table:
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in modules:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            doc = inspect.getdoc(module) or ""
            mine = [r for r in rows if r["module"] == name]
            out.append(
                {
                    "module": name,
                    "package": name.split(".")[0],
                    "doc": doc,
                    "doc_length": len(doc),
                    "n_lines": doc.count("\n") + 1,
                    "n_functions": sum(r["kind"] == "function" for r in mine),
                    "n_classes": sum(r["kind"] == "class" for r in mine),
                    "is_text": name in TEXT_MODULES,
                }
            )
    table = pa.Table.from_pylist(out)
    table = table.set_column(
        table.schema.get_field_index("doc_length"),
        "doc_length",
        table.column("doc_length").cast(pa.int64()),
    )
    vectors = embed(f"{r['module']} {r['doc']}" for r in out)
    return table.append_column(
        "vector",
        pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), VECTOR_DIM),
    )


def passages(rows: list[dict[str, Any]], modules: Iterable[str] = DEMO_MODULES) -> list[dict]:
    """Windows of :data:`PASSAGE_WORDS` words every :data:`PASSAGE_STRIDE` words over each
    module's and symbol's docstring, each text once, in a stable order."""
    sources: list[tuple[str, str, str]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in modules:
            try:
                doc = inspect.getdoc(importlib.import_module(name)) or ""
            except ImportError:
                continue
            sources.append((name, name, doc))
    sources += [(r["module"], f"{r['module']}.{r['qualname']}", r["doc"]) for r in rows]
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for module, qualname, doc in sources:
        words = doc.split()
        last = max(0, len(words) - PASSAGE_WORDS)
        for start in range(0, last + 1, PASSAGE_STRIDE):
            text = " ".join(words[start : start + PASSAGE_WORDS])
            if text and text not in seen:
                seen.add(text)
                out.append({"module": module, "source": qualname, "word": start, "passage": text})
    return out


def passages_table(items: list[dict[str, Any]]) -> pa.Table:
    vectors = embed(item["passage"] for item in items)
    return pa.table(
        {
            "id": pa.array(range(len(items)), pa.int64()),
            "module": pa.array([i["module"] for i in items], pa.string()),
            "source": pa.array([i["source"] for i in items], pa.string()),
            "word": pa.array([i["word"] for i in items], pa.int32()),
            "passage": pa.array([i["passage"] for i in items], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.reshape(-1), pa.float32()), VECTOR_DIM
            ),
        }
    )


# -- build -----------------------------------------------------------------------------------
def _say(progress: Callable[[str], None] | None, message: str) -> None:
    if progress is not None:
        progress(message)


def _read_marker(path: Path) -> DemoSummary | None:
    """The demo's marker (``None``: none, or one this console cannot read, as a folder
    holding something else: never built over)."""
    try:
        data = json.loads((path / MARKER).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("demo_version") != DEMO_VERSION:
            return None
        return DemoSummary.from_json(data)
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def missing_tables(ns: LocalNamespace) -> list[list[str]]:
    """The demo tables the catalog does not list (dropped, renamed or moved since)."""
    missing = []
    for table_id in DEMO_TABLES:
        try:
            ns.describe_table(DescribeTableRequest(id=table_id))
        except (TableNotFoundError, NamespaceNotFoundError):
            missing.append(table_id)
    return missing


def _build_interrupted(path: Path) -> bool:
    """A build of the demo began in ``path`` and did not finish: its building marker is there,
    holding the time the build began as the console writes it (a file of that name holding
    anything else is somebody else's, and the folder is not built in on its account)."""
    try:
        with (path / BUILDING_MARKER).open("rb") as fh:
            text = fh.read(65)
        began = float(text.decode("ascii")) if len(text) <= 64 else math.nan
        return is_number(began) and began > 0
    except (OSError, ValueError, UnicodeDecodeError):
        return False


def is_foreign_directory(path: Path) -> bool:
    """True for a directory that holds files but no demo (complete, or interrupted while
    building): the demo is never built over somebody's data."""
    if not path.is_dir() or not any(path.iterdir()):
        return False
    return _read_marker(path) is None and not _build_interrupted(path)


def create_demo_namespace(
    root: str | os.PathLike[str],
    *,
    rebuild_missing: bool = False,
    progress: Callable[[str], None] | None = None,
) -> DemoSummary:
    """Build (or find) the demo namespace in a local directory. See module docstring.

    Nothing is ever deleted. An empty or new directory gets the whole demo; an existing demo
    is returned as it is, with ``missing`` naming the demo tables dropped or renamed since
    (``rebuild_missing=True`` builds those again, next to whatever else the folder holds); an
    interrupted build is finished the same way. A non-empty directory that is not a demo is
    refused. ``progress`` receives short human-readable messages.
    """
    root_uri, _, path = normalise_target(root)
    if path is None:
        raise ValueError(f"the demo is built in a local directory, not {root_uri}")
    existing = _read_marker(path)
    interrupted = _build_interrupted(path)
    if existing is None and not interrupted:
        if is_foreign_directory(path):
            raise ValueError(
                f"refusing to build the demo in {path}: the directory is not empty and holds "
                "no demo; choose an empty or new directory"
            )
        only = None  # a new demo
    else:
        missing = missing_tables(LocalNamespace(str(path)))
        if existing is not None and not interrupted and not (missing and rebuild_missing):
            _say(progress, f"demo already present at {path}")
            return _as_found(existing, missing)
        only = missing
        if not only:  # an interrupted build that had made every table
            _say(progress, f"finishing the interrupted demo build at {path}")
        else:
            names = ", ".join(ids.display_id(t) for t in only)
            _say(progress, f"building the missing demo tables at {path}: {names}")
    path.mkdir(parents=True, exist_ok=True)
    (path / BUILDING_MARKER).parent.mkdir(parents=True, exist_ok=True)
    (path / BUILDING_MARKER).write_text(str(time.time()), encoding="utf-8")

    started = time.perf_counter()
    summary = _build(path, progress, only)
    summary.build_seconds = round(time.perf_counter() - started, 3)
    marker = path / MARKER
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary.to_json(), indent=1), encoding="utf-8")
    os.replace(tmp, marker)
    with contextlib.suppress(FileNotFoundError):
        (path / BUILDING_MARKER).unlink()
    _say(progress, f"demo ready in {summary.build_seconds:.1f}s at {path}")
    return summary


def _as_found(recorded: DemoSummary, missing: list[list[str]]) -> DemoSummary:
    """The recorded summary without the demo tables that are missing now."""
    return dataclasses.replace(
        recorded,
        created=False,
        tables=[t for t in recorded.tables if t not in missing],
        declared=[t for t in recorded.declared if t not in missing],
        missing=missing,
    )


def _python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _create_namespaces(ns: LocalNamespace, progress: Callable[[str], None] | None) -> None:
    """The demo's namespaces that are not there (a namespace that is there is kept as is)."""
    wanted = (
        (
            ["stdlib"],
            {
                "description": "Docstrings of Python standard-library modules",
                "source": "inspect.getdoc, generated locally",
                "python": _python(),
            },
        ),
        (
            ["stdlib", "text"],
            {
                "description": "Text-processing modules",
                "modules": ", ".join(sorted(TEXT_MODULES)),
            },
        ),
        (["sandbox"], {"description": "Work in progress; tables may be empty"}),
    )
    for namespace_id, properties in wanted:
        try:
            ns.describe_namespace(DescribeNamespaceRequest(id=namespace_id))
        except NamespaceNotFoundError:
            _say(progress, f"creating namespace {ids.display_id(namespace_id)}")
            ns.create_namespace(CreateNamespaceRequest(id=namespace_id, properties=properties))


def _create_table(
    ns: LocalNamespace,
    table_id: list[str],
    data: pa.Table,
    description: str,
    properties: Mapping[str, str] | None = None,
) -> None:
    """Create a demo table holding ``data``: owned by ``demo``, with its ``description`` and
    further ``properties``."""
    ns.create_table(
        CreateTableRequest(
            id=table_id,
            properties={"owner": "demo", "description": description, **(properties or {})},
        ),
        data,
    )


def _create_indexes(
    ns: LocalNamespace, table_id: list[str], *indexes: tuple[str, str, str, dict[str, Any]]
) -> None:
    """Build each index on the table in turn: ``(column, index type, name, its parameters)``."""
    for column, index_type, name, params in indexes:
        ns.create_table_index(
            CreateTableIndexRequest(
                id=table_id, column=column, index_type=index_type, name=name, **params
            )
        )


def _build_symbols(
    ns: LocalNamespace, rows: list[dict[str, Any]], progress: Callable[[str], None] | None
) -> None:
    py = _python()
    early = [r for r in rows if r["module"] not in SECOND_BATCH | LATE_MODULES]
    second = [r for r in rows if r["module"] in SECOND_BATCH]
    late = [r for r in rows if r["module"] in LATE_MODULES]
    # stdlib$symbols: the main table, with history and lagging indexes.
    _say(progress, f"writing stdlib$symbols ({len(rows)} rows over several versions)")
    first = symbols_table(early)
    _create_table(
        ns,
        SYMBOLS_ID,
        first,
        "Public functions, classes and methods with their docstrings",
        {
            "embedding": f"feature hashing of docstring tokens, {VECTOR_DIM} dims, L2-normalised",
            "embedding.function": EMBEDDING_FUNCTION,
            "embedding.source": "qualname and doc",
        },
    )
    ds = ns.open_dataset(SYMBOLS_ID)
    next_id = first.num_rows
    ds.insert(symbols_table(second, first_id=next_id))  # v2: append
    next_id += len(second)
    ds.delete("kind = 'method' AND doc_length < 40")  # v3: a deleted batch
    ds.add_columns({"has_examples": "strpos(doc, '>>>') > 0"})  # v4: an added column
    ns.update_table_schema_metadata(  # v5: a metadata change
        UpdateTableSchemaMetadataRequest(
            id=SYMBOLS_ID, metadata={"demo.curated_by": "lance-console", "demo.python": py}
        )
    )

    _say(progress, "building indexes on stdlib$symbols")
    vector_params = {
        "distance_type": "cosine", "num_partitions": 4, "num_sub_vectors": 8, "max_iterations": 20
    }  # fmt: skip
    _create_indexes(
        ns,
        SYMBOLS_ID,
        ("vector", "IVF_PQ", "vector_ivf_pq", vector_params),
        ("doc", "FTS", "doc_fts", {"with_position": True}),
        ("doc_length", "BTREE", "doc_length_btree", {}),
        ("kind", "BITMAP", "kind_bitmap", {}),
        ("tags", "LABEL_LIST", "tags_label_list", {}),
    )

    _say(progress, "appending rows after the index builds (coverage lag)")
    late_table = symbols_table(late, first_id=next_id)
    late_table = late_table.append_column(
        "has_examples", pa.array([">>>" in d for d in late_table.column("doc").to_pylist()])
    )
    ns.open_dataset(SYMBOLS_ID).insert(late_table)


def _build_modules(
    ns: LocalNamespace, rows: list[dict[str, Any]], progress: Callable[[str], None] | None
) -> None:
    # stdlib$modules
    _say(progress, "writing stdlib$modules")
    _create_table(ns, MODULES_ID, modules_table(rows), "One row per module")
    _create_indexes(ns, MODULES_ID, ("doc_length", "BTREE", "doc_length_btree", {}))


def _build_text(
    ns: LocalNamespace, rows: list[dict[str, Any]], progress: Callable[[str], None] | None
) -> None:
    # stdlib$text$functions
    _say(progress, "writing stdlib$text$functions")
    text_rows = [r for r in rows if r["module"] in TEXT_MODULES and r["kind"] != "class"]
    half = len(text_rows) // 2
    _create_table(
        ns, TEXT_ID, symbols_table(text_rows[:half]), "Functions and methods of text modules"
    )
    vector_params = {"distance_type": "dot", "num_partitions": 2, "m": 8, "ef_construction": 64}
    _create_indexes(
        ns,
        TEXT_ID,
        ("vector", "IVF_HNSW_SQ", "vector_hnsw", vector_params),
        ("doc", "FTS", "doc_fts", {"stem": True}),
    )
    ns.open_dataset(TEXT_ID).insert(symbols_table(text_rows[half:], first_id=half))


def _build_passages(
    ns: LocalNamespace, rows: list[dict[str, Any]], progress: Callable[[str], None] | None
) -> None:
    # stdlib$passages: the table to tune on
    items = passages(rows)
    _say(progress, f"writing stdlib$passages ({len(items):,} rows) and its indexes")
    _create_table(
        ns,
        PASSAGES_ID,
        passages_table(items),
        f"{PASSAGE_WORDS}-word windows over every docstring, for search and tuning",
        {
            "embedding.function": EMBEDDING_FUNCTION,
            "embedding.column": "vector",
            "embedding.source": "passage",
        },
    )
    vector_params = {
        "distance_type": "cosine", "num_partitions": PASSAGE_PARTITIONS, "num_sub_vectors": 16
    }  # fmt: skip
    text_params = {"with_position": True, "stem": True, "remove_stop_words": True}
    _create_indexes(
        ns,
        PASSAGES_ID,
        ("vector", "IVF_PQ", "vector_ivf_pq", vector_params),
        ("passage", "FTS", "passage_fts", text_params),
    )


def _build_declared(
    ns: LocalNamespace, rows: list[dict[str, Any]], progress: Callable[[str], None] | None
) -> None:
    # sandbox$embeddings_v2: declared only
    _say(progress, "declaring sandbox$embeddings_v2 (no data)")
    ns.declare_table(
        DeclareTableRequest(
            id=DECLARED_ID,
            properties={
                "owner": "demo",
                "status": "planned",
                "description": "Next embedding model",
            },
        )
    )


# Demo table -> its builder, in build order.
_BUILDERS: dict[tuple[str, ...], Callable[..., None]] = {
    tuple(SYMBOLS_ID): _build_symbols,
    tuple(MODULES_ID): _build_modules,
    tuple(TEXT_ID): _build_text,
    tuple(PASSAGES_ID): _build_passages,
    tuple(DECLARED_ID): _build_declared,
}


def _build(
    path: Path,
    progress: Callable[[str], None] | None,
    only: list[list[str]] | None = None,
) -> DemoSummary:
    """Build the demo tables (``only``: just those), creating namespaces that are missing."""
    ns = LocalNamespace(str(path))
    wanted = {tuple(t) for t in (DEMO_TABLES if only is None else only)}
    _create_namespaces(ns, progress)
    rows: list[dict[str, Any]] = []
    if wanted - {tuple(DECLARED_ID)}:
        _say(progress, "reading standard-library docstrings")
        rows = collect_symbols()
    for table_id, builder in _BUILDERS.items():
        if table_id in wanted:
            builder(ns, rows, progress)
    if tuple(DECLARED_ID) in wanted:
        desc = ns.describe_table(DescribeTableRequest(id=DECLARED_ID, check_declared=True))
        if not desc.is_only_declared:
            raise RuntimeError(f"the declared demo table {ids.display_id(DECLARED_ID)} has data")
    return _summarise(ns)


def _summarise(ns: LocalNamespace) -> DemoSummary:
    """What the demo tables hold now (tables dropped or renamed since are listed as missing)."""
    missing = missing_tables(ns)
    tables = [t for t in DATA_TABLES if t not in missing]
    rows_by_table, versions, indexes = {}, {}, {}
    for table_id in tables:
        key = ids.object_id(table_id)
        try:
            ds = ns.open_dataset(table_id)
        except LanceNamespaceError:  # a table of that name without data (not ours)
            continue
        rows_by_table[key] = ds.count_rows()
        versions[key] = ds.version
        indexes[key] = sorted(i.name for i in ds.describe_indices())
    return DemoSummary(
        root=ns.root,
        tables=tables,
        namespaces=[["stdlib"], ["stdlib", "text"], ["sandbox"]],
        declared=[t for t in [DECLARED_ID] if t not in missing],
        rows=rows_by_table,
        versions=versions,
        indexes=indexes,
        build_seconds=0.0,
        missing=missing,
    )
