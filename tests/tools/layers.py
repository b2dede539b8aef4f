#!/usr/bin/env python3
"""
layers.py: papo's source files form layers, calls and includes going one
way only (issue 23; docs/ARCHITECTURE.md, "Layers").  This checks it.

Files are grouped in units: a .c, its own .h and its private header
X_int.h are one (server/mcp/mcp.c, server/mcp/mcp.h and server/mcp/mcp_int.h are
"server/mcp": the private header is what the module's files share, and
it may include the public one); any other header with no .c of its
name is a unit of its own.  Two graphs join them:

  includes  A includes a header of B (`#include "..."` lines);
  calls     A's object uses a symbol B's object defines (`nm` of the
            objects CMake built for the papo_room and papo_node libraries
            and papo).

Neither may have a cycle (units that reach each other, directly or round
about): such files are one module spread out, none of them read, tested
or replaced without the others.  And a folder may include of another
only what that one publishes (RULES): server/ only node/node.h of node/;
sim/ (the simulator) nothing of server/, and nothing includes it;
and node/'s folders are layers: wire < store < net < room < node.c;
server/'s: http < api, mcp, oauth < daemon < cli.

usage: layers.py [--only DIR]... BUILD_DIR SOURCE_DIR
  --only DIR  check only the units under DIR (repeatable): they still
              break the include rules by including others, but cycles
              are looked for among the checked units alone.
Exits 0 when all is well, 1 on a cycle or a forbidden include, 2 when
there is nothing built to read.
"""
import argparse
import os
import re
import subprocess
import sys

DIRS = ("lib", "node", "server", "sim")  # the project's sources
TARGETS = ("papo_room", "papo_node", "papo-full", "papo")       # whose objects make the call graph
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')
# Files under the first folder may include of the second only these.
# node/'s folders are layers too, each above the ones before it: wire
# (pure codecs) < store < net (sockets and reachability, which knows no
# room) < room < node/node.c, the thread.
NODE_TOP = {"node/node.h"}
# And server/'s: http < api, mcp, oauth (side by side) < daemon < cli.
SERVER_BELOW = [("server/" + a + "/", "server/" + b + "/") for a, b in (
    ("http", "api"), ("http", "mcp"), ("http", "oauth"), ("http", "daemon"),
    ("http", "cli"), ("api", "mcp"), ("api", "oauth"), ("mcp", "api"),
    ("mcp", "oauth"), ("oauth", "api"), ("oauth", "mcp"), ("api", "daemon"),
    ("mcp", "daemon"), ("oauth", "daemon"), ("api", "cli"), ("mcp", "cli"),
    ("oauth", "cli"), ("daemon", "cli"))]
RULES = (("server/", "node/", {"node/node.h"}),
         ("node/", "server/", set()),
         ("lib/", "node/", set()),
         ("lib/", "server/", set()),
         ("node/wire/", "node/store/", set()),
         ("node/wire/", "node/net/", set()),
         ("node/wire/", "node/room/", set()),
         ("node/store/", "node/net/", set()),
         ("node/store/", "node/room/", set()),
         ("node/net/", "node/room/", set()),
         *((d, h, set()) for d in ("node/wire/", "node/store/", "node/net/",
                                   "node/room/") for h in NODE_TOP),
         *((a, b, set()) for a, b in SERVER_BELOW),
         # The simulator (sim/) sits above the room layer and beside
         # node.c: nothing includes it, and it includes nothing of
         # server/.  Its objects are not in the call graph: its fake of
         # node/net defines the net's symbols, which the graph takes from
         # node/net itself.
         ("lib/", "sim/", set()), ("node/", "sim/", set()),
         ("server/", "sim/", set()), ("sim/", "server/", set()))


def unit(path):
    """server/mcp/mcp.c, server/mcp/mcp.h and server/mcp/mcp_int.h -> server/mcp."""
    base = os.path.splitext(path)[0]
    return base[:-len("_int")] if base.endswith("_int") else base


