#!/usr/bin/env python3
"""ctest docs.mailbox_demo: the commands of docs/openhuman.md "Trying the `mailbox` bundle against the
demo server", run as written, with what varies substituted: the demo server is started here (on a port
the kernel picks) instead of by the block's first line, and build/, /tmp and port 8787 become this
build's folder, a temporary folder and that port.

Usage: tests/docs/mailbox_demo.py --repo ROOT --skillbox PATH --build BUILD_DIR
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HEADING = "### Trying the `mailbox` bundle against the demo server"


def documented_commands(repo):
    text = open(os.path.join(repo, "docs/openhuman.md"), encoding="utf-8").read()
    section = text.split(HEADING, 1)[1]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    if not match:
        sys.exit("mailbox_demo: no ```sh block under the heading " + HEADING)
    lines = match.group(1).splitlines()
    if not lines[0].startswith("python3 scripts/demo-api-server.py --port 8787 &") or lines[-1] != "kill %1":
        sys.exit("mailbox_demo: the block must start the demo server on 8787 and end with kill %1")
    return "\n".join(lines[1:-1]) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--skillbox", required=True)
    parser.add_argument("--build", required=True)
    args = parser.parse_args()
    commands = documented_commands(args.repo)
    server = subprocess.Popen([sys.executable, os.path.join(args.repo, "scripts/demo-api-server.py"), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = re.match(r"listening on http://127\.0\.0\.1:(\d+)", server.stdout.readline()).group(1)
        with tempfile.TemporaryDirectory() as work:
            script = (commands.replace("8787", port).replace("/tmp/", work + "/")
                      .replace("./build/skillbox", args.skillbox).replace("build/openhuman", args.build + "/openhuman"))
            env = dict(os.environ, SKILLBOX_HOME=os.path.join(work, "home"))
            run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=args.repo, env=env,
                                 capture_output=True, text=True, timeout=120)
    finally:
        server.kill()
        server.wait()
    shown = run.stdout + run.stderr
    problems = []
    if run.returncode != 0:
        problems.append("exit code %d" % run.returncode)
    if '\\"status\\":200' not in run.stdout:
        problems.append("no status 200 from the proxy (it checks the real token)")
    if "skillbox-secret:mailbox/oauth/accessToken/" not in run.stdout:
        problems.append("no placeholder in the result")
    if "demo-oauth-token" in shown:
        problems.append("the real token reached the output")
    if problems:
        sys.exit("mailbox_demo: " + "; ".join(problems) + "\n--- output:\n" + shown)
    print("mailbox_demo: ok")


if __name__ == "__main__":
    main()
