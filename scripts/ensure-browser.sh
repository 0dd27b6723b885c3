#!/usr/bin/env bash
# Makes sure Debian's Chromium is there for the /docs browser test (test/docs-browser.test.ts).
# Installs it with apt-get when we can (root, Debian); otherwise says loudly that the test will skip.
set -u
CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
  echo "Installing Debian's chromium for the browser test..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium > /dev/null
fi
if [ ! -x "$CHROMIUM" ]; then
  echo "!!! WARNING: no Chromium at $CHROMIUM and it cannot be installed here (needs root and apt-get)."
  echo "!!! The /docs browser test will be SKIPPED. Install it with: sudo apt-get install chromium"
fi
exit 0
