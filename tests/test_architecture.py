"""The import rules of docs/architecture.md, checked on every import statement (parsed with ``ast``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentbase_kernel

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "agentbase_kernel"


def _module_name(path: Path) -> tuple[str, str]:
    """``(module, package)`` of a source file under ROOT."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _type_only_lines(tree: ast.Module) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks: imports there never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports(path: Path) -> Iterator[tuple[str, list[str], bool]]:
    """``(absolute module, imported names, type_only)`` for each import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    _, package = _module_name(path)
    type_only = _type_only_lines(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno in type_only
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import x: each name is a submodule or a package attribute
                    for name in names:
                        yield f"{module}.{name}", [], node.lineno in type_only
                    continue
            else:
                module = node.module or ""
            yield module, names, node.lineno in type_only


def sources(package: str) -> list[Path]:
    folder = ROOT / package
    return sorted(folder.rglob("*.py")) if folder.exists() else []


def _inside(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _violations(package: str, forbidden: tuple[str, ...], *, allow_type_only: bool = False,
                skip: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for path in sources(package):
        name, _ = _module_name(path)
        if _inside(name, *skip):
            continue
        for module, _, type_only in imports(path):
            if _inside(module, *forbidden) and not (allow_type_only and type_only):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    return bad


def test_the_rules_see_the_imports() -> None:
    """The parser resolves relative imports: otherwise every rule below would pass vacuously."""
    found = {m for m, _, _ in imports(ROOT / "agentbase_kernel/ingest/pipeline.py")}
    assert {"agentbase_kernel.store.protocol", "agentbase_kernel.text", "agentbase_kernel.errors"} <= found


def test_the_kernel_never_imports_adapters_or_the_cli() -> None:
    assert _violations(KERNEL, ("agentbase_adapters", "agentbase_cli")) == []


#: the one import up a floor, on purpose: the in-memory reference store ranks full text with the
#: project's own tokenizer (a pure function of its text), as the SQL backends rank with theirs
EXCEPTIONS = {("agentbase_kernel/store/memory/fts.py", "agentbase_kernel.text.tokenize")}


@pytest.mark.parametrize(("floor", "above"), [
    ("errors", ("config", "records", "rules", "store", "text", "ingest", "retrieve", "lifecycle", "portable",
                "kernel", "cli")),
    ("records", ("config", "rules", "store", "text", "ingest", "retrieve", "lifecycle", "portable", "kernel", "cli")),
    ("config", ("rules", "store", "text", "ingest", "retrieve", "lifecycle", "portable", "kernel", "cli")),
    ("rules", ("store", "text", "ingest", "retrieve", "lifecycle", "portable", "kernel", "cli")),
    ("store", ("text", "ingest", "retrieve", "lifecycle", "portable", "kernel", "cli")),
    ("text", ("store", "ingest", "retrieve", "lifecycle", "portable", "kernel", "cli")),
    ("ingest", ("retrieve", "lifecycle", "portable", "kernel", "cli")),
    ("retrieve", ("ingest", "lifecycle", "portable", "kernel", "cli")),
    ("lifecycle", ("ingest", "retrieve", "portable", "kernel", "cli")),
    ("portable", ("ingest", "retrieve", "lifecycle", "kernel", "cli")),
])
def test_no_import_runs_up_a_floor(floor: str, above: tuple[str, ...]) -> None:
    target = f"{KERNEL}/{floor}" if (ROOT / KERNEL / floor).is_dir() else f"{KERNEL}/{floor}.py"
    bad = []
    for path in [ROOT / target] if target.endswith(".py") else sorted((ROOT / target).rglob("*.py")):
        for module, _, _ in imports(path):
            if _inside(module, *(f"{KERNEL}.{a}" for a in above)) and \
                    (str(path.relative_to(ROOT)), module) not in EXCEPTIONS:
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    assert bad == []


def test_services_depend_on_protocols_not_on_the_kernel() -> None:
    """``lifecycle/`` and ``portable/`` sit below ``kernel.py`` and are handed what they use (a store
    role, a write path, a reader): they never name ``Kernel``, not even for type hints."""
    assert _violations(f"{KERNEL}/lifecycle", (f"{KERNEL}.kernel", f"{KERNEL}.cli")) == []
    assert _violations(f"{KERNEL}/portable", (f"{KERNEL}.kernel", f"{KERNEL}.cli")) == []


def test_only_the_facade_touches_a_kernels_private_members() -> None:
    """``kernel.py`` and its parts (``scoped.py``, ``sessions.py``, ``governance.py``, ``skills.py``, ``markdown.py``,
    ``outcomes.py``, ``proposals.py``) share the kernel's private helpers; nothing else reaches for one
    (``kernel._ready()``, ``kernel._gate`` ...)."""
    facade = {"kernel", "scoped", "sessions", "governance", "skills", "markdown", "outcomes", "proposals"}
    bad = []
    for path in sources(KERNEL):
        if path.parent == ROOT / KERNEL and path.stem in facade:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in ("kernel", "k", "db") and node.attr.startswith("_"):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value.id}.{node.attr}")
    assert bad == []


def test_services_type_the_store_by_role() -> None:
    """A service names the role(s) it uses, never the whole ``Store`` nor a backend."""
    bad = []
    for package in ("lifecycle", "portable", "ingest", "retrieve"):
        for path in sources(f"{KERNEL}/{package}"):
            for module, names, _ in imports(path):
                if _inside(module, f"{KERNEL}.store") and "Store" in names:
                    bad.append(f"{path.relative_to(ROOT)} imports Store")
                if _inside(module, f"{KERNEL}.store.sqlite", f"{KERNEL}.store.postgres", f"{KERNEL}.store.memory"):
                    bad.append(f"{path.relative_to(ROOT)} imports {module}")
    assert bad == []


def test_nothing_in_the_kernel_imports_its_test_suites() -> None:
    """``agentbase_kernel.testing`` needs pytest: only test code imports it."""
    assert _violations(KERNEL, (f"{KERNEL}.testing", "pytest"), skip=(f"{KERNEL}.testing",)) == []


def test_the_memory_store_has_no_sql() -> None:
    """The reference store says what the SQL means without any: no driver, no SQL backend."""
    assert _violations(f"{KERNEL}/store/memory", (f"{KERNEL}.store.sqlite", f"{KERNEL}.store.postgres", "sqlite3",
                                                   "sqlean", "pysqlite3", "sqlite_vec", "psycopg")) == []


def test_text_has_no_sql() -> None:
    assert _violations(f"{KERNEL}/text", ("sqlite3", "sqlean", "pysqlite3", "sqlite_vec")) == []


def test_the_wings_see_the_store_only_through_its_protocol() -> None:
    backends = (f"{KERNEL}.store.sqlite", f"{KERNEL}.store.postgres", f"{KERNEL}.store.sql")
    bad = [*_violations(f"{KERNEL}/ingest", backends), *_violations(f"{KERNEL}/retrieve", backends),
           *_violations(f"{KERNEL}/portable", backends)]
    kernel_py = [m for m, _, _ in imports(ROOT / KERNEL / "kernel.py") if _inside(m, *backends)]
    assert bad == [] and kernel_py == []


def test_the_backend_neutral_store_modules_name_no_backend() -> None:
    for name in ("base.py", "protocol.py", "filters.py"):
        modules = [m for m, _, _ in imports(ROOT / KERNEL / "store" / name)]
        assert not any(_inside(m, f"{KERNEL}.store.sqlite", "sqlite3", "sqlean") for m in modules), name


SQLITE, POSTGRES, SQL = f"{KERNEL}.store.sqlite", f"{KERNEL}.store.postgres", f"{KERNEL}.store.sql"
DRIVERS = ("sqlite3", "sqlean", "pysqlite3", "sqlite_vec", "psycopg", "pgvector")


@pytest.mark.parametrize(("package", "forbidden"), [
    ("store/sqlite", (POSTGRES,)),
    ("store/postgres", (SQLITE,)),
    ("store/sql", (SQLITE, POSTGRES, *DRIVERS)),
], ids=["sqlite-not-postgres", "postgres-not-sqlite", "sql-core-no-backend"])
def test_backends_stand_apart_on_the_sql_core(package: str, forbidden: tuple[str, ...]) -> None:
    """Each backend builds on ``store/sql`` and never on the other backend; the core names neither, nor a driver."""
    assert sources(f"{KERNEL}/{package}"), package  # the rule sees files, so it cannot pass vacuously
    assert _violations(f"{KERNEL}/{package}", forbidden) == []


def test_adapters_import_only_public_kernel_names() -> None:
    public = {*agentbase_kernel.__all__, "__version__"}
    bad = []
    for path in sources("agentbase_adapters"):
        for module, names, _ in imports(path):
            if module == KERNEL:
                bad.extend(f"{path.relative_to(ROOT)} imports {KERNEL}.{n}" for n in names if n not in public)
            elif _inside(module, KERNEL):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
            elif _inside(module, "agentbase_cli"):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    assert bad == []


def test_the_cli_imports_only_public_names() -> None:
    public = {KERNEL: {*agentbase_kernel.__all__, "__version__"}}
    bad = []
    for path in sources("agentbase_cli"):
        for module, names, _ in imports(path):
            if module == KERNEL:
                bad.extend(f"{path.relative_to(ROOT)} imports {KERNEL}.{n}" for n in names if n not in public[KERNEL])
            elif _inside(module, KERNEL):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    assert bad == []
