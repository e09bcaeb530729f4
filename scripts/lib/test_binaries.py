"""Lists the test executables in cargo's JSON messages (read from stdin).

One line per executable: "PACKAGE TARGET PATH", where TARGET is `lib` for a
library's unit tests and the target's name otherwise (an integration test).
scripts/test.sh picks the binaries it runs under valgrind from these lines.
"""

import json
import sys


def main() -> None:
    for line in sys.stdin:
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        if "test" in target["kind"]:
            name = target["name"]
        elif any(kind.endswith("lib") for kind in target["kind"]):
            name = "lib"
        else:
            continue  # benches, examples and binaries built as tests
        print(package_name(msg["package_id"]), name, msg["executable"])


def package_name(package_id: str) -> str:
    """The name in a package id: "path+file:///…/fnabi-core#0.1.0" (the
    folder's name) or "path+file:///…/dir#fnabi-core@0.1.0"."""
    source, _, fragment = package_id.partition("#")
    if "@" in fragment:
        return fragment.split("@", 1)[0]
    return source.rstrip("/").rsplit("/", 1)[-1]


if __name__ == "__main__":
    main()
