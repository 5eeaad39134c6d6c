#!/usr/bin/env python3
"""Runs every CLI example of README.md and docs/*.md against the built `skillbox`: the docs cannot drift.

Which blocks: every fenced block labelled ```console, ```sh or ```bash that invokes `skillbox` (the word
`skillbox` where a command starts, `./build/skillbox` included). A block of another label (or none) that holds a
`$ skillbox` or `./build/skillbox` line is an error: label it `console` (or `sh`) so it runs. Synopses
(`skillbox run DIR [--call NAME]`) are not examples: they carry no label and no `$ ` prompt.

How each block runs: in a fresh temporary folder holding a copy of the repository's example folders
(`examples/...`, at the paths the docs use) and `build/skillbox`, a link to the binary under test; `skillbox`
is on PATH too. HOME is a fresh empty folder and the data directory (SKILLBOX_HOME) is
`$HOME/.local/share/skillbox`, the default a user has. Standard input is empty. Each command runs in
`bash -c` from that folder, so `~`, quotes and `$(...)` work as in the docs; files stay between the
commands of one block, never between blocks.

```console blocks: a line starting with `$ ` is a command (a line ending in `\\` continues it); the lines
after it, up to the next `$ ` line or the end, are what it prints, stdout and stderr together in the order
written (skillbox flushes each write). The shown output must match the real output line by line, trailing
blanks ignored, with these placeholders for what varies between runs and machines:

    <N>         a number (digits, optionally with a fraction): timings, sizes, counts
    <...>       any text within one line
    ...         a line holding only `...`: any number of lines, none included
    /home/ada   the docs' user's home: the real output's $HOME is shown as /home/ada before comparing
    /home/ada/skillbox
                the docs' checkout of this repository: likewise for the block's folder (the copy of the
                example folders the commands run in)

The exit status is not compared unless the command ends in a comment `# exit N`.

```sh / ```bash blocks: every line that is not blank or a comment is one command (a trailing `\\`
continues it). Each must exit 0 unless its line ends in a comment that starts with `exit N` (`# exit 12:
the timeout`); its output is not compared.

Markers, in an HTML comment on the line(s) right before the block (invisible on GitHub):

    <!-- docs-example: skip (why: needs a running API server) -->
        The block does not run; the reason is printed on every run. Only for what a test cannot do
        (a real remote API, installing packages, a background server). Never skipped silently.
    <!-- docs-example: setup
    mkdir my-skill && printf '...' > my-skill/skill.json
    -->
        Shell commands run (`bash -e`) in the block's folder before it: the files an example needs.
        Their output is not shown; a failing setup fails the test.

Nothing here reaches the network: the examples run skills whose hosts are loopback or none, and CI runs
every ctest in a network namespace that has only loopback (scripts/hermetic.sh).

Usage: tests/docs/run_examples.py --repo ROOT --skillbox PATH [--examples DIR]...
       (ctest runs it as docs.examples; --examples defaults to ROOT/examples; -k TEXT runs only blocks
       whose file:line contains TEXT)
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE_OPEN = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
RUN_LABELS = {"console", "sh", "bash"}
# `skillbox` (or a path to it) where a command starts: at the start, or after ; | & ( $( and any
# NAME=value assignments. `git clone URL skillbox` does not invoke it.
INVOKES = re.compile(r"(?:^|[;|&(]|\$\()\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:\S*/)?skillbox(?:\s|$)")
PROMPTED = re.compile(r"^(\$ (\./build/)?skillbox\b|\./build/skillbox\b)")
MARKER = re.compile(r"<!--\s*docs-example:\s*(.*?)\s*-->", re.S)
MARKER_LINE = re.compile(r"^\s*<!--\s*docs-example:", re.M)  # a marker starts a line (not inline text)
EXIT_COMMENT = re.compile(r"#\s*exit (\d+)\b")
COMMAND_TIMEOUT_S = 120


class Block:
    def __init__(self, path, line, label, body, marker):
        self.path, self.line, self.label, self.body, self.marker = path, line, label, body, marker

    def where(self, root):
        return f"{os.path.relpath(self.path, root)}:{self.line}"


def blocks_of(path):
    """Every fenced block of `path`, with the marker comment that ends on the line before its fence."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, label, start = m.group(1), m.group(2), i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            text = lines[i]
            body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
            i += 1
        marker = None
        before = "\n".join(lines[:start]).rstrip()
        if before.endswith("-->"):
            opening = before.rfind("<!--")
            found = MARKER.fullmatch(before[opening:].strip()) if opening >= 0 else None
            if found:
                marker = found.group(1)
        out.append(Block(path, start + 1, label, body, marker))
        i += 1
    return out


