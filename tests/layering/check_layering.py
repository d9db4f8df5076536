#!/usr/bin/env python3
"""Checks every #include of the project against its architecture (exit 1 on a violation).

- allocator/, traces/ and kernels/ include nothing of the other modules (nor sim/).
- Inside sim/, a folder includes only itself and the folders listed before it in the layer
  list at the top of sim/CMakeLists.txt (the one place the order is written).
- Inside allocator/ likewise, by the layer list at the top of allocator/CMakeLists.txt; a
  file at the top of allocator/ is in layer "." unless its stem is a layer of its own.

  python3 tests/layering/check_layering.py [REPO_ROOT]
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
MODULES = ("allocator", "traces", "kernels", "sim")
SOURCES = (".h", ".cpp", ".cu", ".cuh")


def layer_list(root, module):
    """The layer list: the comment lines '#   name   what' of MODULE/CMakeLists.txt's header."""
    layers = []
    for line in (root / module / "CMakeLists.txt").read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#   ([a-z_]+|\.)\s+\S", line)
        if m:
            layers.append(m.group(1))
    return layers


def sim_layers(root):
    return layer_list(root, "sim")


def allocator_layer(parts, rank):
    """The layer of allocator file allocator/PARTS...: its folder, or for a top-level file
    its stem when that names a layer, else "."."""
    if len(parts) > 2:
        return parts[1]
    stem = parts[-1].split(".")[0]
    return stem if stem in rank else "."


def allocator_violations(root):
    layers = layer_list(root, "allocator")
    if "." not in layers or "pool" not in layers:
        yield f"allocator/CMakeLists.txt: no layer list found (got {layers})"
        return
    rank = {name: i for i, name in enumerate(layers)}
    for folder in sorted(p.name for p in (root / "allocator").iterdir() if p.is_dir()):
        if folder not in rank:
            yield f"allocator/{folder}/: not in the layer list of allocator/CMakeLists.txt"
    for path in sorted((root / "allocator").rglob("*")):
        if path.suffix not in SOURCES:
            continue
        rel = path.relative_to(root)
        text = path.read_text(errors="replace")
        src = allocator_layer(rel.parts, rank)
        for m in INCLUDE.finditer(text):
            parts = m.group(1).split("/")
            if parts[0] != "allocator":
                continue
            dst = allocator_layer(parts, rank)
            if src == dst:
                continue
            line = text.count("\n", 0, m.start()) + 1
            if dst not in rank:
                yield f"{rel}:{line}: includes {m.group(1)}: allocator/{dst}/ is not in the layer list"
            elif src in rank and rank[dst] > rank[src]:
                yield (f"{rel}:{line}: allocator layer {src} includes {m.group(1)}: {dst} is a higher layer "
                       f"(order: {' < '.join(layers)})")


def violations(root):
    layers = sim_layers(root)
    if len(layers) < 3:
        yield f"sim/CMakeLists.txt: no layer list found (got {layers})"
        return
    rank = {name: i for i, name in enumerate(layers)}
    for folder in sorted(set(p.name for p in (root / "sim").iterdir() if p.is_dir())):
        if folder not in rank:
            yield f"sim/{folder}/: not in the layer list of sim/CMakeLists.txt"
    for module in MODULES:
        for path in sorted((root / module).rglob("*")):
            if path.suffix not in SOURCES:
                continue
            rel = path.relative_to(root)
            text = path.read_text(errors="replace")
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                top = target.split("/")[0]
                if top not in MODULES or top == module and module != "sim":
                    continue
                line = text.count("\n", 0, m.start()) + 1
                if module != "sim":
                    yield f"{rel}:{line}: {module}/ includes {target}: {module}/ depends on no other module"
                    continue
                parts = target.split("/")
                if top != "sim" or len(parts) < 3:
                    continue
                src, dst = rel.parts[1], parts[1]
                if src == dst:
                    continue
                if dst not in rank:
                    yield f"{rel}:{line}: includes {target}: sim/{dst}/ is not in the layer list"
                elif rank[dst] > rank[src]:
                    yield (f"{rel}:{line}: sim/{src}/ includes {target}: sim/{dst}/ is a higher layer "
                           f"(order: {' < '.join(layers)})")
    yield from allocator_violations(root)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    found = list(violations(root))
    for v in found:
        print(v)
    checked = sum(1 for m in MODULES for p in (root / m).rglob("*") if p.suffix in SOURCES)
    print(f"layering: {checked} files checked, {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
