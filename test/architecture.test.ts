// The layers of the code, checked by dependency-cruiser against the rules of .dependency-cruiser.cjs:
// no import cycle in src/, workflows/, activities/ and scripts/; src/domain without I/O; presenters pure;
// activities below the HTTP side; persistence below everything but src/domain; services without src/http; routes
// without src/persistence; schemas without the ledger and without the HTTP side; workflows deterministic; the database reached only
// through src/persistence, on imports: nothing else imports @prisma/*, pg, kysely or src/persistence/generated, and
// nothing else imports src/persistence/internal, the one module that turns the opaque handles of
// src/persistence/database.ts into Prisma Client or Kysely (so a handle outside persistence has no method to call).
// Every path a rule names must exist, or the rule would check nothing. One line check complements the import rules
// where imports cannot see, inside persistence too: a database transaction opened anywhere but withDatabaseTransaction.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import type { DatabaseClient, DatabaseTransaction } from '../src/persistence/database';
import { prismaOf } from '../src/persistence/internal/database';

const root = path.resolve(__dirname, '..');
const planted = 'test/fixtures/architecture';

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: Array<{ name: string }>;
}

function cruise(): { violations: Violation[]; modules: string[] } {
  const bin = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const args = [bin, 'src', 'workflows', 'activities', 'scripts', planted];
  const output = execFileSync(
    process.execPath,
    [...args, '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const report = JSON.parse(output) as { summary: { violations: Violation[] }; modules: Array<{ source: string }> };
  return { violations: report.summary.violations, modules: report.modules.map((module) => module.source) };
}

interface RuleEnd {
  path?: string | string[];
  pathNot?: string | string[];
}
interface Rule {
  name: string;
  from: RuleEnd;
  to: RuleEnd;
}

/** The rules of .dependency-cruiser.cjs. */
function loadRules(): Rule[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(path.join(root, '.dependency-cruiser.cjs')) as { forbidden: Rule[] }).forbidden;
}

/** Every path pattern of every rule of .dependency-cruiser.cjs, with the rule naming it. */
function rulePatterns(): Array<{ rule: string; pattern: string }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(path.join(root, '.dependency-cruiser.cjs')) as { forbidden: Rule[] };
  const listed = (value: string | string[] | undefined) => (value === undefined ? [] : [value].flat());
  return config.forbidden.flatMap((rule) =>
    [rule.from, rule.to].flatMap((end) =>
      [...listed(end.path), ...listed(end.pathNot)].map((pattern) => ({ rule: rule.name, pattern })),
    ),
  );
}

