#!/usr/bin/env python3
"""Checks the project's layering (issue 8 item 6; STYLE §12, §23). Python 3 standard library only.

The allowed dependencies live in one place, the folders' CMake link lines: CMake writes its own
target graph (cmake/link_graph.cmake, at configure time) and this script checks the sources
against it:

  a. every `#include "<project file>"` in kernels/, shared/, worker/ and gateway/ names a file of
     the including file's own library or of one it links (directly or not); the link graph of the
     project's libraries has no cycle; the worker's and the gateway's layers keep their declared
     order (CHAINS); kernels links nothing; shared links nothing of worker/ or gateway/; worker/
     and gateway/ never reach each other; gateway/relay/ names no door's server types (gRPC's
     server side, Beast/Asio); only the x86 ISA folders of kernels/ include kernels/x86/ and each
     other's headers (the rest of the project reaches them through the KernelTable; dispatch.cc
     includes the kernels_<isa>.h declarations);
  b. no file under kernels/, a worker/ subfolder or the gRPC-free part of shared/ includes a gRPC or
     protobuf header (generated smallmind/v1/* headers included);
  c. the libraries of those folders have no gRPC or protobuf in their link closure, and their
     archives reference no gRPC or protobuf symbol (nm), so the engine thread cannot call gRPC.

Usage: check_layers.py --root SRC --graph BUILD/tests/layering/link_graph.txt
                       --archives BUILD/tests/layering/archives.txt [--nm nm]
Exit status 0 when everything holds; otherwise 1, with one line per violation.
"""

import argparse
import os
import re
import subprocess
import sys

CHECKED_ROOTS = ("kernels", "shared", "worker", "gateway")
# Each layered process folder's declared layer order (worker/CMakeLists.txt, gateway/CMakeLists.txt),
# lowest first, as chains of layers ("" is the folder itself, the process). A library of such a
# folder may link another of it only when the chains lead down from the first to the second;
# subfolders named in no chain are held to the link lines and cycles alone.
CHAINS = {
    "worker": (
        (("types",), ("tokenizer", "kv"), ("sample", "model"), ("sched",), ("engine",), ("",)),
        (("model",), ("modelgen",), ("loader",), ("",)),
    ),
    "gateway": (
        (("admission", "security"), ("workers",), ("metrics",), ("models",), ("relay",),
         ("grpc", "http"),
         ("",)),
        (("jinja",), ("chat",), ("http",), ("",)),
    ),
}
# gateway/relay/ carries a request for whichever door it came in by: it must not know the doors'
# server types (gRPC's server side, HTTP).
DOOR_NEUTRAL = ("gateway/relay/",)
DOOR_TYPES = re.compile(r'#\s*include\s*[<"](grpcpp/server|grpcpp/support/server_callback|'
                        r'boost/beast|boost/asio)|\bgrpc::(Server\w*|CallbackServerContext)\b|'
                        r'\bbeast::')
# Top-level folders a folder's libraries must never reach.
FORBIDDEN_TOP = {
    "kernels": {"shared", "worker", "gateway", "proto", "cli"},
    "shared": {"worker", "gateway", "proto", "cli"},
    "worker": {"gateway", "cli"},
    "gateway": {"worker", "cli"},
}
GRPC_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](grpc/|grpcpp/|grpc\+\+/|google/protobuf/|'
                          r'smallmind/v1/)')
PROJECT_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
GRPC_NAME = re.compile(r"grpc|protobuf", re.IGNORECASE)
GRPC_SYMBOL = re.compile(r"\bgrpc(pp)?::|\bgrpc_[a-z]|\bgpr_[a-z]|google::protobuf")


class Target:
    def __init__(self, fields):
        self.name, self.type, imported, self.source_dir, self.own_dir, links, sources = fields
        self.imported = imported.upper() == "TRUE"
        self.links = [x for x in links.split(";") if x]
        self.sources = [x for x in sources.split(";") if x]


def read_graph(path):
    targets = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 7:
                sys.exit(f"check_layers: malformed line in {path}: {line!r}")
            t = Target(fields)
            targets[t.name] = t
    return targets


def rel(root, path):
    r = os.path.relpath(path, root)
    return None if r.startswith("..") else r.replace(os.sep, "/")


def closure(targets, name, cache):
    """Every target and plain library `name` reaches through its links (not itself)."""
    if name in cache:
        return cache[name]
    cache[name] = set()  # a cycle ends here; find_cycles reports it
    out = set()
    for link in targets[name].links if name in targets else []:
        out.add(link)
        if link in targets:
            out |= closure(targets, link, cache)
    cache[name] = out
    return out


