#!/bin/sh
# deps.sh PKG... — install the Debian packages that are missing, or say how.
# Used by `make run` and `make test`; idempotent and quiet when all is there.
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
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
