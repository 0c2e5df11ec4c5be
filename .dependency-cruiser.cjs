// The layering rules of the project, checked by test/architecture.test.ts (`npx depcruise src workflows
// activities` shows the same report). Paths are relative to the repository root. One pattern per path (no
// alternation of several paths in one pattern): the architecture test fails on a pattern that matches no file,
// package or Node.js module that exists, so that a rule naming something renamed or removed cannot pass silently
// by checking nothing.
/** Node modules that reach the outside world (files, network, processes). */
const ioCoreModules = [
  'fs',
  'fs/promises',
  'net',
  'http',
  'https',
  'http2',
  'dns',
  'dns/promises',
  'tls',
  'dgram',
  'child_process',
  'cluster',
  'worker_threads',
].map((name) => `^(node:)?${name}$`);
/** Packages that talk to the database, Temporal, HTTP clients and servers, or write logs. */
const ioPackages = ['@prisma/', 'pg(-|$|/)', '@temporalio/', 'koa', '@koa/', 'busboy', 'co-body', 'pino'].map(
  (name) => `(^|/)node_modules/${name}`,
);

/**
 * Scripts that set up, inspect or measure the database as the tests do: exempt from the two database rules (they
 * create databases and roles, compare the API with a bare pg floor, time Prisma's transactions against Kysely's,
 * check the chaos invariants on rows). scripts/codemods/opaque-handles.ts reads them from the rule.
 */
const databaseInsiderScripts = [
  '^scripts/lib/database\\.ts$',
  '^scripts/lib/stack\\.ts$',
  '^scripts/bench/',
  '^scripts/bench-transactions\\.ts$',
  '^scripts/chaos/system\\.ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle anywhere, type-only imports included: each layer only looks down.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-without-io',
      severity: 'error',
      comment: 'src/domain holds rules without I/O: it imports only itself and pure libraries.',
      from: { path: '^src/domain/' },
      to: { path: ['^src/(?!domain/)', '^activities/', '^workflows/', ...ioCoreModules, ...ioPackages] },
    },
    {
      name: 'presenters-pure',
      severity: 'error',
      comment:
        'src/presenters shape rows into API objects: no commands, HTTP, Temporal, events or ledger (row and provider types are fine).',
      from: { path: '^src/presenters/' },
      to: {
        path: [
          ...['services', 'routes', 'http', 'temporal', 'webhooks', 'storage'].map((folder) => `^src/${folder}/`),
          ...['app-services', 'config', 'logger', 'server', 'worker'].map((file) => `^src/${file}\\.ts$`),
          // The ledger's postings and balances (its rules, src/domain/ledger.ts, are pure and fine).
          '^src/persistence/ledger\\.ts$',
          '^activities/',
          '^workflows/',
          ...ioCoreModules,
          '(^|/)node_modules/@temporalio/',
        ],
      },
    },
    {
      name: 'presenters-types-only-from-io',
      severity: 'error',
      comment: 'A presenter may name the types of rows (persistence modules) and providers, never call them.',
      from: { path: '^src/presenters/' },
      to: {
        path: ['^src/persistence/', '^src/events\\.ts$', '^src/providers/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'activities-below-http',
      severity: 'error',
      comment:
        'Activities use the use cases (src/services), presenters, domain rules, events, ledger, providers and persistence: never the HTTP side.',
      from: { path: '^activities/' },
      to: { path: ['^src/(routes|http)/', '^src/app-services\\.ts$'] },
    },
    {
      name: 'persistence-below-the-rest',
      severity: 'error',
      comment:
        'src/persistence imports only itself, src/domain, the event catalogue (src/events.ts, a leaf) and the ambient trace context it stamps events with; types only from providers and screening (the values it stores).',
      from: { path: '^src/persistence/' },
      to: {
        path: ['^src/', '^activities/', '^workflows/'],
        pathNot: [
          '^src/persistence/',
          '^src/domain/',
          '^src/events\\.ts$',
          '^src/observability/trace-context\\.ts$',
          '^src/providers/',
          '^src/screening/',
        ],
      },
    },
    {
      name: 'persistence-types-only-from-providers',
      severity: 'error',
      comment: 'src/persistence names the types of what providers and screening produce, never calls them.',
      from: { path: '^src/persistence/' },
      to: { path: ['^src/providers/', '^src/screening/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'services-without-http',
      severity: 'error',
      comment:
        'Use cases (src/services) throw DomainError (src/domain/errors.ts) and take plain values: routes and the HTTP error mapper turn them into answers.',
      from: { path: '^src/services/' },
      to: { path: ['^src/http/', '^src/routes/'] },
    },
    {
      name: 'routes-through-services',
      severity: 'error',
      comment: 'Routes reach data only through services: no persistence module, not even for its types.',
      from: { path: '^src/routes/' },
      to: { path: '^src/persistence/' },
    },
    {
      name: 'schemas-without-ledger',
      severity: 'error',
      comment: 'Request and response schemas take currency lists from the money type, not from the ledger.',
      from: { path: '^src/schemas/' },
      to: { path: ['^src/domain/ledger\\.ts$', '^src/persistence/ledger\\.ts$'] },
    },
    {
      name: 'schemas-without-http',
      severity: 'error',
      comment:
        'Request and response schemas (src/schemas) throw DomainError from their checks, so they serve any caller: the HTTP side imports them, not the other way round.',
      from: { path: '^src/schemas/' },
      to: { path: ['^src/http/', '^src/routes/'] },
    },
    {
      name: 'database-only-in-persistence',
      severity: 'error',
      comment:
        'src/persistence is the only code that talks to the database: nothing else imports the Prisma client, Kysely, pg or the generated table types (types included). Tests and the listed scripts (databaseInsiderScripts) are exempt.',
      from: { pathNot: ['^src/persistence/', '^test/(?!fixtures/)', ...databaseInsiderScripts] },
      to: {
        path: [
          '(^|/)node_modules/@prisma/',
          '(^|/)node_modules/pg(-|$|/)',
          '(^|/)node_modules/kysely/',
          '^src/persistence/generated/',
        ],
      },
    },
    {
      name: 'database-types-only-in-persistence',
      severity: 'error',
      comment:
        'Outside src/persistence a database handle is opaque (src/persistence/database.ts): only persistence unwraps it into Prisma Client or Kysely (src/persistence/internal/). Tests (assertions on rows) and the listed scripts that inspect or measure the database the same way are exempt.',
      from: { pathNot: ['^src/persistence/', '^test/(?!fixtures/)', ...databaseInsiderScripts] },
      to: { path: '^src/persistence/internal/' },
    },
    {
      name: 'workflows-deterministic',
      severity: 'error',
      comment:
        'Workflow code runs in the deterministic sandbox: from src/ only src/domain and the search attributes (types are erased and fine).',
      from: { path: '^workflows/' },
      to: {
        path: '^src/',
        pathNot: ['^src/domain/', '^src/temporal/search-attributes\\.ts$', '^src/temporal/failure-types\\.ts$'],
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    // The Prisma client generated into src/persistence/generated is Prisma's code (its internal cycles included).
    // Packages are not followed but stay in the graph: excluding node_modules would leave every rule about a package
    // (database-only-in-persistence, domain-without-io) checking nothing.
    doNotFollow: { path: ['node_modules', '^src/persistence/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^dist/' },
  },
};
