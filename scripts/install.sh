#!/bin/sh
# Installs zfslab from this checkout into a virtual environment of its own (Debian's Python is
# "externally managed", PEP 668: no pip into it), links `zfslab` onto PATH, installs its bash, zsh
# and fish completions and its man page, then runs `zfslab ARGS` when arguments are given.
#
#   sh scripts/install.sh plan 24x4TB     install (or update), then run zfslab plan 24x4TB
#   sh scripts/install.sh --user ...      per user, and never apt, even as root (TrueNAS SCALE)
#   sh scripts/install.sh --uninstall     remove what an earlier run made, nothing else
#
# As root: /opt/zfslab/venv, /usr/local/bin/zfslab, /usr/local/share/{bash-completion,zsh,fish,man}.
# As a user: ~/.local/share/zfslab/venv, ~/.local/bin/zfslab, ~/.local/share/..., ~/.config/fish.
# Debian's python3-venv (and python3 itself on a minimal system) comes from apt as root, or
# through sudo for a user; without apt or sudo, pip is bootstrapped from its wheel on PyPI.
# Every file it writes is listed in the venv's folder and is the only thing --uninstall removes;
# a file already there that it did not make is never replaced. docs/install.md explains.
set -eu

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

SRC=$(cd "$(dirname "$0")/.." && pwd)
MODE=system
[ "$(id -u)" = 0 ] || MODE=user
UNINSTALL=0
NO_APT=0
while [ $# -gt 0 ]; do
  case $1 in
    --user) MODE=user; NO_APT=1; shift ;;  # a user-level install: never apt, even as root
    --uninstall) UNINSTALL=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
PY=${PYTHON:-python3}

if [ "$MODE" = system ]; then
  HOME_DIR=/opt/zfslab
  BIN_DIR=/usr/local/bin
  DATA=/usr/local/share
  FISH_DIR=$DATA/fish/vendor_completions.d
else
  [ -n "${HOME:-}" ] || die "HOME is not set"
  DATA=${XDG_DATA_HOME:-$HOME/.local/share}
  HOME_DIR=$DATA/zfslab  # bench --hosts keeps its fleet-*.sqlite here too: never removed
  BIN_DIR=$HOME/.local/bin
  FISH_DIR=${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions
fi
VENV=$HOME_DIR/venv
MANIFEST=$HOME_DIR/installed-files
LINK=$BIN_DIR/zfslab
# destination  generator arguments (zfslab completion SHELL, zfslab man)
TARGETS="$DATA/bash-completion/completions/zfslab:completion bash
$DATA/zsh/site-functions/_zfslab:completion zsh
$FISH_DIR/zfslab.fish:completion fish
$DATA/man/man1/zfslab.1:man"

ours() {  # is this path one an earlier run made (listed, and for the link: still aiming at our venv)?
  [ -f "$MANIFEST" ] && grep -Fxq "$1" "$MANIFEST"
}

uninstall() {
  if [ -f "$MANIFEST" ]; then
    while IFS= read -r f; do
      [ -n "$f" ] || continue
      if [ "$f" = "$LINK" ] && [ "$(readlink "$f" 2>/dev/null)" != "$VENV/bin/zfslab" ]; then
        say "left $f: it no longer points into $VENV"
        continue
      fi
      rm -f "$f"
    done < "$MANIFEST"
    rm -f "$MANIFEST"
  fi
  rm -rf "$VENV" "$HOME_DIR/install.sh"
  rmdir "$HOME_DIR" 2>/dev/null || true  # kept when it holds anything else (bench's fleet databases)
  say "removed zfslab's $MODE install ($VENV and the files it listed)"
}

if [ "$UNINSTALL" = 1 ]; then
  uninstall
  exit 0
fi

if [ "$MODE" = system ] && ! { mkdir -p /opt 2>/dev/null && [ -w /opt ] && mkdir -p "$BIN_DIR" 2>/dev/null && [ -w "$BIN_DIR" ]; }; then
  die "/opt or $BIN_DIR is read-only here (TrueNAS SCALE?): run sh scripts/install.sh --user (docs/install.md)"
fi

# The link is checked first: a zfslab there that this script did not make stays, and nothing is installed.
if { [ -e "$LINK" ] || [ -L "$LINK" ]; } && [ "$(readlink "$LINK" 2>/dev/null)" != "$VENV/bin/zfslab" ]; then
  die "$LINK exists and was not made by this script; remove it yourself, or install with --user"
fi

python_ok() {  # python3 of at least 3.11, with the venv module
  command -v "$PY" >/dev/null 2>&1 && "$PY" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}
has_ensurepip() {  # Debian splits ensurepip's bundled pip into python3-venv
  "$PY" -c 'import ensurepip, sys; sys.exit(not ensurepip.version())' >/dev/null 2>&1
}

APT_PACKAGES="python3 python3-venv ca-certificates"
apt_install() {  # $1: "" as root, "sudo" for a user
  say "installing Debian's $APT_PACKAGES (apt-get${1:+ through sudo})"
  $1 env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    $1 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $APT_PACKAGES >/dev/null
}
can_sudo() {  # asks for a password only when someone can type it
  command -v sudo >/dev/null 2>&1 || return 1
  if [ -t 0 ]; then sudo -v; else sudo -n true 2>/dev/null; fi
}

if [ "$NO_APT" = 0 ] && { ! python_ok || ! has_ensurepip; }; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt_install "" || say "apt-get failed (see above)"
  elif command -v apt-get >/dev/null 2>&1 && can_sudo; then
    apt_install sudo || say "apt-get through sudo failed (see above)"
  fi
fi
python_ok || die "zfslab needs Python 3.11 or newer with its venv module; as root run: apt-get install $APT_PACKAGES"

if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  rm -rf "$VENV"  # made by an earlier run for a Python that is gone (a Debian upgrade)
fi
if [ ! -x "$VENV/bin/python" ]; then
  mkdir -p "$HOME_DIR"
  if has_ensurepip; then
    "$PY" -m venv "$VENV"
  else
    # No ensurepip and no apt (TrueNAS SCALE, or a user without sudo): pip from its wheel on PyPI,
    # checked against PyPI's sha256, run straight from the wheel to install itself.
    say "no ensurepip here: bootstrapping pip from its wheel on PyPI"
    "$PY" -m venv --without-pip "$VENV"
    "$VENV/bin/python" - <<'EOF'
import hashlib, json, os, subprocess, sys, tempfile, urllib.parse, urllib.request
index = "https://pypi.org/pypi/pip/json"
meta = json.load(urllib.request.urlopen(index, timeout=60))
wheel = next(u for u in meta["urls"] if u["packagetype"] == "bdist_wheel")
data = urllib.request.urlopen(urllib.parse.urljoin(index, wheel["url"]), timeout=300).read()  # a mirror may answer relative URLs
if hashlib.sha256(data).hexdigest() != wheel["digests"]["sha256"]:
    sys.exit(f"install.sh: {wheel['filename']} does not match PyPI's sha256")
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, wheel["filename"])
    with open(path, "wb") as f:
        f.write(data)
    subprocess.run([sys.executable, os.path.join(path, "pip"), "install", "-q", "--disable-pip-version-check", path],
                   check=True)