def sources(root):
    """Every .c and .h of the project, relative to root."""
    return {os.path.relpath(os.path.join(d, n), root)
            for top in DIRS for d, _, names in os.walk(os.path.join(root, top))
            for n in names if n.endswith((".c", ".h"))}


def includes(root, files):
    """(file, line, header) for each include of a project header."""
    for f in sorted(files):
        with open(os.path.join(root, f), errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                m = INCLUDE.match(text)
                if not m:
                    continue
                near = os.path.join(os.path.dirname(f), m[1])
                for h in map(os.path.normpath, (near, m[1])):
                    if h in files:
                        yield f, i, h
                        break


def symbols(build, files):
    """{unit: (defined, undefined)} from nm of the targets' objects."""
    out = {}
    for t in TARGETS:
        top = os.path.join(build, "CMakeFiles", t + ".dir")
        for d, _, names in os.walk(top):
            for n in (n for n in names if n.endswith(".o")):
                src = os.path.relpath(os.path.join(d, n), top)[:-2]
                if src not in files:
                    continue            # generated, or a stale object
                nm = subprocess.run(["nm", "-P", os.path.join(d, n)],
                                    capture_output=True, text=True,
                                    check=True).stdout
                defs, undefs = set(), set()
                for line in nm.splitlines():
                    name, kind = line.split()[:2]
                    if kind == "U":
                        undefs.add(name)
                    elif kind.isupper():        # lower case: file-local
                        defs.add(name)
                out[unit(src)] = (defs, undefs)
    return out


def cycles(edges, keep):
    """Strongly connected components of more than one unit (Tarjan's),
    among the units of keep and the edges between them."""
    index, low, stack, found = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, {}):
            if w not in keep:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(keep):
        if v not in index:
            visit(v)
    return found


def report(kind, edges, keep, why):
    """Prints each cycle among keep, with why of every edge inside it;
    returns how many there are."""
    found = cycles(edges, keep)
    for comp in found:
        print(f"{kind}: cycle of {len(comp)} units: {' '.join(comp)}")
        for a in comp:
            for b in sorted(set(edges.get(a, {})) & set(comp)):
                print(f"  {a} -> {b}  {why(edges[a][b])}")
    return len(found)


def main():
    p = argparse.ArgumentParser(description="Checks papo's layers.")
    p.add_argument("--only", action="append", default=[], metavar="DIR")
    p.add_argument("build")
    p.add_argument("root")
    a = p.parse_args()
    only = tuple(os.path.normpath(d) + "/" for d in a.only)
    files = sources(a.root)
    keep = {unit(f) for f in files if not only or f.startswith(only)}
    bad = 0

    inc = {}                        # {a: {b: ["file:line", ...]}}
    for f, line, h in includes(a.root, files):
        if unit(f) != unit(h):
            inc.setdefault(unit(f), {}).setdefault(unit(h), []).append(
                f"{f}:{line}")
        for who, of, allowed in RULES:
            if (unit(f) in keep and f.startswith(who) and h.startswith(of)
                    and h not in allowed):
                print(f"{f}:{line}: includes {h}: {who} may include only "
                      f"{', '.join(sorted(allowed)) or 'nothing'} of {of}")
                bad += 1
    bad += report("includes", inc, keep, lambda w: w[0])

    syms = symbols(a.build, files)
    if not syms:
        print(f"layers: no objects of {', '.join(TARGETS)} under {a.build}: "
              "build first", file=sys.stderr)
        return 2
    owner = {s: u for u, (defs, _) in syms.items() for s in defs}
    calls = {}                      # {a: {b: [symbol, ...]}}
    for u, (_, undefs) in syms.items():
        for s in sorted(undefs):
            if owner.get(s, u) != u:
                calls.setdefault(u, {}).setdefault(owner[s], []).append(s)
    bad += report("calls", calls, keep, lambda w: w[0] + (
        f" (+{len(w) - 1} more)" if len(w) > 1 else ""))

    print(f"layers: {'failed' if bad else 'ok'} ({len(keep & set(syms))} "
          f"objects, {len(keep)} units"
          f"{' under ' + ', '.join(a.only) if a.only else ''})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
