#!/usr/bin/env python3
"""Re-extracts the real-world suite (cli/tests/data/real-world/) from local git mirrors.

Usage: tools/real-world-suite.py MIRRORS

MIRRORS is a folder holding one bare or working git repository per project, found as
MIRRORS/<owner>+<name>/repo, MIRRORS/<owner>+<name>, MIRRORS/<owner>/<name> or
MIRRORS/<owner>/<name>.git (clone them yourself first; this script never touches the network).
Each row of cli/tests/data/real-world/SOURCES.tsv names a project, its repository, the tag (or
release branch) it was taken at, the commit that tag pointed at, the paths taken (space
separated git pathspec-like patterns: `*` stays within a folder, `**` crosses folders, a leading
`!` excludes), its license and an edit (`-` for none; `drop-template-lines` removes the lines
that are only a Go template action, such as a Helm chart's `{{- if ... }}` guard around plain
YAML). Every file is written to cli/tests/data/real-world/<project>/<path in its repository>,
its first line a comment naming the repository, tag, commit, path and license (a path that is a
symbolic link in the repository holds what the link points at, as a checkout of it reads). The folders of
the projects are emptied first, so a file no longer listed disappears.
"""

import fnmatch
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUITE = ROOT / "cli" / "tests" / "data" / "real-world"


def mirror(mirrors: pathlib.Path, repository: str) -> pathlib.Path:
    owner, name = repository.split("/")
    for candidate in (
        mirrors / f"{owner}+{name}" / "repo",
        mirrors / f"{owner}+{name}",
        mirrors / owner / name,
        mirrors / owner / f"{name}.git",
    ):
        if candidate.is_dir():
            return candidate
    sys.exit(f"no local mirror of {repository} under {mirrors}")


def git(repo: pathlib.Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def matches(path: str, pattern: str) -> bool:
    if "**" in pattern:
        return fnmatch.fnmatchcase(path, pattern.replace("**", "*"))
    return fnmatch.fnmatchcase(path, pattern) and path.count("/") == pattern.count("/")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    mirrors = pathlib.Path(sys.argv[1])
    rows = (SUITE / "SOURCES.tsv").read_text().splitlines()
    header = rows[0].split("\t")
    assert header == ["project", "repository", "tag", "commit", "paths", "license", "edit"], header
    for line in rows[1:]:
        project, repository, tag, commit, paths, license_, edit = line.split("\t")
        repo = mirror(mirrors, repository)
        try:
            tagged = git(repo, "rev-parse", f"{tag}^{{commit}}").decode().strip()
        except subprocess.CalledProcessError:
            tagged = None
        if tagged is not None and tagged != commit:
            print(f"{project}: {tag} is now {tagged}, the suite keeps {commit}", file=sys.stderr)
        modes = {}
        for entry in git(repo, "ls-tree", "-r", commit).decode().splitlines():
            meta, path = entry.split("\t", 1)
            modes[path] = meta.split()[0]
        files = list(modes)
        patterns = paths.split()
        include = [p for p in patterns if not p.startswith("!")]
        exclude = [p[1:] for p in patterns if p.startswith("!")]
        chosen = [
            f
            for f in files
            if any(matches(f, p) for p in include) and not any(fnmatch.fnmatchcase(f, p) for p in exclude)
        ]
        for pattern in include:
            if not any(matches(f, pattern) for f in chosen):
                sys.exit(f"{project}: {pattern} matches nothing at {commit}")
        out = SUITE / project
        if out.is_dir():
            for old in sorted(out.rglob("*"), reverse=True):
                old.unlink() if old.is_file() else old.rmdir()
        for path in chosen:
            source = path
            while modes[source] == "120000":  # a link in the repository: take what it points at
                link = git(repo, "show", f"{commit}:{source}").decode()
                source = str(pathlib.PurePosixPath(os.path.normpath(str(pathlib.PurePosixPath(source).parent / link))))
            text = git(repo, "show", f"{commit}:{source}").decode()
            if edit == "drop-template-lines":
                text = "".join(
                    l for l in text.splitlines(keepends=True) if not re.fullmatch(r"\s*\{\{.*\}\}\s*", l)
                )
            elif edit != "-":
                sys.exit(f"{project}: unknown edit {edit}")
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"# {repository} {tag} {commit} {path} ({license_})\n{text}")
        print(f"{project}: {len(chosen)} files")


if __name__ == "__main__":
    main()
