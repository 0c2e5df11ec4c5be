-- Least privilege per table (docs/operations.md "Database roles"): on top of the rows-only grants of
-- 20261126204800_service_roles, each service role loses the tables its process never touches. Worked out from what
-- each process's code reaches (src/server.ts, src/worker.ts). A table a process may need soon stays granted.

-- Partner credentials and their rate-limit counters are the API's alone: the worker never authenticates a partner, so
-- a worker's credentials cannot read key hashes. Partners themselves: the worker reads them, never writes them.
REVOKE ALL ON api_keys, rate_limits FROM payments_worker;
REVOKE INSERT, UPDATE, DELETE ON partners FROM payments_worker;

-- The audit trail is written by the workflow that accepted an operator's update (the worker's activity) and read by
-- `npm run audit` as the owner: the API has nothing to do with it, so it can neither forge nor read decisions.
REVOKE ALL ON operator_actions FROM payments_api;
