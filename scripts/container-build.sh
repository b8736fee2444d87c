#!/usr/bin/env bash
# Builds the Containerfile with podman (`--isolation chroot`: no container runtime needed) into
# localhost/freshet:<version>, in Docker format so its HEALTHCHECK is kept. Without NODE_IMAGE set it first
# makes a base image from this host's Node (scripts/container-base.sh: there is no registry to pull
# node:20-bookworm-slim from on these machines). The npm installs run offline from this host's npm cache
# (mounted at /root/.npm), so nothing is downloaded; set FRESHET_IMAGE_ONLINE=1 to let them use the registry.
# Prints the image's name, size and configuration; bounded by FRESHET_IMAGE_TIMEOUT_S (900).
#
# Usage: scripts/container-build.sh            then scripts/container-check.sh (runs it without `podman run`)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v podman >/dev/null || { echo "container-build: podman is not installed (apt-get install -y podman)" >&2; exit 1; }
version=$(node -p "require('./package.json').version")
image=localhost/freshet:$version
started=$(date +%s)
base=${NODE_IMAGE:-$(scripts/container-base.sh 2>/dev/null | tail -1)}
offline=true
[ "${FRESHET_IMAGE_ONLINE:-0}" = 1 ] && offline=false
cache=${npm_config_cache:-$HOME/.npm}
timeout "${FRESHET_IMAGE_TIMEOUT_S:-900}" podman build --isolation chroot --format docker \
  --build-arg NODE_IMAGE="$base" --build-arg npm_config_offline=$offline \
  --volume "$cache:/root/.npm" \
  --tag "$image" --file Containerfile .
echo "built $image on $base in $(($(date +%s) - started)) s"
podman image inspect "$image" --format \
  'size {{.Size}} B; user {{.Config.User}}; volumes {{.Config.Volumes}}; entrypoint {{.Config.Entrypoint}} {{.Config.Cmd}}; env {{.Config.Env}}; healthcheck {{.Config.Healthcheck}}'
