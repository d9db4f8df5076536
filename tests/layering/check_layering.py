#!/usr/bin/env python3
"""Checks every #include of the project against its architecture (exit 1 on a violation).

- allocator/, traces/ and kernels/ include nothing of the other modules (nor sim/).
- Inside sim/, a folder includes only itself and the folders listed before it in the layer
  list at the top of sim/CMakeLists.txt (the one place the order is written).

  python3 tests/layering/check_layering.py [REPO_ROOT]
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
MODULES = ("allocator", "traces", "kernels", "sim")
SOURCES = (".h", ".cpp", ".cu", ".cuh")


def sim_layers(root):
    """The layer list: the comment lines '#   name   what' of sim/CMakeLists.txt's header."""
    layers = []
    for line in (root / "sim" / "CMakeLists.txt").read_text().splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#   ([a-z_]+)\s+\S", line)
        if m:
            layers.append(m.group(1))
    return layers


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
