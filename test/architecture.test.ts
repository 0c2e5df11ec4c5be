// The layers of the code, checked by dependency-cruiser against the rules of .dependency-cruiser.cjs:
// no import cycle in src/, workflows/ and activities/; src/domain without I/O; presenters pure;
// activities below the HTTP side; persistence below everything but src/domain; services without src/http; routes
// without src/persistence; schemas without the ledger and without the HTTP side; workflows deterministic; the database reached only
// through src/persistence (an import rule: nothing else imports @prisma/*, pg, kysely or src/persistence/generated).
// Every path a rule names must exist, or the rule would check nothing. Two line checks complement the import
// rules where imports cannot see: a client handed to a service (typed by a src/persistence re-export) used for a
// query there, and a database transaction opened anywhere but withDatabaseTransaction.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { type DatabaseTransaction, prismaOf } from '../src/persistence/database';

const root = path.resolve(__dirname, '..');
const plantedCycle = 'test/fixtures/architecture';

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: Array<{ name: string }>;
}

function cruise(): { violations: Violation[]; modules: string[] } {
  const bin = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const args = [bin, 'src', 'workflows', 'activities', plantedCycle];
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
    ]) {
      expect(modules.some((module) => module.startsWith(folder))).toBe(true);
    }
  });

  it('catches an import cycle (the planted one under test/fixtures/architecture)', () => {
    // dependency-cruiser reports a cycle once, from one of its modules.
    expect(violations.filter((violation) => violation.from.startsWith(plantedCycle)).map(describeViolation)).toEqual([
      expect.stringMatching(/^no-circular: .*cycle-[ab]\.ts -> .*cycle-[ab]\.ts \(cycle .*cycle-[ab]\.ts\)$/),
    ]);
  });

  it('reaches the database only through src/persistence (no query, raw SQL, pool or transaction elsewhere)', () => {
    const databaseCall =
      /\$queryRaw|\$executeRaw|\$transaction\(|sqlPoolOf\(|sqlOf\(|\.(selectFrom|insertInto|updateTable|deleteFrom)\(|\b(prisma|tx|db)\.[a-z][A-Za-z]+\.(find|create|update|upsert|delete|count|aggregate|groupBy)/;
    const offenders = modules
      .filter((module) => /^(src|activities|workflows)\//.test(module) && !module.startsWith('src/persistence/'))
      .flatMap((module) =>
        readFileSync(path.join(root, module), 'utf8')
          .split('\n')
          .map((line, index) => ({ line, at: `${module}:${index + 1}` }))
          .filter(({ line }) => databaseCall.test(line) && !/^\s*(\/\/|\*)/.test(line))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it('opens database transactions in one place: withDatabaseTransaction (src/persistence/database.ts)', () => {
    const opensTransaction = /\$transaction\(|\.transaction\(\)|\bBEGIN\b/;
    const offenders = modules
      .filter((module) => /^(src|activities|workflows)\//.test(module) && module !== 'src/persistence/database.ts')
      .flatMap((module) =>
        readFileSync(path.join(root, module), 'utf8')
          .split('\n')
          .map((line, index) => ({ line, at: `${module}:${index + 1}` }))
          .filter(({ line }) => opensTransaction.test(line) && !/^\s*(\/\/|\*)/.test(line))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it('re-exports neither Prisma nor Kysely from src/persistence/database.ts (code outside persistence gets a handle)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const database = require(path.join(root, 'src/persistence/database')) as Record<string, unknown>;
    expect(Object.keys(database)).toEqual(expect.arrayContaining(['withDatabaseTransaction', 'prismaOf', 'sqlOf']));
    expect(Object.keys(database).filter((name) => ['Prisma', 'PrismaClient', 'sql', 'Kysely'].includes(name))).toEqual(
      [],
    );
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

  it('breaks no layering rule in src/, workflows/ and activities/', () => {
    expect(violations.filter((violation) => !violation.from.startsWith(plantedCycle)).map(describeViolation)).toEqual(
      [],
    );
  });
});
