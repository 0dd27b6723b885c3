#!/usr/bin/env bash
# mmdebstrap's extract hook for base.sh: shapes the extracted root ($1) as distroless does.
# BASE_WORK is base.sh's work folder: node's package, and where the package list goes.
set -euo pipefail
root=$1
debs=$root/var/cache/apt/archives
# apt brings dependencies too: what only maintainer scripts use (debconf, the openssl tool and its
# library; Node has its own OpenSSL) is removed, as distroless leaves it out.
for unwanted in debconf openssl libssl3; do
  for deb in "$debs/${unwanted}"_*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -t > "$BASE_WORK/files"
    grep -v '/$' "$BASE_WORK/files" | (cd "$root" && xargs -r rm -f)
    # Its folders too, deepest first, where nothing else is left in them.
    grep -E '/.+/$' "$BASE_WORK/files" | sort -r | (cd "$root" && xargs -r rmdir --ignore-fail-on-non-empty 2>/dev/null) || true
    rm -f "$deb"
  done
done
# What is left, for the SBOM: "name version architecture" a line.
for deb in "$debs"/*.deb; do dpkg-deb --show --showformat='${Package} ${Version} ${Architecture}\n' "$deb"; done | sort > "$BASE_WORK/packages"
# ca-certificates' bundle, which its maintainer script would have made.
mkdir -p "$root/etc/ssl/certs"
cat "$root"/usr/share/ca-certificates/mozilla/*.crt > "$root/etc/ssl/certs/ca-certificates.crt"
# root, and the non-root user the service runs as (distroless's nonroot).
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
mkdir -p "$root/home/nonroot" "$root/tmp" "$root/usr/local/bin" "$root/usr/local/share/doc/node"
chown 65532:65532 "$root/home/nonroot"
chmod 1777 "$root/tmp"
cp "$BASE_WORK/package/bin/node" "$root/usr/local/bin/node"
cp "$BASE_WORK/package/LICENSE" "$root/usr/local/share/doc/node/LICENSE"
rm -rf "$root"/usr/share/man
