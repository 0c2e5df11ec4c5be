#!/usr/bin/env bash
# Provides promtool (Prometheus' rule checker) for test/observability.test.ts without a download from GitHub: the
# binary is taken out of Debian's `prometheus` package (`apt-get download`, no installation, no service), and cached
# in .cache/promtool (git-ignored). PROMTOOL_PATH overrides it. Prints the path.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/promtool"

if [[ -n "${PROMTOOL_PATH:-}" ]]; then echo "$PROMTOOL_PATH"; exit 0; fi
if [[ -x "$cache/promtool" ]]; then echo "$cache/promtool"; exit 0; fi
if command -v promtool >/dev/null 2>&1; then command -v promtool; exit 0; fi

log() { echo "[promtool] $*" >&2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
log "fetching Debian's prometheus package for its promtool (first run only)"
if ! apt-get download prometheus >&2 2>/dev/null; then
  # The package lists may be missing on a fresh machine.
  if [[ "$(id -u)" == "0" ]]; then apt-get update -qq >&2 && apt-get download prometheus >&2; fi
fi
deb="$(ls "$work"/prometheus_*.deb 2>/dev/null | head -1)"
if [[ -z "$deb" ]]; then
  log "could not fetch Debian's prometheus package: set PROMTOOL_PATH to a promtool binary"
  exit 1
fi
dpkg-deb -x "$deb" "$work/extracted"
mkdir -p "$cache"
install -m 0755 "$work/extracted/usr/bin/promtool" "$cache/promtool"
"$cache/promtool" --version >&2
echo "$cache/promtool"
