#!/usr/bin/env bash
# A Node.js base image made from this host's files, for machines with no registry to pull
# docker.io/library/node from: the host's node binary (Node 20), npm, /bin/sh (dash) and /usr/bin/env, the
# shared libraries they load (ldd), a minimal /etc (passwd, group, nsswitch, hosts) and /tmp — imported with
# `podman import` (nothing run, nothing downloaded). The Containerfile builds on it with
#   --build-arg NODE_IMAGE=localhost/freshet-node-base:<node version>
# Elsewhere, use the default NODE_IMAGE (the official node:20-bookworm-slim) and skip this script.
#
# Usage: scripts/container-base.sh [image-name]   (default localhost/freshet-node-base:<node version>)
# Prints the image name on its last line.
set -euo pipefail

node_bin=$(readlink -f "$(command -v node)")
version=$("$node_bin" -p 'process.versions.node')
case "$version" in 20.*|22.*) ;; *) echo "container-base: node $version on this host; Freshet needs >= 20.11" >&2; exit 1 ;; esac
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
image=${1:-localhost/freshet-node-base:$version}

root=$(mktemp -d /tmp/freshet-base-XXXXXX)
trap 'rm -rf "$root"' EXIT

copy() { # copy a file to the same path under $root, keeping symlinks' targets as files
  mkdir -p "$root$(dirname "$1")"
  cp -L "$1" "$root$1"
}

sh_bin=$(readlink -f /bin/sh)
env_bin=$(readlink -f /usr/bin/env)
for bin in "$node_bin" "$sh_bin" "$env_bin"; do
  copy "$bin"
  # the dynamic loader and every library the binary loads
  ldd "$bin" | awk '/=>/ { print $3 } /^\s*\/lib/ { print $1 }' | sort -u | while read -r lib; do
    [ -n "$lib" ] && copy "$lib"
  done
done
mkdir -p "$root/bin" "$root/usr/bin" "$root/usr/local/bin"
[ "$node_bin" = /usr/bin/node ] || ln -s "$node_bin" "$root/usr/bin/node"
ln -sf "$sh_bin" "$root/bin/sh"
[ "$env_bin" = /usr/bin/env ] || ln -s "$env_bin" "$root/usr/bin/env"

# npm (a JavaScript program: its bin runs through /usr/bin/env node)
mkdir -p "$root/usr/lib/node_modules"
cp -a "$npm_dir" "$root/usr/lib/node_modules/npm"
ln -s /usr/lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s /usr/lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

mkdir -p "$root/etc" "$root/root" "$root/dev" "$root/proc" "$root/sys"
install -d -m 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"

tar -C "$root" -c . | podman import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'CMD ["node"]' \
  --message "node $version from $(hostname)'s files (scripts/container-base.sh)" \
  - "$image" >/dev/null
echo "$image"
