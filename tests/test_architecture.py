"""The house of docs/architecture.md, checked from the code: every import of the package — at the top of a module
and inside functions — points down a floor, no two modules import each other (directly or round a circle), no
program imports the engine or the face, the engine names no particular program, and no private name is imported
from another module."""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "mmprog"

#: floors, top (high number) to ground (0); a module belongs to the floor of its longest matching prefix
FLOORS = {
    "mmprog": 5, "mmprog.api": 5, "mmprog.result": 5, "mmprog.estimators": 5, "mmprog.cli": 5, "mmprog.bench": 5,
    "mmprog.reproduce": 5, "mmprog.catalogue": 5, "mmprog.duality": 5, "mmprog.inspect": 5, "mmprog.tagging": 5,
    "mmprog.linf": 5, "mmprog.crfsuite": 5, "mmprog.report": 5, "mmprog.parsing": 5,
    "mmprog.engine": 4,
    "mmprog.programs": 3,
    "mmprog.cuts": 2,
    "mmprog.features": 1,
    "mmprog.inference": 0, "mmprog.solvers": 0, "mmprog.datasets": 0, "mmprog.projections": 0, "mmprog.metrics": 0,
    "mmprog.latex": 0, "mmprog.exceptions": 0, "mmprog.version": 0, "mmprog.kernels": 0, "mmprog.simplex": 0,
    "mmprog.tag_schemes": 0, "mmprog.plots": 0, "mmprog.export": 0,
}


def module_name(path):
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def floor(name):
    best = max((p for p in FLOORS if name == p or name.startswith(p + ".")), key=len, default=None)
    assert best is not None, f"{name} is on no floor of docs/architecture.md: give it one in FLOORS"
    return FLOORS[best]


def is_module(name):
    path = PKG.parent / Path(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports():
    """(importer, imported module, names, line) for every import of a package module, wherever it stands."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        me = module_name(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out += [(me, a.name, [], node.lineno) for a in node.names if a.name.split(".")[0] == "mmprog"]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "mmprog":
                    continue
                names = [a.name for a in node.names]
                # "from pkg import mod" imports the module pkg.mod
                for n in names:
                    if is_module(f"{target}.{n}"):
                        out.append((me, f"{target}.{n}", [], node.lineno))
                rest = [n for n in names if not is_module(f"{target}.{n}")]
                if rest or not names:
                    out.append((me, target, rest, node.lineno))
    return out


IMPORTS = imports()


def test_every_import_points_down():
    up = [f"{a}:{line} imports {b} (floor {floor(a)} -> {floor(b)})" for a, b, _, line in IMPORTS
          if a != "mmprog" and floor(b) > floor(a)]
    assert not up, "\n".join(up)


def test_no_import_circle():
    graph = {}
    for a, b, _, _ in IMPORTS:
        if a != b and not a.startswith(b + ".") and b != "mmprog":   # a module's own package is loaded anyway
            graph.setdefault(a, set()).add(b)
    seen, stack, circles = set(), [], []

    def visit(node):
        if node in stack:
            circles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_programs_import_neither_the_engine_nor_the_face():
    bad = [f"{a}:{line} imports {b}" for a, b, _, line in IMPORTS
           if floor(a) == FLOORS["mmprog.programs"] and floor(b) > FLOORS["mmprog.programs"]]
    assert not bad, "\n".join(bad)


def test_the_engine_names_no_particular_program():
    allowed = {"mmprog.programs", "mmprog.programs.base"}
    bad = [f"{a}:{line} imports {b}" for a, b, _, line in IMPORTS
           if a.startswith("mmprog.engine") and b.startswith("mmprog.programs") and b not in allowed]
    assert not bad, "\n".join(bad)


def test_no_private_name_crosses_a_module():
    bad = [f"{a}:{line} takes {n} from {b}" for a, b, names, line in IMPORTS for n in names
           if n.startswith("_") and not n.startswith("__")]
    assert not bad, "\n".join(bad)


def test_every_import_resolves():
    """Every import of a package module, inside functions too, names a module and names that exist: a module moved
    without its importers is caught here, not when a rarely run path (a bench, a CLI branch) first reaches it."""
    import importlib
    bad = []
    for a, b, names, line in IMPORTS:
        if not is_module(b):
            bad.append(f"{a}:{line} imports {b}, which is no module")
            continue
        mod = importlib.import_module(b)
        bad += [f"{a}:{line} takes {n} from {b}, which has no such name" for n in names
                if n != "*" and not hasattr(mod, n)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", ["mmprog.engine.loop", "mmprog.programs.m3n", "mmprog.cuts.working_set"])
def test_the_checker_sees_imports_inside_functions(name):
    # the checks above would pass vacuously if imports inside functions were missed: each of these modules has some
    assert any(a == name for a, _, _, _ in IMPORTS)


def test_the_checker_fails_on_an_upward_import(tmp_path, monkeypatch):
    """A program module importing the face is caught (the check can fail)."""
    global IMPORTS
    monkeypatch.setattr("test_architecture.IMPORTS", IMPORTS + [("mmprog.programs.m3n", "mmprog.api", ["fit"], 1)])
    with pytest.raises(AssertionError, match="mmprog.programs.m3n:1 imports mmprog.api"):
        test_every_import_points_down()


#: the longest function the engine may hold (issue 36: "the longest function of the engine under 80 lines")
ENGINE_FUNCTION_LINES = 80


def engine_function_lengths():
    """(lines from ``def`` to the last line of the body, module:function) of every function and method in
    mmprog/engine/, decorators and docstrings included."""
    out = []
    for path in sorted((PKG / "engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((node.end_lineno - node.lineno + 1, f"{module_name(path)}:{node.name}"))
    return out


def test_every_engine_function_is_shorter_than_80_lines():
    long = sorted(f"{where}: {n} lines" for n, where in engine_function_lengths() if n >= ENGINE_FUNCTION_LINES)
    assert not long, "\n".join(long)


def test_the_length_check_sees_the_loop():
    # vacuous if the engine's functions were missed: its loop's stages and the sample generation are among them
    names = {where for _, where in engine_function_lengths()}
    assert {"mmprog.engine.loop:run", "mmprog.engine.sample_generation:run"} <= names