/** The files of the repository's folders, as dependency-cruiser names them (relative, with `/`). */
function filesUnder(folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/** The installed packages, as `node_modules/<name>/` (scoped ones as `node_modules/@scope/<name>/`). */
function installedPackages(): string[] {
  const top = readdirSync(path.join(root, 'node_modules')).filter((name) => !name.startsWith('.'));
  return top.flatMap((name) =>
    name.startsWith('@')
      ? readdirSync(path.join(root, 'node_modules', name)).map((inner) => `node_modules/${name}/${inner}/`)
      : [`node_modules/${name}/`],
  );
}

const describeViolation = (violation: Violation) =>
  `${violation.rule.name}: ${violation.from} -> ${violation.to}` +
  (violation.cycle ? ` (cycle ${violation.cycle.map((step) => step.name).join(' -> ')})` : '');

describe('architecture', () => {
  const { violations, modules } = cruise();

  it('cruises the application code', () => {
    for (const folder of [
      'src/domain/',
      'src/presenters/',
      'src/persistence/',
      'src/services/',
      'src/routes/',
      'src/schemas/',
      'workflows/',
      'activities/',
      'scripts/',
    ]) {
      expect(modules.some((module) => module.startsWith(folder))).toBe(true);
    }
  });

  it('catches an import cycle (the planted one under test/fixtures/architecture)', () => {
    // dependency-cruiser reports a cycle once, from one of its modules.
    expect(
      violations
        .filter((violation) => violation.from.startsWith(planted) && violation.rule.name === 'no-circular')
        .map(describeViolation),
    ).toEqual([
      expect.stringMatching(/^no-circular: .*cycle-[ab]\.ts -> .*cycle-[ab]\.ts \(cycle .*cycle-[ab]\.ts\)$/),
    ]);
  });

  it('refuses database access outside src/persistence on imports (the planted pg pool and unwrapped handle)', () => {
    expect(
      violations
        .filter((violation) => violation.from.startsWith(planted) && violation.rule.name !== 'no-circular')
        .map(describeViolation)
        .sort(),
    ).toEqual([
      `database-only-in-persistence: ${planted}/imports-pg.ts -> node_modules/pg/lib/index.js`,
      `database-types-only-in-persistence: ${planted}/unwraps-handle.ts -> src/persistence/internal/database.ts`,
    ]);
  });

  it('hands code outside persistence an opaque handle: no query on it compiles (npm test type-checks)', () => {
    // Should DatabaseClient or DatabaseTransaction carry Prisma's or Kysely's methods again, these directives are
    // unused and the type check fails.
    const outside = (db: DatabaseClient, tx: DatabaseTransaction) => [
      // @ts-expect-error the client is opaque outside persistence
      db.customer,
      // @ts-expect-error so is a transaction
      tx.selectFrom,
      // @ts-expect-error and the pool under it
      db.$disconnect,
    ];
    expect(() => outside({} as DatabaseClient, {} as DatabaseTransaction)).not.toThrow();
  });

  it('opens database transactions in one place: withDatabaseTransaction (src/persistence/internal/database.ts)', () => {
    const opensTransaction = /\$transaction\(|\.transaction\(\)|\bBEGIN\b/;
    const offenders = modules
      .filter(
        (module) => /^(src|activities|workflows)\//.test(module) && module !== 'src/persistence/internal/database.ts',
      )
      .flatMap((module) =>
        readFileSync(path.join(root, module), 'utf8')
          .split('\n')
          .map((line, index) => ({ line, at: `${module}:${index + 1}` }))
          .filter(({ line }) => opensTransaction.test(line) && !/^\s*(\/\/|\*)/.test(line))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it('exports from src/persistence/database.ts handles and no way to unwrap them (no Prisma, Kysely, pool or SQL)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const database = require(path.join(root, 'src/persistence/database')) as Record<string, unknown>;
    expect(Object.keys(database).sort()).toEqual([
      'DEAD_CLIENT_CHECK_MS',
      'DEAD_PROCESS_LOCKS_RELEASED_MS',
      'closeDatabaseClient',
      'connectionName',
      'connectionSettings',
      'createPrismaClient',
      'defaultDatabaseTimeouts',
      'isDatabaseUnavailable',
      'isMissingRow',
      'isUniqueViolation',
      'ownedBy',
      'withDatabaseTransaction',
    ]);
  });

  it('gives Prisma Client to the client only: prismaOf on a transaction is a type error (npm test type-checks)', () => {
    // Inside a transaction the statements are SQL (docs/development.md "Reaching the database"): should prismaOf
    // accept a transaction again, this directive is unused and the type check fails.
    const inTransaction = (tx: DatabaseTransaction) =>
      // @ts-expect-error prismaOf takes the client only
      prismaOf(tx);
    expect(() => inTransaction({} as DatabaseTransaction)).not.toThrow();
  });

  it('keeps src/schemas off the HTTP side: their checks throw DomainError, which any caller can read', () => {
    const rule = loadRules().find((candidate) => candidate.name === 'schemas-without-http');
    expect(rule?.from.path).toBe('^src/schemas/');
    expect(rule?.to.path).toEqual(expect.arrayContaining(['^src/http/', '^src/routes/']));
    const schemaModules = modules.filter((module) => module.startsWith('src/schemas/'));
    expect(schemaModules.length).toBeGreaterThan(10);
    const throwsApiError = schemaModules.filter((module) =>
      /\bApiError\b/.test(readFileSync(path.join(root, module), 'utf8')),
    );
    expect(throwsApiError).toEqual([]);
  });

  it('names in every rule only paths that exist (a rule about a removed module would check nothing)', () => {
    // A pattern names a Node.js module, an installed package, or a file of the repository: each must match one.
    const candidates = [
      ...builtinModules,
      ...installedPackages(),
      ...['src', 'workflows', 'activities', 'test', 'scripts'].flatMap(filesUnder),
    ];
    const patterns = rulePatterns();
    expect(patterns.length).toBeGreaterThan(20);
    const unmatched = patterns.filter(
      ({ pattern }) => !candidates.some((candidate) => new RegExp(pattern).test(candidate)),
    );
    expect(unmatched).toEqual([]);
  });

  it('breaks no layering rule in src/, workflows/, activities/ and scripts/', () => {
    expect(violations.filter((violation) => !violation.from.startsWith(planted)).map(describeViolation)).toEqual([]);
  });
});
