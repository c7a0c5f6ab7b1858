#!/usr/bin/env python3
"""Every repository path the docs name exists (issue 41 item 6).

Reads every README.md of the repository and every docs/*.md, and checks what they name:
  - markdown links `[text](target)` (not http(s):, mailto: or a bare #anchor): the target,
    relative to the file, must exist;
  - inline code spans `like/this` that look like a path (below): must exist relative to the
    repository root or to the file's folder; a name without an extension may also be a stem
    (`worker/engine/thread_pool` for thread_pool.h/.cc);
  - in fenced code blocks (commands to copy), every word that starts with a top-level folder of
    the repository followed by `/` (`bench/many_streams.sh`, `deploy/k8s`).
A code span looks like a path when it has no blank, starts with a top-level entry of the
repository followed by `/` (`gateway/relay/`), or with a folder of the file's own folder
(`x86/q8_0x8.h` in kernels/README.md), or is a bare folder name (`relay/`) or a bare file name
with a source extension (`dispatch.cc`): a bare name must name a folder or file somewhere in the
repository.
Not checked, by rule: anything outside the repository or made at run time: spans that start
with `/`, `../`, `~`, `$` or `build/`; spans holding a placeholder or pattern character
(`<`, `>`, `*`, `{`, `}`, `|`, `...`, `$`, `=`, `:`); bare names of other extensions (a model's
`tokenizer.json`); and the code spans of a line that links to another site (http[s]): they name
that site's paths (vLLM's `examples/`).
Exit 1 listing every stale path with its file and line; 0 when all exist.
"""
import argparse
import os
import re
import sys

SOURCE_EXTENSIONS = (".h", ".cc", ".md", ".py", ".sh", ".proto", ".cmake", ".mjs", ".yaml", ".yml")
SKIPPED_PREFIXES = ("/", "../", "~", "$", "build/")
PLACEHOLDER = re.compile(r"[<>*{}|$=:]|\.\.\.")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
FENCE = re.compile(r"^\s*(```|~~~)")


def is_build_dir(path):
    return os.path.isfile(os.path.join(path, "CMakeCache.txt"))


def top_level_entries(root):
    """Top-level files and folders of the checkout, build folders left out."""
    entries = set()
    for name in os.listdir(root):
        full = os.path.join(root, name)
        if name == ".git" or (os.path.isdir(full) and is_build_dir(full)):
            continue
        entries.add(name)
    return entries


def walk_files(root, top):
    """Every file and folder under the checkout's top-level entries (relative paths; folders end
    in /)."""
    for name in sorted(top):
        full = os.path.join(root, name)
        if os.path.isfile(full):
            yield name
            continue
        yield name + "/"
        for dirpath, dirnames, filenames in os.walk(full):
            # node_modules: npm's packages (tests/http, tests/deploy), not this repository's docs.
            dirnames[:] = [d for d in dirnames if d != "node_modules" and
                           not is_build_dir(os.path.join(dirpath, d))]
            for d in dirnames:
                yield os.path.relpath(os.path.join(dirpath, d), root) + "/"
            for f in filenames:
                yield os.path.relpath(os.path.join(dirpath, f), root)


def docs_to_check(files):
    return sorted(f for f in files
                  if os.path.basename(f) == "README.md" or
                  (f.startswith("docs" + os.sep) and f.endswith(".md") and f.count(os.sep) == 1))


def exists(root, base_dir, path):
    """path names a file or folder relative to the root or to base_dir (a stem may omit .h/.cc)."""
    path = path.rstrip("/")
    for start in (root, os.path.join(root, base_dir)):
        full = os.path.normpath(os.path.join(start, path))
        if os.path.exists(full):
            return True
        if not os.path.splitext(path)[1] and any(
                os.path.exists(full + ext) for ext in (".h", ".cc")):
            return True
    return False


def looks_like_path(span, top, local_dirs):
    if not span or any(c.isspace() for c in span) or span in (".", "./"):
        return False  # `./` is the doc's own folder
    if span.startswith(SKIPPED_PREFIXES) or PLACEHOLDER.search(span):
        return False
    first = span.split("/", 1)[0]
    if "/" in span.rstrip("/"):
        return first in top or first in local_dirs or first == "."
    return span.endswith("/") or span.endswith(SOURCE_EXTENSIONS)


def fenced_words(line, top):
    """Words of a command line that start with a top-level folder of the repository and a /."""
    for word in re.split(r"[\s;&()|'\"]+", line):
        word = word.rstrip(".,")
        first = word.split("/", 1)[0]
        if "/" in word and first in top and not PLACEHOLDER.search(word):
            yield word


def check_file(root, rel, top, basenames):
    """(line number, what, path) of every stale path rel names."""
    base_dir = os.path.dirname(rel)
    local_dirs = {d for d in os.listdir(os.path.join(root, base_dir or "."))
                  if os.path.isdir(os.path.join(root, base_dir, d))}
    top_dirs = {t for t in top if os.path.isdir(os.path.join(root, t))}
    stale = []
    in_fence = False
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                for word in fenced_words(line, top_dirs):
                    if not exists(root, "", word):
                        stale.append((number, "command", word))
                continue
            for target in LINK.findall(line):
                if re.match(r"^(https?:|mailto:|#)", target):
                    continue
                target = target.split("#", 1)[0]
                if target and not os.path.exists(
                        os.path.normpath(os.path.join(root, base_dir, target))):
                    stale.append((number, "link", target))
            if re.search(r"\]\(https?:", line):
                continue
            for _, span in CODE_SPAN.findall(line):
                span = span.strip()
                if not looks_like_path(span, top, local_dirs):
                    continue
                if "/" not in span.rstrip("/"):
                    if span not in basenames:
                        stale.append((number, "name", span))
                elif not exists(root, base_dir, span):
                    stale.append((number, "path", span))
    return stale


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    top = top_level_entries(root)
    files = list(walk_files(root, top))
    # Bare names: file names, and folder names with their slash (`relay/`).
    basenames = {os.path.basename(f.rstrip("/")) + ("/" if f.endswith("/") else "") for f in files}
    failures = 0
    checked = docs_to_check([f for f in files if not f.endswith("/")])
    for rel in checked:
        for number, what, path in check_file(root, rel, top, basenames):
            print(f"{rel}:{number}: stale {what} `{path}`: no such file or folder in the repository")
            failures += 1
    if failures:
        print(f"{failures} stale path(s) in {len(checked)} docs; fix the docs or the rule in "
              f"{os.path.relpath(__file__, root)}")
        return 1
    print(f"{len(checked)} docs: every path they name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