def find_cycles(targets, names):
    errors, state = [], {}

    def visit(n, path):
        state[n] = 1
        for m in targets[n].links:
            if m not in names:
                continue
            if state.get(m) == 1:
                cycle = path[path.index(m):] + [m]
                errors.append("link cycle: " + " -> ".join(cycle))
            elif m not in state:
                visit(m, path + [m])
        state[n] = 2

    for n in sorted(names):
        if n not in state:
            visit(n, [n])
    return errors


class Layout:
    """Maps project files and folders to the targets that own them."""

    def __init__(self, root, targets):
        self.root = root
        self.by_file = {}  # file -> target, from the targets' sources and their headers
        self.by_dir = {}  # folder -> target, from SMALLMIND_DIR
        self.top = {}  # target -> its top-level folder
        for t in targets.values():
            if t.imported:
                continue
            src_dir = rel(root, t.source_dir) if t.source_dir else None
            if src_dir:
                self.top[t.name] = src_dir.split("/")[0]
            own = rel(root, t.own_dir) if t.own_dir else None
            if own:
                self.by_dir[own] = t.name
            for s in t.sources:
                path = s if os.path.isabs(s) else os.path.join(t.source_dir, s)
                r = rel(root, path)
                if r is None:
                    continue
                self.by_file[r] = t.name
                stem, ext = os.path.splitext(r)
                if ext == ".cc" and os.path.exists(os.path.join(root, stem + ".h")):
                    self.by_file.setdefault(stem + ".h", t.name)

    def owner(self, path):
        if path.startswith("smallmind/v1/"):
            return "smallmind_proto"
        if path in self.by_file:
            return self.by_file[path]
        d = os.path.dirname(path)
        while True:
            if d in self.by_dir:
                return self.by_dir[d]
            if not d:
                return None
            d = os.path.dirname(d)

    def layer_folder(self, target):
        """(top, subfolder) of `target` in a layered folder of CHAINS ('' for the folder itself),
        or None."""
        for d, name in self.by_dir.items():
            if name != target:
                continue
            top, _, sub = d.partition("/")
            if top in CHAINS:
                return top, sub
        return None

    def worker_folder(self, target):
        """The worker subfolder ('' for worker/ itself) that `target` is, or None."""
        f = self.layer_folder(target)
        return f[1] if f and f[0] == "worker" else None


def grpc_free(path, layout):
    if path.startswith("kernels/"):
        return True
    if path.startswith("worker/") and path.count("/") >= 2:
        return True
    return path.startswith("shared/") and layout.owner(path) == "smallmind_shared"


def source_files(root):
    for top in CHECKED_ROOTS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".h", ".cc")):
                    yield rel(root, os.path.join(dirpath, f))


def check_includes(root, layout, targets, cache, errors):
    """(a) includes follow the link lines; (b) gRPC-free files include no gRPC/protobuf header."""
    n_files = n_includes = 0
    for path in source_files(root):
        owner = layout.owner(path)
        if owner is None:
            errors.append(f"{path}: belongs to no library (add its folder to a CMake library)")
            continue
        n_files += 1
        allowed = closure(targets, owner, cache) | {owner}
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                if grpc_free(path, layout) and GRPC_INCLUDE.match(line):
                    errors.append(f"{path}:{lineno}: includes a gRPC/protobuf header in a gRPC-free "
                                  f"layer: {line.strip()}")
                m = PROJECT_INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if not inc.startswith("smallmind/v1/") and not os.path.exists(
                        os.path.join(root, inc)):
                    continue  # not a project file (a system or third-party header)
                n_includes += 1
                target = layout.owner(inc)
                if target is None:
                    errors.append(f"{path}:{lineno}: includes {inc}, which belongs to no library")
                elif target not in allowed:
                    errors.append(f"{path}:{lineno}: includes {inc} ({target}), but {owner} does "
                                  f"not link {target}: the layering does not allow it")
    return n_files, n_includes


def check_links(layout, targets, cache, errors):
    """(a) cycles, layer order, forbidden top-level edges; (c) gRPC in gRPC-free closures."""
    project = {n for n, t in targets.items() if not t.imported}
    errors += find_cycles(targets, project)
    below = {top: declared_below(chains) for top, chains in CHAINS.items()}
    for name in sorted(project):
        folder = layout.layer_folder(name)
        reach = closure(targets, name, cache)
        if folder and folder[1] in below[folder[0]]:
            top_dir, sub = folder
            for link in targets[name].links:
                other = layout.layer_folder(link)
                if (other and other[0] == top_dir and other[1] in below[top_dir] and
                        other[1] not in below[top_dir][sub]):
                    errors.append(f"{name} links {link}, but {top_dir}/{other[1]} is not below "
                                  f"{top_dir}/{sub} in the layer order {format_layers(top_dir)}")
        top = layout.top.get(name)
        for other in sorted(reach & project):
            if layout.top.get(other) in FORBIDDEN_TOP.get(top, set()):
                errors.append(f"{name} ({top}/) reaches {other} ({layout.top[other]}/), "
                              f"which {top}/ must never depend on")
        if top == "kernels" and targets[name].type.endswith("LIBRARY") and reach:
            errors.append(f"{name} links {sorted(reach)}: kernels links nothing")
        if is_grpc_free_target(name, layout):
            bad = sorted(x for x in reach if GRPC_NAME.search(x))
            if bad:
                errors.append(f"{name} is a gRPC-free layer but links {', '.join(bad)}")


