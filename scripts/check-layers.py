#!/usr/bin/env python3
"""Checks fnabi's module graph: within each crate, the top-level modules
form layers, each importing only modules of lower layers (no cycles, no
upward imports). Reads `crate::module` paths (in `use` lines and inline
paths, outside comments); a module's submodules count as the module.
Prints the graph with --graph; exits 1 naming every offending import.

The layer order of each crate is declared below, lowest first. A module
may import any module listed before it, never one listed after it or in
its own layer. A new module must be added here (the check fails on an
unlisted module), which is the point: placing it is a design decision.
"""
import os
import re
import sys

# crate source dir -> layers, lowest first (modules of one layer may not
# import each other).
LAYERS = {
    "crates/fnabi-abi/src": [
        ["error", "limits"],
        ["mangle", "scalar", "cconv"],
        ["structure"],
        ["raw"],
        ["sip"],
        ["attrs"],
        ["reflection", "mlir"],
        ["vmfb"],
        ["lib"],
    ],
    "crates/fnabi-core/src": [
        ["scratch"],
        ["error", "cache", "progress", "tool"],
        ["array"],
        ["value", "layout"],
        ["bind"],
        ["structure", "buffer", "tensor", "ndarray", "text", "extract"],
        ["memory", "deferred"],
        ["npy", "json"],
        ["coerce"],
        ["nest"],
        ["vm"],
        ["conventions", "function"],
        ["inputs"],
        ["lib"],
    ],
    "crates/fnabi-mlir/src": [
        ["symbol"],
        ["elf", "trampoline", "args", "cache", "llvm_level", "tool", "tiling", "vector_entry"],
        ["memref", "abi_embed"],
        ["compile"],
        ["runtime_utils"],
        ["program"],
        ["host"],
        ["externals"],
        ["call"],
        ["loader"],
        ["module"],
        ["lib"],
    ],
}

COMMENT = re.compile(r"//.*")
PATH = re.compile(r"\bcrate::(\{[^}]*\}|[a-z_][a-z0-9_]*)")


def top_module(root, path):
    rel = os.path.relpath(path, root)[: -len(".rs")].split(os.sep)
    return "lib" if rel == ["lib"] else rel[0]


def imports(text):
    names = set()
    for line in text.splitlines():
        line = COMMENT.sub("", line)
        for m in PATH.finditer(line):
            g = m.group(1)
            if g.startswith("{"):
                names.update(re.findall(r"(?:^|[{,\s])([a-z_][a-z0-9_]*)", g))
            else:
                names.add(g)
    # A brace group may span lines: `use crate::{\n a::X,\n b };`
    for m in re.finditer(r"\bcrate::\{([^}]*)\}", COMMENT.sub("", text), re.S):
        names.update(re.findall(r"(?:^|[{,\s])([a-z_][a-z0-9_]*)(?=::|\s*[,}]|$)", m.group(1)))
    names.discard("self")
    return names


def check(repo, show_graph):
    bad = []
    for src, layers in LAYERS.items():
        root = os.path.join(repo, src)
        level = {m: i for i, layer in enumerate(layers) for m in layer}
        edges = {}
        for dirpath, _, files in os.walk(root):
            for f in files:
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, f)
                mod = top_module(root, path)
                if mod not in level:
                    bad.append(f"{src}: module `{mod}` is in no layer (add it to scripts/check-layers.py)")
                    continue
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for dep in imports(text):
                    if dep == mod or dep not in level and dep not in edges:
                        if dep != mod and dep not in level:
                            continue
                    if dep == mod:
                        continue
                    edges.setdefault(mod, set()).add(dep)
                    if mod != "lib" and level[dep] >= level[mod]:
                        where = os.path.relpath(path, repo)
                        kind = "same layer" if level[dep] == level[mod] else "upward"
                        bad.append(f"{where}: `{mod}` imports `{dep}` ({kind})")
        if show_graph:
            print(f"{src}:")
            for layer in layers:
                for m in layer:
                    deps = sorted(edges.get(m, ()), key=lambda d: level[d])
                    print(f"  {m} -> {' '.join(deps)}")
    return bad


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = check(repo, "--graph" in sys.argv)
    for b in sorted(set(bad)):
        print(f"check-layers: {b}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print("check-layers: no cycles, no upward imports")


if __name__ == "__main__":
    main()
