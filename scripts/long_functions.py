#!/usr/bin/env python3
"""Lists C++ functions longer than the house limit (STYLE §2: functions stay under ~60 lines).

  scripts/long_functions.py [--root DIR] [--max-lines 60] [FOLDER ...]

Reads every .h/.cc/.hpp/.cpp file under the given top-level folders (all of the repository when
none is given), leaving out tests/, bench/ and build folders, finds each function body by brace
matching (comments, string and character literals removed first) and prints
`path:line: Name is N lines (limit M)` for every function whose definition, from the first line
of its signature to its closing brace, spans more than --max-lines lines. A function's lambdas
and local classes count as part of it. Exit 1 when it printed any, else 0 (ctest
style.long_functions runs it on the folders the rule is enforced in).
"""
import argparse
import os
import re
import sys

EXTENSIONS = (".h", ".cc", ".hpp", ".cpp")
EXCLUDED_TOP = {"tests", "bench", ".git"}
SCOPE_KEYWORD = re.compile(r"^(?:template\s*<.*>\s*)?(?:\[\[[^\]]*\]\]\s*)?"
                           r"(?:namespace|class|struct|union|enum|extern\s+\"C\")\b", re.S)
CONTROL = re.compile(r"^(?:if|for|while|switch|catch|do|else|try)\b")
NAME_BEFORE_PAREN = re.compile(r"((?:[A-Za-z_~][\w]*\s*::\s*)*(?:operator\s*[^\s(]+|~?[A-Za-z_]\w*))"
                               r"\s*(?:<[^()]*>)?\s*$")


def strip_code(text):
    """text with comments, string and character literals blanked out (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_preprocessor(text):
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)),
                  text, flags=re.M)


def function_name(header):
    """The name a function header declares (before its parameter list), or None."""
    depth = 0
    for i, c in enumerate(header):
        if c == "(":
            if depth == 0:
                m = NAME_BEFORE_PAREN.search(header[:i])
                if m and m.group(1) not in ("decltype", "alignas", "__attribute__", "requires"):
                    return re.sub(r"\s+", "", m.group(1))
            depth += 1
        elif c == ")":
            depth -= 1
    return None


def in_initializer_list(header):
    """True when the header is a constructor's signature followed by ' : member(...)'."""
    depth, closed = 0, False
    for i, c in enumerate(header):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            closed = depth == 0 or closed
        elif c == ":" and depth == 0 and closed:
            if header[i - 1:i] != ":" and header[i + 1:i + 2] != ":":
                return True
    return False


def long_functions(text, max_lines):
    """(line, name, length) of each function in text longer than max_lines."""
    code = without_preprocessor(strip_code(text))
    found = []
    # Stack of open blocks: "scope" (namespace, class: may hold functions), "function",
    # "inner" (any block inside a function) or "data" (braced initializers outside functions).
    stack = []
    header_start = 0  # index where the text since the last ; { } begins
    i, n = 0, len(code)
    function_open = None  # (start index, name) of the function being read
    while i < n:
        c = code[i]
        if c == "{":
            header = code[header_start:i].strip()
            inside_function = any(kind in ("function", "inner") for kind in stack)
            if inside_function:
                stack.append("inner")
            elif header and in_initializer_list(header) and re.search(r"[\w>]\s*$", header):
                # a member's braced initializer (`a_{x}`) in a constructor's initializer list
                depth, j = 0, i
                while j < n:
                    depth += {"{": 1, "}": -1}.get(code[j], 0)
                    if depth == 0:
                        break
                    j += 1
                i = j + 1
                continue
            elif not header or SCOPE_KEYWORD.match(header):
                stack.append("scope")
            else:
                name = function_name(header)
                if name and not CONTROL.match(header) and "=" not in header.split("(", 1)[0]:
                    start = header_start + (len(code[header_start:i]) -
                                            len(code[header_start:i].lstrip()))
                    function_open = (start, name)
                    stack.append("function")
                else:
                    stack.append("data")
            header_start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function" and function_open:
                start, name = function_open
                first = code.count("\n", 0, start) + 1
                last = code.count("\n", 0, i) + 1
                if last - first + 1 > max_lines:
                    found.append((first, name, last - first + 1))
                function_open = None
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
        i += 1
    return found


def source_files(root, folders):
    tops = folders or sorted(os.listdir(root))
    for top in tops:
        if top in EXCLUDED_TOP or top.startswith("."):
            continue
        path = os.path.join(root, top)
        if os.path.isfile(path):
            if path.endswith(EXTENSIONS):
                yield top
            continue
        if not os.path.isdir(path) or os.path.isfile(os.path.join(path, "CMakeCache.txt")):
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames
                                 if not os.path.isfile(os.path.join(dirpath, d, "CMakeCache.txt")))
            for f in sorted(filenames):
                if f.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--max-lines", type=int, default=60)
    parser.add_argument("folders", nargs="*", help="top-level folders to read (default: all)")
    args = parser.parse_args()
    for folder in args.folders:
        if not os.path.isdir(os.path.join(args.root, folder)):
            parser.error(f"no folder {folder} under {args.root}")
    count = 0
    for rel in source_files(args.root, args.folders):
        with open(os.path.join(args.root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for line, name, length in long_functions(text, args.max_lines):
            print(f"{rel}:{line}: {name} is {length} lines (limit {args.max_lines})")
            count += 1
    if count:
        print(f"{count} function(s) over {args.max_lines} lines: split them into named steps")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
