#!/bin/sh
# Creates the Temporal server's two PostgreSQL databases if missing and brings their schemas up to date with the
# schema tool of the server's own release (temporal-sql-tool; the schemas are built into it). Every step is
# idempotent: run it before each start of the server, as `npm run stack -- --production` (scripts/lib/temporal-server.ts)
# and docker-compose.yml's temporal-schema service (temporalio/admin-tools image) both do.
# Reads the server's own variables (docker-compose.yml's x-temporal-database): POSTGRES_SEEDS, DB_PORT,
# POSTGRES_USER, POSTGRES_PWD, and optionally DBNAME, VISIBILITY_DBNAME, TEMPORAL_SQL_TOOL (the binary).
# POSIX sh: the admin-tools image has no bash.
set -eu

tool="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"
export SQL_PLUGIN=postgres12
export SQL_HOST="${POSTGRES_SEEDS:?POSTGRES_SEEDS is not set}"
export SQL_PORT="${DB_PORT:-5432}"
export SQL_USER="${POSTGRES_USER:?POSTGRES_USER is not set}"
export SQL_PASSWORD="${POSTGRES_PWD:-}"

set_up() {
  database="$1"
  schema="$2"
  "$tool" --db "$database" create-database
  "$tool" --db "$database" setup-schema -v 0.0
  "$tool" --db "$database" update-schema --schema-name "postgresql/v12/$schema"
}

set_up "${DBNAME:-temporal}" temporal
set_up "${VISIBILITY_DBNAME:-temporal_visibility}" visibility
