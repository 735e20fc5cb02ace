"""A job's code fingerprint: a hash of the ``benign`` modules the job runs, found from the source.

Each rule passes the fingerprint of its script as a ``params`` entry, so that editing a module
reruns exactly the jobs that import it, directly or through other modules (an edit to the
figures reruns no training). The imports are read from the source (``ast``), function bodies
included, so an import done lazily counts too. Modules picked at run time by name (the models
of ``benign.synthetic.registry``, the backbone loaders of ``benign.real.registry``) are named as
further entry points. Data files a job reads are rule inputs, which Snakemake tracks itself.
Torch-free and cheap: the workflow computes these at parse time.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # benign/
ROOT = PACKAGE.parent


@functools.cache
def module_file(name: str) -> Path | None:
    """The source of module ``name`` (``benign.x.y``) in this package, or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE.name:
        return None
    base = ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _module_name(path: Path) -> str | None:
    """``benign.x.y`` for a file of this package; None for a file outside it (a script)."""
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:
        return None
    if rel.parts[0] != PACKAGE.name:
        return None
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def imports(path: Path) -> frozenset[str]:
    """The package's modules that the file ``path`` imports anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    own = _module_name(path)
    package = own if own and path.name == "__init__.py" else own.rpartition(".")[0] if own else ""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from .x import y
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)  # kept only if a module
    return frozenset(name for name in found if module_file(name) is not None)


def closure(*entries: str | Path) -> list[str]:
    """Every module of the package that the entries run: script paths or module names, their
    imports, the imports of those, and so on, with each module's parent packages (importing
    ``benign.x.y`` runs ``benign/__init__.py`` and ``benign/x/__init__.py``)."""
    return list(_closure(*entries))


@functools.cache  # the workflow asks for the same few closures once per rule
def _closure(*entries: str | Path) -> tuple[str, ...]:
    todo = [Path(e) if isinstance(e, Path) or str(e).endswith(".py") else module_file(str(e)) for e in entries]
    if None in todo:
        raise ValueError(f"not a module of {PACKAGE.name}: {entries[todo.index(None)]!r}")
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        names = set(imports(path))
        own = _module_name(path)
        if own is not None:
            names.add(own)
        for name in names:
            parts = name.split(".")
            for k in range(1, len(parts) + 1):
                parent = ".".join(parts[:k])
                if parent not in seen:
                    seen.add(parent)
                    todo.append(module_file(parent))
    return tuple(sorted(seen))


def fingerprint(*entries: str | Path) -> str:
    """A short hash of the source of every module in :func:`closure` of ``entries``."""
    h = hashlib.sha256()
    for name in closure(*entries):
        h.update(name.encode())
        h.update(module_file(name).read_bytes())
    return h.hexdigest()[:16]
