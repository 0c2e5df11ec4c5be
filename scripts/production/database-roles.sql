-- The API's and the worker's database roles (docs/operations.md "Database roles"), created before the first
-- migration grants them their rows: docker-compose.yml runs this at the database's first start. Development
-- passwords: a deployment sets its own.
CREATE ROLE payments_api LOGIN PASSWORD 'payments_api';
CREATE ROLE payments_worker LOGIN PASSWORD 'payments_worker';