def joined(lines):
    """Lines with trailing-backslash continuations joined: [(first line index, text)]."""
    out = []
    i = 0
    while i < len(lines):
        start, text = i, lines[i]
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1] + " " + lines[i].lstrip("> ").lstrip()
        out.append((start, text))
        i += 1
    return out


def line_pattern(expected):
    parts = re.split(r"(<N>|<\.\.\.>)", expected.rstrip())
    regex = ""
    for part in parts:
        if part == "<N>":
            regex += r"-?[0-9]+(?:\.[0-9]+)?"
        elif part == "<...>":
            regex += r"[^\n]*?"
        else:
            regex += re.escape(part)
    return regex + r"[ \t]*\n"


def output_matches(expected_lines, actual):
    regex = "".join(r"(?:[^\n]*\n)*?" if e.strip() == "..." else line_pattern(e) for e in expected_lines)
    return re.fullmatch(regex, actual) is not None


def normalized(text):
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    return "".join(line + "\n" for line in lines)


class Runner:
    def __init__(self, args):
        self.root = os.path.realpath(args.repo)
        self.skillbox = os.path.realpath(args.skillbox)
        self.examples = args.examples or [os.path.join(self.root, "examples")]

    def fresh_folder(self, scratch):
        work = os.path.join(scratch, "work")
        home = os.path.join(scratch, "home")
        tools = os.path.join(scratch, "bin")
        os.makedirs(os.path.join(work, "build"))
        os.makedirs(home)
        os.makedirs(tools)
        for source in self.examples:
            source = os.path.realpath(source)
            relative = os.path.relpath(source, self.root)
            if relative.startswith(".."):
                relative = os.path.basename(source)
            shutil.copytree(source, os.path.join(work, relative), symlinks=True,
                            ignore=shutil.ignore_patterns("node_modules"))
        os.symlink(self.skillbox, os.path.join(work, "build", "skillbox"))
        os.symlink(self.skillbox, os.path.join(tools, "skillbox"))
        env = {k: v for k, v in os.environ.items()
               if k not in ("SKILLBOX_HOME", "XDG_DATA_HOME") and not k.lower().endswith("_proxy")}
        env.update({
            "HOME": home,
            "SKILLBOX_HOME": os.path.join(home, ".local", "share", "skillbox"),
            "PATH": tools + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C.UTF-8",
            "COLUMNS": "120",
        })
        return work, env

    def shell(self, command, work, env, strict=False):
        argv = ["bash", "-e", "-c", command] if strict else ["bash", "-c", command]
        try:
            done = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            out = e.stdout or b""
            return -1, out.decode("utf-8", "replace") + f"(did not finish within {COMMAND_TIMEOUT_S} s)\n"
        return done.returncode, done.stdout.decode("utf-8", "replace")

    def run_block(self, block, problems):
        where = block.where(self.root)
        with tempfile.TemporaryDirectory(prefix="skillbox-docs-") as scratch:
            scratch = os.path.realpath(scratch)  # the paths skillbox prints are canonical
            work, env = self.fresh_folder(scratch)
            if block.marker is not None and block.marker.startswith("setup"):
                setup = block.marker[len("setup"):]
                status, out = self.shell(setup, work, env, strict=True)
                if status != 0:
                    problems.append(f"{where}: the setup failed (exit {status}):\n{out}")
                    return 0
            if block.label == "console":
                return self.run_console(block, where, work, env, problems)
            return self.run_sh(block, where, work, env, problems)

    @staticmethod
    def as_in_docs(text, work, env):
        """`text` with the block's folder shown as /home/ada/skillbox and $HOME as /home/ada."""
        return text.replace(work, "/home/ada/skillbox").replace(env["HOME"], "/home/ada")

    def run_console(self, block, where, work, env, problems):
        commands = []  # (line in the file, command, expected output lines)
        for index, text in joined(block.body):
            if text.startswith("$ "):
                commands.append((block.line + 1 + index, text[2:], []))
            elif commands:
                commands[-1][2].append(text)
            elif text.strip():
                problems.append(f"{where}: output before the first `$ ` command: {text!r}")
                return 0
        for line, command, expected in commands:
            status, out = self.shell(command, work, env)
            actual = normalized(self.as_in_docs(out, work, env))
            shown = normalized("\n".join(expected))
            wanted_exit = EXIT_COMMENT.search(command)
            if not output_matches(shown.split("\n")[:-1] if shown else [], actual):
                diff = "".join(difflib.unified_diff(shown.splitlines(True), actual.splitlines(True),
                                                    "the docs show", "skillbox prints"))
                problems.append(f"{os.path.relpath(block.path, self.root)}:{line}: $ {command}\n{diff}")
            elif wanted_exit and int(wanted_exit.group(1)) != status:
                problems.append(f"{os.path.relpath(block.path, self.root)}:{line}: $ {command}\n"
                                f"exit {status}, the docs say {wanted_exit.group(1)}\n{out}")
        return len(commands)

    def run_sh(self, block, where, work, env, problems):
        count = 0
        for index, text in joined(block.body):
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            count += 1
            comment = re.search(r"\s#\s*(.*)$", text)
            wanted = 0
            if comment:
                exit_match = re.match(r"exit (\d+)\b", comment.group(1))
                wanted = int(exit_match.group(1)) if exit_match else 0
            status, out = self.shell(text, work, env)
            if status != wanted:
                problems.append(f"{os.path.relpath(block.path, self.root)}:{block.line + 1 + index}: {text}\n"
                                f"exit {status}, the docs imply {wanted}; it printed:\n{out}")
        return count


