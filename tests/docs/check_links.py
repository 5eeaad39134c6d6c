#!/usr/bin/env python3
"""Checks the links of README.md and docs/*.md: the docs must stand alone.

Every relative link must name a file (or folder) that exists inside the repository, and a `#fragment`
into a Markdown file must name one of its headings (GitHub's anchor rule: lower case, punctuation
dropped, spaces to '-'). Links to http(s) pages are allowed; other schemes and absolute paths are not.
Prints one line per broken link (file:line: what) and exits 1 if there is any.

Usage: tests/docs/check_links.py REPO_ROOT        (ctest runs it as docs.links)
"""
import os
import re
import sys

LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def anchors(path):
    found = set()
    in_fence = False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m and not in_fence:
            text = re.sub(r"[`*_]", "", m.group(2)).lower()
            text = re.sub(r"[^\w\- ]", "", text)
            found.add(text.replace(" ", "-"))
    return found


def main():
    root = os.path.realpath(sys.argv[1])
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    problems = []
    for path in files:
        in_fence = False
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in LINK.findall(line):
                where = f"{os.path.relpath(path, root)}:{number}"
                if re.match(r"^https?://", target):
                    continue
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                    problems.append(f"{where}: {target}: only relative links and http(s) pages")
                    continue
                file_part, _, fragment = target.partition("#")
                resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not (resolved == root or resolved.startswith(root + os.sep)):
                    problems.append(f"{where}: {target}: leaves the repository")
                elif not os.path.exists(resolved):
                    problems.append(f"{where}: {target}: no such file in the repository")
                elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                    problems.append(f"{where}: {target}: no heading #{fragment} in {os.path.relpath(resolved, root)}")
    for p in problems:
        print(p)
    if problems:
        print(f"docs.links: {len(problems)} broken link(s)")
        return 1
    print(f"docs.links: {len(files)} files, every link stays in the repository and resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
