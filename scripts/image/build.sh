#!/usr/bin/env bash
# npm run image: builds localhost/plant-store:latest, also tagged with openapi.yaml's info.version
# and the commit, from the committed tree (git archive HEAD), with nothing but Debian's packages
# and the npm registry. The same commit builds the same image: every time in it is the commit's
# (SOURCE_DATE_EPOCH). Writes dist/image/: the SBOM and the image's digest.
# BASE=<image> builds on another base (node:24-slim, a distroless Node) instead of the one made
# here with mmdebstrap (scripts/image/base.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/scripts/image/containers.conf}
# Debian's container tools, as root: runc (CONTAINERS_CONF's runtime), netavark and iptables for
# the containers' network and published ports (installed without recommends, podman has neither).
for tool in podman buildah mmdebstrap runc /usr/lib/podman/netavark /usr/sbin/iptables; do
  bash scripts/ensure-tool.sh "$tool" "$(basename "$tool")" 'the container image' >&2
done

commit=$(git rev-parse HEAD)
short=$(git rev-parse --short=12 HEAD)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
version=$(git show HEAD:openapi.yaml | sed -nE 's/^  version: ([0-9][^ ]*)$/\1/p' | head -n 1)
# The repository's address as package.json states it (never a path of the machine that builds).
source=$(node -p "require('./package.json').repository?.url ?? 'plant-store'")
out=$root/dist/image
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out" "$stage/src" "$stage/sbom-tool" "$stage/context/app" "$stage/context/compile-cache" "$stage/context/app-data"
started=$SECONDS

# The app, as npm start runs it: built, then only the production dependencies.
git archive HEAD | tar -x -C "$stage/src"
(
  cd "$stage/src"
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent build
  npm prune --omit=dev --omit=optional --no-audit --no-fund --loglevel=error
  # npm prune at times leaves a scope's folder behind empty (node_modules/@pkgjs was seen), and
  # then two builds of one commit differ; no package needs an empty folder.
  find node_modules -depth -type d -empty -delete
) >&2
# CycloneDX's own npm tool (npm sbom refuses a pruned tree, and reads a lockfile alone short of
# its production packages), reproducible: no serial number, no time. It has a lockfile of its own,
# installed without its optional XML validator: libxmljs2, a native addon compiled from source at
# each install (a minute of CPU, in each of CI's installs), for XML never written here.
cp scripts/image/sbom-tool/package.json scripts/image/sbom-tool/package-lock.json "$stage/sbom-tool/"
npm ci --prefix "$stage/sbom-tool" --omit=optional --no-audit --no-fund --loglevel=error >&2
"$stage/sbom-tool/node_modules/.bin/cyclonedx-npm" --omit dev --omit optional --ignore-npm-errors --output-reproducible \
  --output-format JSON --output-file "$stage/npm-sbom.json" "$stage/src/package.json" 2>/dev/null
# better-sqlite3 ships SQLite's source and a binary for every platform: only this one's is run.
sqlite=$stage/src/node_modules/better-sqlite3
rm -rf "$sqlite/deps" "$sqlite/src"
find "$sqlite/prebuilds" -type f ! -name "linux-$(node -p process.arch).node" -delete
cp -r "$stage/src/dist" "$stage/src/node_modules" "$stage/src/openapi.yaml" "$stage/src/package.json" "$stage/src/LICENSE" "$stage/context/app/"
cp deploy/warm-compile-cache.mjs "$stage/context/app/"

# tini, static, from Debian: PID 1 whatever the base, and a Debian package of the SBOM's.
(cd "$stage" && apt-get download tini >/dev/null 2>&1 || { apt-get update -qq && apt-get download tini; }) >&2
dpkg-deb --fsys-tarfile "$stage"/tini_*.deb | tar -x -C "$stage" ./usr/bin/tini-static
cp "$stage/usr/bin/tini-static" "$stage/context/tini"
dpkg-deb --show --showformat='${Package} ${Version} ${Architecture}\n' "$stage"/tini_*.deb > "$stage/packages"

if [ -z "${BASE:-}" ]; then
  node_version=$(node -p "require('./deploy/node.json').version")
  bash scripts/image/base.sh "$stage/base.tar" "$SOURCE_DATE_EPOCH" >&2
  base=localhost/plant-store-base:node$node_version
  container=$(buildah from scratch)
  buildah add --quiet "$container" "$stage/base.tar" / >/dev/null
  buildah commit --quiet --timestamp "$SOURCE_DATE_EPOCH" --rm "$container" "$base" >/dev/null
  cat "$stage/base.tar.packages" >> "$stage/packages"
else
  base=$BASE node_version=-
fi
node scripts/image/sbom.ts "$stage/npm-sbom.json" "$stage/packages" "$node_version" "$commit" "$SOURCE_DATE_EPOCH" > "$stage/context/app/sbom.cdx.json"
cp "$stage/context/app/sbom.cdx.json" "$out/sbom.cdx.json"

podman build --quiet --timestamp "$SOURCE_DATE_EPOCH" --file deploy/Containerfile \
  --build-arg BASE="$base" --build-arg VERSION="$version" --build-arg REVISION="$commit" \
  --build-arg CREATED="$created" --build-arg SOURCE="$source" \
  --tag localhost/plant-store:latest --tag "localhost/plant-store:$version" --tag "localhost/plant-store:$short" \
  "$stage/context" > /dev/null
digest=$(podman image inspect --format '{{.Digest}}' localhost/plant-store:latest)
echo "$digest" > "$out/digest"
size=$(podman image inspect --format '{{.Size}}' localhost/plant-store:latest)
echo "localhost/plant-store:latest ($version, $short) $digest, $((size / 1024 / 1024)) MiB, built in $((SECONDS - started)) s on $base"