def invokes_skillbox(block):
    if block.label == "console":
        return any(line.startswith("$ ") and INVOKES.search(line[2:]) for line in block.body)
    return any(INVOKES.search(line.split("#")[0]) for line in block.body if not line.lstrip().startswith("#"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--skillbox", required=True)
    parser.add_argument("--examples", action="append")
    parser.add_argument("-k", dest="only", default="")
    args = parser.parse_args()
    runner = Runner(args)
    root = runner.root
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))

    problems, skipped = [], []
    ran_blocks = ran_commands = 0
    for path in files:
        blocks = blocks_of(path)
        attached = sum(1 for b in blocks if b.marker is not None)
        if len(MARKER_LINE.findall(open(path, encoding="utf-8").read())) != attached:
            problems.append(f"{os.path.relpath(path, root)}: a docs-example marker that is not right before a"
                            " fenced block (only blank space may separate them)")
        for block in blocks:
            where = block.where(root)
            if args.only and args.only not in where:
                continue
            marker = block.marker
            if marker is not None and not (re.fullmatch(r"skip \(.+\)", marker) or marker.startswith("setup")):
                problems.append(f"{where}: unknown docs-example marker {marker!r}: use skip (REASON) or setup")
                continue
            if block.label not in RUN_LABELS:
                if any(PROMPTED.match(line) for line in block.body):
                    problems.append(f"{where}: a skillbox example in a block labelled {block.label or 'nothing'!r}:"
                                    " label it console (with `$ ` prompts) or sh, so that it runs")
                elif marker is not None:
                    problems.append(f"{where}: a docs-example marker on a block that is not a CLI example")
                continue
            if not invokes_skillbox(block):
                if marker is not None:
                    problems.append(f"{where}: a docs-example marker on a block that does not invoke skillbox")
                continue
            if marker is not None and marker.startswith("skip"):
                skipped.append(f"{where}: {marker}")
                continue
            ran_blocks += 1
            ran_commands += runner.run_block(block, problems)

    for s in skipped:
        print(f"skipped {s}")
    for p in problems:
        print(p)
    summary = f"{ran_blocks} blocks, {ran_commands} commands run, {len(skipped)} skipped (marked)"
    if problems:
        print(f"docs.examples: {len(problems)} problem(s); {summary}")
        return 1
    if ran_blocks == 0:
        print("docs.examples: no example ran; is the repository root right?")
        return 1
    print(f"docs.examples: every CLI example matches the binary; {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
