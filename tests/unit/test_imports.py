"""Imports run one way (DESIGN.md, rule 0): dialect/ <- lowering/ <- python/xlair <- tools/,
and no cycle between modules inside a layer either.

Every .py file of the four source trees is parsed with `ast` (nothing is imported) and every
import of an xlair module is an edge of the graph: at module level and inside functions and
methods alike (an import placed inside a function to dodge a cycle is still a cycle; so is
one under `if TYPE_CHECKING:`).
`from .pkg import name` where `pkg.name` is a module is an edge to that module; otherwise the
edge goes to the module (or package `__init__`) named.  The parent packages Python initialises
on the way (`xlair`, `xlair.dialect` for `xlair.dialect.core`) are not edges: every module lives
inside `xlair`, whose `__init__` sits on top of the graph.
"""
from __future__ import annotations

import ast
import pathlib
from collections import deque

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: the source trees and the packages pyproject.toml maps them to
TREES = {"xlair": ROOT / "python" / "xlair", "xlair.dialect": ROOT / "dialect",
         "xlair.lowering": ROOT / "lowering", "xlair.tools": ROOT / "tools"}

#: the layers, lowest first: a module may import only modules of its own layer or lower ones
LAYERS = ("xlair.dialect", "xlair.lowering", "xlair", "xlair.tools")


def layer(module: str) -> str:
    for name in ("xlair.dialect", "xlair.lowering", "xlair.tools"):
        if module == name or module.startswith(name + "."):
            return name
    return "xlair"


