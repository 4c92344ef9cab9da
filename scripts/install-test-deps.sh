#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian 12 machine (root or sudo):
# Debian's contrib OpenZFS userspace (libzpool, for the capacity oracle), gcc, fio,
# and zfslab itself with its test extras.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

apt_install() {
  # The stock deb822 entry enables only main; OpenZFS lives in contrib (real-zfs.md §1.1).
  if [ -f /etc/apt/sources.list.d/debian.sources ] && ! grep -rqs "contrib" /etc/apt/sources.list.d/ /etc/apt/sources.list 2>/dev/null; then
    uri=$(awk '$1=="URIs:"{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$uri" | $SUDO tee /etc/apt/sources.list.d/contrib.sources >/dev/null
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

need=()
for pkg in gcc libc6-dev libzfslinux-dev fio; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}" >&2
  apt_install "${need[@]}"
fi

python3 -m pip install -q --disable-pip-version-check -e '.[test]'
