#!/bin/sh
# deps.sh ITEM... — install the Debian packages that are missing, or say how.
# An ITEM is a package name, or CMD:PACKAGE when a command on the PATH is
# enough (a Node.js from elsewhere satisfies "node:nodejs" without Debian's
# nodejs package, whose npm would conflict with it). Used by `make run` and
# `make test`; idempotent and quiet when all is there.
missing=""
for item in "$@"; do
    case "$item" in
    *:*) cmd=${item%%:*}; pkg=${item#*:}
         command -v "$cmd" >/dev/null 2>&1 && continue ;;
    *)   pkg=$item ;;
    esac
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
echo "traceboard: missing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"
else
    echo "traceboard: cannot install them without root. Run:"
    echo "    sudo apt-get update && sudo apt-get install -y$missing"
    exit 1
fi
$SUDO apt-get update -qq || true
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing || {
    echo "traceboard: apt-get failed. Run:  sudo apt-get install -y$missing"; exit 1; }
