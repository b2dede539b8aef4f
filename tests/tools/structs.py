#!/usr/bin/env python3
"""
structs.py: no struct with more than 16 fields is seen by more than 4 .c
files, unless docs/ARCHITECTURE.md ("Large structs") lists it with its
reason.  A struct that many files see and that holds many things couples
those files to each other through every field: a new field, a changed
meaning, reaches all of them.

A struct's fields are the declarators of its body at its own depth
(`int a, b;` is two; a nested struct or union is one); it is seen by a
.c file that includes, directly or through other headers, the header
that defines it (a struct defined in a .c is seen by that file alone).

The list in docs/ARCHITECTURE.md is a table whose rows start with a
cell naming structs: "| `struct NAME` |" or "| `struct A`, `struct B` |".  A listed struct that no longer breaks the rule is
an error too: the list says what is true now.

usage: structs.py SOURCE_DIR
Exits 0 when all is well, 1 otherwise (each struct named, with its
fields and the files that see it).
"""
import os
import re
import sys

DIRS = ("lib", "node", "server")
FIELDS_MAX = 16
SEEN_MAX = 4
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
STRUCT = re.compile(r'\bstruct\s+([A-Za-z_]\w*)\s*\{')
ROW = re.compile(r'^\|\s*(`struct [^|]*)\|', re.M)
NAMED = re.compile(r'`struct ([A-Za-z_]\w*)`')


def strip(text):
    """The text without comments, strings and preprocessor lines."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return re.sub(r'^\s*#[^\n]*(\\\n[^\n]*)*', ' ', text, flags=re.M)


def top_level(text, sep):
    """text's parts between the seps that are outside (), [] and {}."""
    parts, depth, cur = [], 0, ''
    for ch in text:
        if ch in '{([':
            depth += 1
        elif ch in '})]':
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    return parts + [cur]


def fields(body):
    """How many fields a struct's body declares at its own depth: the
    declarators of each declaration (`int a, b;` is two)."""
    decls = [d for d in top_level(body, ';')[:-1] if d.strip()]
    return sum(len(top_level(d, ',')) for d in decls)


def structs_of(path, text):
    """{name: fields} of the structs path defines."""
    out = {}
    for m in STRUCT.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth > 0:
            if text[i] == '{':
                depth += 1
            elif text[i] == '}':
                depth -= 1
            i += 1
        out[m.group(1)] = max(out.get(m.group(1), 0),
                              fields(text[m.end():i - 1]))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split('\n\n')[-2], file=sys.stderr)
        return 2
    src = sys.argv[1]
    files = []
    for d in DIRS:
        for root, _, names in os.walk(os.path.join(src, d)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    files.append(os.path.relpath(os.path.join(root, n), src))
    raw = {f: open(os.path.join(src, f), encoding='utf-8').read()
           for f in files}
    includes = {f: [i for i in INCLUDE.findall(t) if i in raw]
                for f, t in raw.items()}

    def reach(f, seen):
        for i in includes[f]:
            if i not in seen:
                seen.add(i)
                reach(i, seen)
        return seen

    sees = {f: reach(f, {f}) for f in files if f.endswith('.c')}
    defined = {}
    for f in files:
        for name, n in structs_of(f, strip(raw[f])).items():
            if n > defined.get(name, (0, None))[0]:
                defined[name] = (n, f)
    big = {}
    for name, (n, where) in defined.items():
        if n <= FIELDS_MAX:
            continue
        seers = sorted(c for c, s in sees.items() if where in s)
        if len(seers) > SEEN_MAX:
            big[name] = (n, where, seers)
    doc = open(os.path.join(src, 'docs', 'ARCHITECTURE.md'),
               encoding='utf-8').read()
    listed = {n for cell in ROW.findall(doc) for n in NAMED.findall(cell)}
    bad = 0
    for name in sorted(set(big) - listed):
        n, where, seers = big[name]
        print(f'struct {name} ({where}): {n} fields, seen by {len(seers)} '
              f'.c files ({", ".join(seers[:6])}{", ..." if len(seers) > 6 else ""}): '
              f'split it, or list it with its reason in docs/ARCHITECTURE.md, '
              f'"Large structs"')
        bad += 1
    for name in sorted(listed - set(big)):
        print(f'struct {name} is listed in docs/ARCHITECTURE.md, "Large '
              f'structs", but no longer has more than {FIELDS_MAX} fields '
              f'seen by more than {SEEN_MAX} .c files: take it off the list')
        bad += 1
    for name in sorted(big):
        n, where, seers = big[name]
        print(f'  {name}: {n} fields, {len(seers)} files'
              f'{" (listed)" if name in listed else ""}')
    print(f'structs: {"failed" if bad else "ok"} ({len(defined)} structs, '
          f'{len(big)} over {FIELDS_MAX} fields seen by more than {SEEN_MAX} '
          f'files)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