# ----------------------------------------------------------------------------------------
# the graph
# ----------------------------------------------------------------------------------------
def source_modules() -> dict[str, tuple[pathlib.Path, bool]]:
    """module name -> (file, is a package), for every .py file of the source trees."""
    mods = {}
    for pkg, root in TREES.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root)
            if "__pycache__" in rel.parts:
                continue
            parts = list(rel.with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            mods[".".join([pkg] + parts)] = (path, is_pkg)
    return mods


class Edge:
    __slots__ = ("src", "dst", "line", "where")

    def __init__(self, src: str, dst: str, line: int, where: str):
        self.src, self.dst, self.line, self.where = src, dst, line, where

    def __repr__(self):
        return f"{self.src} -> {self.dst} ({self.site()})"

    def site(self) -> str:
        return f"line {self.line}" + (f", in {self.where}" if self.where else "")


def _resolve(name: str, known) -> str | None:
    """The module `name` names (the longest known prefix of a dotted name), if an xlair one."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in known:
            return cand
    return None


def imports_of(module: str, source: str, is_pkg: bool, known) -> list[Edge]:
    """The edges of one module's source: its imports of xlair modules, wherever they are."""
    tree = ast.parse(source)
    package = module if is_pkg else module.rpartition(".")[0]
    edges: list[Edge] = []

    def add(target: str | None, node, where):
        if target is not None:
            edges.append(Edge(module, target, node.lineno, where))

    def visit(node, where: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(_resolve(alias.name, known), child, where)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    if child.level > 1:
                        base = base[:-(child.level - 1)]
                    base = ".".join(base + ([child.module] if child.module else []))
                else:
                    base = child.module or ""
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    add(sub if alias.name != "*" and sub in known else _resolve(base, known), child, where)
            visit(child, where)

    visit(tree, "")
    return edges


def import_graph() -> tuple[dict[str, set[str]], list[Edge]]:
    mods = source_modules()
    edges = [e for name, (path, is_pkg) in mods.items()
             for e in imports_of(name, path.read_text(), is_pkg, mods)]
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for e in edges:
        graph[e.src].add(e.dst)
    return graph, edges


# ----------------------------------------------------------------------------------------
# cycles
# ----------------------------------------------------------------------------------------
def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[list[str]]]:
    """For each import cycle (a strongly connected component of more than one module, or a
    module importing itself): the shortest cycle through each of its modules, as paths
    [a, b, ..., a], without repeats."""
    found = []
    for comp in strongly_connected(graph):
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        members = set(comp)
        paths, seen = [], set()
        for start in comp:
            path = _shortest_cycle(graph, start, members)
            key = frozenset(zip(path, path[1:]))
            if key not in seen:
                seen.add(key)
                paths.append(path)
        found.append(paths)
    return found


def _shortest_cycle(graph, start: str, members: set[str]) -> list[str]:
    prev: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [start] + path[::-1][1:] + [start] if v != start else [start, start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    raise AssertionError(f"{start} is on no cycle")


def describe(path: list[str], edges: list[Edge]) -> str:
    """`a -> b -> a`, each arrow with where the import is."""
    sites = {}
    for e in edges:
        sites.setdefault((e.src, e.dst), e)
    steps = [path[0]]
    for a, b in zip(path, path[1:]):
        steps.append(f"  -> {b}   (imported by {a}, {sites[(a, b)].site()})")
    return "\n".join(steps)


# ----------------------------------------------------------------------------------------
# the tests
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_graph_is_read(graph):
    """The parse finds the modules and their imports (module level and inside functions)."""
    g, edges = graph
    assert {"xlair", "xlair.builder", "xlair.runtime", "xlair.dialect.core", "xlair.dialect.ops.elementwise",
            "xlair.lowering", "xlair.tools.run"} <= set(g)
    assert "xlair.computation" in g["xlair.builder"]                 # from .computation import ...
    assert "xlair.dialect.core" in g["xlair.computation"]            # from xlair.dialect.core import ...
    assert "xlair.values" in g["xlair.runtime"]                      # from .values import ...
    assert "xlair.runtime" in g["xlair"]                             # from .runtime import ...
    assert "xlair" in g["xlair.tools.run"]                           # import xlair as xla
    assert any(e.where for e in edges)                               # imports inside functions


@pytest.mark.parametrize("tier", LAYERS)
def test_no_import_cycles(graph, tier):
    """No module of this layer is on an import cycle (reported per layer: each layer's cycles
    are one test)."""
    g, edges = graph
    mine = [paths for paths in cycles(g) if any(layer(m) == tier for p in paths for m in p)]
    if mine:
        text = []
        for k, paths in enumerate(mine, 1):
            modules = sorted({m for p in paths for m in p})
            text.append(f"cycle {k}: {len(modules)} modules import each other ({', '.join(modules)}):")
            text.extend(describe(p, edges) for p in paths)
        pytest.fail(f"{len(mine)} import cycle(s) through modules of {tier}:\n" + "\n\n".join(text),
                    pytrace=False)


def test_layers_import_only_lower_layers(graph):
    """dialect <- lowering <- xlair <- tools: no module imports a module of a higher layer."""
    _, edges = graph
    bad = [e for e in edges if LAYERS.index(layer(e.src)) < LAYERS.index(layer(e.dst))]
    if bad:
        pytest.fail("imports against the layer order (" + " < ".join(LAYERS) + "):\n" +
                    "\n".join(f"{e.src} ({layer(e.src)}) imports {e.dst} ({layer(e.dst)}), {e.site()}"
                              for e in bad), pytrace=False)


# -- the checker itself ------------------------------------------------------------------------
KNOWN = {"xlair", "xlair.a", "xlair.b", "xlair.pkg", "xlair.pkg.c", "xlair.dialect", "xlair.dialect.d"}


@pytest.mark.parametrize("module, is_pkg, line, dst", [
    ("xlair.a", False, "from . import b", "xlair.b"),
    ("xlair.a", False, "from .b import f", "xlair.b"),
    ("xlair.a", False, "from .pkg import c", "xlair.pkg.c"),
    ("xlair.a", False, "from .pkg import thing", "xlair.pkg"),
    ("xlair.a", False, "from . import thing", "xlair"),
    ("xlair.pkg.c", False, "from ..b import f", "xlair.b"),
    ("xlair.pkg", True, "from .c import f", "xlair.pkg.c"),
    ("xlair.a", False, "from xlair.dialect.d import f", "xlair.dialect.d"),
    ("xlair.a", False, "from xlair.dialect import d", "xlair.dialect.d"),
    ("xlair.a", False, "import xlair.dialect.d as d", "xlair.dialect.d"),
    ("xlair.a", False, "import xlair", "xlair"),
    ("xlair.a", False, "def f():\n class K:\n  def g(self):\n   from .b import f", "xlair.b"),
])
def test_imports_are_resolved(module, is_pkg, line, dst):
    assert [e.dst for e in imports_of(module, line, is_pkg, KNOWN)] == [dst]


def test_other_imports_are_not_edges():
    source = "import numpy\nfrom iree.compiler import ir\nimport os.path"
    assert imports_of("xlair.a", source, False, KNOWN) == []


def test_cycles_are_found():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert sorted(cycles(g)) == [[["a", "b", "c", "a"]], [["e", "e"]]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# ----------------------------------------------------------------------------------------
# the run side (DESIGN.md rule 9): what loading and calling an artifact imports
# ----------------------------------------------------------------------------------------
#: the run side's entry points: `import xlair` (whose __init__ imports the compile side's names
#: only when they are read) and xlair-run
RUN_SIDE = ("xlair", "xlair.tools.run")
#: modules of the compile side: the lowering, compiling, building and importing programs
COMPILE_SIDE = ("xlair.lowering", "xlair.compile", "xlair.builder", "xlair.ops", "xlair._opgen",
                "xlair.packed_entry", "xlair.stablehlo", "xlair.jax_bridge", "xlair.tools.compile",
                "xlair.tools.opt")
#: modules under a compile-side package that both halves read: plain data importing no other
#: xlair module (checked below), so they bring in nothing of the compile side
SHARED = {"xlair.lowering.targets": "the targets' descriptions (a Target's limits, read when loading too)"}
#: imports of the compile side a run-side module makes on purpose, inside the function that
#: needs it (where only the runtime is installed, that use is an XlaError naming the package)
ON_PURPOSE = {("xlair.tools.run", "xlair.tools.compile"): "xlair-run of a .mlir program compiles it"}


def _closure(graph, roots, skip=()) -> dict[str, str]:
    """Every module the roots import, directly or not (leaving out the edges `skip`): module ->
    the module that imports it."""
    seen, todo = {r: "" for r in roots}, deque(roots)
    while todo:
        m = todo.popleft()
        for d in sorted(graph.get(m, ())):
            if d not in seen and (m, d) not in skip:
                seen[d] = m
                todo.append(d)
    return seen


def test_the_run_side_imports_nothing_of_the_compile_side(graph):
    """The modules `import xlair` and xlair-run import, at module level or inside functions,
    are none of the compile side's (tests/e2e/test_run_side.py runs them with iree.compiler
    made unimportable; this says which import broke the boundary)."""
    g, _ = graph
    reach = _closure(g, RUN_SIDE, ON_PURPOSE)
    bad = sorted(m for m in reach if m not in SHARED and any(m == c or m.startswith(c + ".") for c in COMPILE_SIDE))

    def chain(m):
        out = [m]
        while reach[out[-1]]:
            out.append(reach[out[-1]])
        return " <- ".join(out)
    assert not bad, "the run side imports the compile side: " + "; ".join(chain(m) for m in bad)


@pytest.mark.parametrize("module", sorted(SHARED))
def test_shared_modules_import_no_other_xlair_module(graph, module):
    g, _ = graph
    assert not g[module], f"{module} ({SHARED[module]}) imports {sorted(g[module])}"


def test_the_boundary_check_sees_a_compile_side_import():
    """The closure above follows imports inside functions too (so the check can fail)."""
    g = {"xlair": {"xlair.runtime"}, "xlair.runtime": {"xlair.x"}, "xlair.x": {"xlair.compile"}}
    assert "xlair.compile" in _closure(g, ["xlair"])
