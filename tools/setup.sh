#!/usr/bin/env bash
# The system tools the build and the tests need (`make setup` runs this): each is installed only
# when its command is missing from the PATH, whatever installed the ones already there.
#
#   tool             command          Debian package    what for
#   wasm-opt         wasm-opt         binaryen          the size pass over every module
#   docker-registry  docker-registry  docker-registry   the real OCI registry of the push/pull tests
#   chromium         chromium         chromium          the browser of the playground tests
#   chromedriver     chromedriver     chromium-driver   WebDriver for that browser
#   node             node             nodejs            bundles the playground's editor (esbuild)
#   npm              npm              npm               installs the editor's pinned packages
#   pre-commit       pre-commit       (PyPI)            the test of the README's pre-commit hook
#                                                       (or python3 -m pre_commit)
#
# Node.js and npm are taken as they are when present: many machines have them from outside Debian
# (NodeSource, nvm), and Debian's npm package conflicts with such a Node.js. When Node.js is
# missing, Debian's nodejs and npm are installed together. A tool that cannot be installed is
# named with the command that installs it by hand, and the script exits 1.
set -uo pipefail

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

# command, Debian package (empty: not from Debian), how to install it by hand.
TOOLS=(
  "wasm-opt|binaryen|apt-get install binaryen"
  "docker-registry|docker-registry|apt-get install docker-registry"
  "chromium|chromium|apt-get install chromium"
  "chromedriver|chromium-driver|apt-get install chromium-driver"
  "node|nodejs|apt-get install nodejs npm (or Node.js 18 or later from any source)"
  "npm|npm|install the npm that belongs to your Node.js (NodeSource's nodejs package carries it; Debian's nodejs needs apt-get install npm)"
  "pre-commit||python3 -m pip install pre-commit"
)

have() {
  case "$1" in
    # pip may put the command where the PATH does not look (pyenv until its rehash): the module
    # is what the test runs then.
    pre-commit) command -v pre-commit >/dev/null 2>&1 || python3 -c 'import pre_commit' 2>/dev/null ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

apt_install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "$@"
}

# The Debian packages of the missing commands. npm is asked for on its own only when Node.js is
# there already (then only Debian's Node.js can take it; anything else fails and is reported).
packages=()
for entry in "${TOOLS[@]}"; do
  IFS='|' read -r cmd pkg _ <<<"$entry"
  have "$cmd" && continue
  [ -n "$pkg" ] || continue
  case "$cmd" in
    node) packages+=(nodejs); have npm || packages+=(npm) ;;
    npm) [[ " ${packages[*]-} " == *" npm "* ]] || packages+=(npm) ;;
    *) packages+=("$pkg") ;;
  esac
done

if [ "${#packages[@]}" -gt 0 ]; then
  echo "setup: installing Debian's ${packages[*]}"
  # The package lists may be missing or old on a new machine: update them once, then try all the
  # packages together, and one by one when that fails, so one conflict does not stop the others.
  if ! apt_install "${packages[@]}"; then
    $SUDO apt-get update -q
    if ! apt_install "${packages[@]}" && [ "${#packages[@]}" -gt 1 ]; then
      for pkg in "${packages[@]}"; do
        apt_install "$pkg" || true
      done
    fi
  fi
fi

if ! have pre-commit; then
  echo "setup: installing pre-commit from PyPI"
  # A Debian Python refuses pip outside a virtual environment: its own package then.
  python3 -m pip install -q pre-commit 2>/dev/null || apt_install pre-commit || true
fi

failed=0
for entry in "${TOOLS[@]}"; do
  IFS='|' read -r cmd _ how <<<"$entry"
  if ! have "$cmd"; then
    echo "setup: $cmd could not be installed; install it by hand: $how" >&2
    failed=1
  fi
done
exit "$failed"
