#!/usr/bin/env bash
# Makes sure a command from Debian's packages is there: installs its package with apt-get when we
# can (root, Debian); otherwise says loudly what cannot run, and exits 1.
#   ensure-tool.sh COMMAND PACKAGE WHAT-NEEDS-IT
set -u
command=$1 package=$2 need=$3
command -v "$command" > /dev/null && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
  echo "Installing Debian's $package for $need..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" > /dev/null
fi
if ! command -v "$command" > /dev/null; then
  echo "!!! WARNING: no $command here, and it cannot be installed (that needs root and apt-get)."
  echo "!!! $need needs it. Install it with: sudo apt-get install $package"
  exit 1
fi