def is_grpc_free_target(name, layout):
    folder = layout.worker_folder(name)
    return (folder not in (None, "") or layout.top.get(name) == "kernels" or
            name == "smallmind_shared")


def check_archives(path, nm, layout, errors):
    """(c) the gRPC-free archives reference no gRPC or protobuf symbol."""
    checked = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, archive = line.rstrip("\n").split("\t")
            if not is_grpc_free_target(name, layout):
                continue
            if not os.path.exists(archive):
                errors.append(f"{archive} is missing: build before running this check")
                continue
            out = subprocess.run([nm, "-C", "--undefined-only", archive], check=True,
                                 capture_output=True, text=True).stdout
            bad = sorted({s.strip() for s in out.splitlines() if GRPC_SYMBOL.search(s)})
            if bad:
                errors.append(f"{name} ({archive}) references gRPC/protobuf symbols, e.g. "
                              f"{bad[0]} ({len(bad)} in all)")
            checked.append(name)
    return checked


def declared_below(chains):
    """Subfolder -> the subfolders the declared chains put below it."""
    down = {}
    for chain in chains:
        for lower, upper in zip(chain, chain[1:]):
            for u in upper:
                down.setdefault(u, set()).update(lower)
            for f in lower:
                down.setdefault(f, set())
    below = {}

    def reach(f):
        if f not in below:
            below[f] = set()
            for g in down[f]:
                below[f] |= {g} | reach(g)
        return below[f]

    for f in down:
        reach(f)
    return below


def format_layers(top):
    return "; ".join(" -> ".join(", ".join(f or top for f in layer) for layer in chain)
                     for chain in CHAINS[top])


ISA_DIRS = ("kernels/x86/", "kernels/avx2/", "kernels/avx512/", "kernels/avx_vnni/", "kernels/amx/")
ISA_TABLE_HEADER = re.compile(r"^kernels/(avx2|avx512|avx_vnni|amx)/kernels_\1\.h$")


def check_isa_includes(root, errors):
    """Headers of the x86 ISA folders are included only inside them (and the tables' declarations
    by kernels/dispatch.cc): code built without an ISA's flags must not inline its instructions."""
    for path in source_files(root):
        if path.startswith(ISA_DIRS):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = PROJECT_INCLUDE.match(line)
                if not m or not m.group(1).startswith(ISA_DIRS):
                    continue
                if path == "kernels/dispatch.cc" and ISA_TABLE_HEADER.match(m.group(1)):
                    continue
                errors.append(f"{path}:{lineno}: includes {m.group(1)}, an ISA folder's header, "
                              f"outside the ISA folders (built without their flags)")


def check_door_neutral(root, errors):
    """gateway/relay/ names no door's server types."""
    for path in source_files(root):
        if not path.startswith(DOOR_NEUTRAL):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                if DOOR_TYPES.search(line.split("//")[0]):
                    errors.append(f"{path}:{lineno}: the relay must not know the doors' server "
                                  f"types: {line.strip()}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True)
    p.add_argument("--graph", required=True)
    p.add_argument("--archives", required=True)
    p.add_argument("--nm", default="nm")
    args = p.parse_args()
    root = os.path.realpath(args.root)
    targets = read_graph(args.graph)
    layout = Layout(root, targets)
    cache, errors = {}, []
    n_files, n_includes = check_includes(root, layout, targets, cache, errors)
    check_links(layout, targets, cache, errors)
    check_door_neutral(root, errors)
    check_isa_includes(root, errors)
    archives = check_archives(args.archives, args.nm, layout, errors)
    for e in errors:
        print("check_layers: " + e)
    if errors:
        print(f"check_layers: {len(errors)} violation(s); the allowed dependencies are the CMake "
              f"link lines (worker/: {format_layers('worker')}; gateway/: {format_layers('gateway')})")
        return 1
    print(f"check_layers: {n_files} files, {n_includes} project includes follow the link lines; "
          f"no cycle; worker layers {format_layers('worker')}; gateway layers "
          f"{format_layers('gateway')}; gRPC-free and free of gRPC symbols: "
          f"{', '.join(archives)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