EOF
  fi
fi

# Built from a copy of the sources, so that pip's build/ and egg-info never land in the checkout
# (as root, they would be root's files in a user's clone).
BUILD=$(mktemp -d)
trap 'rm -rf "$BUILD"' EXIT
cp -R "$SRC/pyproject.toml" "$SRC/README.md" "$SRC/src" "$BUILD/"
find "$BUILD/src" \( -name '*.egg-info' -o -name __pycache__ \) -prune -exec rm -rf {} +
say "installing zfslab and its libraries into $VENV (numpy, scipy, matplotlib: a minute or two)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade "$BUILD" ||
  die "pip could not install zfslab into $VENV: see above"
cp "$0" "$HOME_DIR/install.sh"  # the uninstall works once the checkout is gone

record() {  # adds one path to the manifest, once
  ours "$1" || printf '%s\n' "$1" >> "$MANIFEST"
}
mkdir -p "$BIN_DIR"
ln -sfn "$VENV/bin/zfslab" "$LINK"
record "$LINK"
echo "$TARGETS" | while IFS=: read -r dest gen; do
  if [ -e "$dest" ] && ! ours "$dest"; then
    say "left $dest alone: it was not made by this script"
    continue
  fi
  mkdir -p "$(dirname "$dest")"
  # shellcheck disable=SC2086  # gen is two words on purpose
  "$VENV/bin/zfslab" $gen > "$dest.tmp.$$" && mv "$dest.tmp.$$" "$dest" || { rm -f "$dest.tmp.$$"; die "zfslab $gen failed"; }
  record "$dest"
done

again="sh $HOME_DIR/install.sh"
[ "$MODE" = user ] && [ "$(id -u)" = 0 ] && again="$again --user"
say "zfslab $("$LINK" --version | cut -d' ' -f2) installed: $LINK -> $VENV/bin/zfslab (uninstall: $again --uninstall)"
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *) say "$BIN_DIR is not on your PATH yet: log in again (Debian's ~/.profile adds it) or run $LINK" ;;
esac
if [ "$MODE" = user ]; then
  say "zsh: completion needs fpath+=($DATA/zsh/site-functions) before compinit in your ~/.zshrc"
fi
rm -rf "$BUILD"  # exec below skips the EXIT trap
if [ $# -gt 0 ]; then
  exec "$LINK" "$@"
fi
