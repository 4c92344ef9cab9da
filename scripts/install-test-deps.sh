#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian 12 machine (root or sudo):
# Debian's contrib OpenZFS userspace (libzpool, for the capacity oracle), gcc, fio,
# and zfslab itself with its test extras.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

add_sources() {
  # The stock deb822 entry enables only main; OpenZFS lives in contrib (docs/test-guest.md).
  # OpenZFS 2.3 and 2.4 come from Debian 13 lists that tests/oracle/chroot.py keeps for itself.
  [ -f /etc/apt/sources.list.d/debian.sources ] || return 0
  uri=$(awk '$1=="URIs:"{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  key=/usr/share/keyrings/debian-archive-keyring.gpg
  if ! grep -rqs "contrib" /etc/apt/sources.list.d/ /etc/apt/sources.list 2>/dev/null; then
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: contrib\nSigned-By: %s\n' \
      "$uri" "$key" | $SUDO tee /etc/apt/sources.list.d/contrib.sources >/dev/null
  fi
}

apt_install() {
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

add_sources
need=()
# gcc + libzfslinux-dev: the libzpool capacity oracle (2.1); qemu + debootstrap: the e2e guest
# (debootstrap also builds the oracle's trixie chroot for 2.3 and 2.4, tests/oracle/chroot.py);
# chromium: the report's browser test; bonnie++: the bench engine calomel used
# openssh-server: tests/unit/test_transport_ssh.py starts a private sshd on 127.0.0.1 (its service is not
# needed: a container's policy-rc.d keeps it from starting, and the test never uses it)
# zsh, fish, man-db: tests/unit/test_completion.py completes through the shells and renders zfslab(1)
for pkg in gcc libc6-dev libzfslinux-dev fio bonnie++ qemu-system-x86 debootstrap e2fsprogs chromium \
           openssh-client openssh-server zsh fish man-db; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}" >&2
  apt_install "${need[@]}"
else
  $SUDO apt-get update -qq  # the 2.1 guest's cache key reads the current package versions
fi

python3 -m pip install -q --disable-pip-version-check -e '.[test]'
