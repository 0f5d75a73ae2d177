#!/usr/bin/env bash
# The browser tests' parts (crates/server/tests/browser.rs): Debian's Chromium, and from npm
# (pinned by scripts/browser/package-lock.json) the official JS client bundled into one file
# for the test page by esbuild, and playwright-core to drive Chromium.
#
#   eval "$(bash scripts/browser.sh)"   # install if needed, print the exports
#
# Installed into ~/.cache/stategraph/browser (kept between runs). npm runs without audit,
# fund or update checks and no install scripts. Chromium is installed with apt-get when
# missing (as root: CI's case); otherwise the tests say what is missing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${STATEGRAPH_BROWSER_CACHE:-$HOME/.cache/stategraph/browser}
pins="$repo/scripts/browser"
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser: installing Debian's chromium" >&2
    (apt-get install -y -q chromium >/dev/null 2>&1 ||
      (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null)) >&2
  else
    echo "browser: no chromium (apt-get install chromium)" >&2
    exit 1
  fi
fi

mkdir -p "$cache"
if [[ ! -d $cache/node_modules/playwright-core ]] || ! cmp -s "$pins/package-lock.json" "$cache/package-lock.json"; then
  cp "$pins/package.json" "$pins/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --no-update-notifier --ignore-scripts --loglevel=error) >&2
fi
cp -p "$pins/drive.mjs" "$pins/entry.js" "$cache/"
if [[ ! -f $cache/sdk.js ]] || [[ $cache/entry.js -nt $cache/sdk.js ]] || [[ $cache/package-lock.json -nt $cache/sdk.js ]]; then
  (cd "$cache" && ./node_modules/.bin/esbuild entry.js --bundle --format=iife --platform=browser \
    --log-level=warning --outfile=sdk.js) >&2
fi
echo "export STATEGRAPH_CHROMIUM=$(command -v chromium) STATEGRAPH_BROWSER_DIR=$cache"
