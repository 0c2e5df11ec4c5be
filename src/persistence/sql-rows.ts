// Rows read by id and inserted with one SQL statement, in exactly the shape Prisma's findUnique and create return
// them (with the to-one relations asked for). For the few hottest statements only: Prisma 6 compiles every call
// (database.ts), several times the CPU of the same statement on the pool (`npm run bench`).
// Each table's columns are declared once, by hand, in its module (a TableMap): the compiler checks that the map
// names every field of the Prisma row and nothing else, so a column added to the schema fails the typecheck until
// it is mapped; test/payments.test.ts ("read with SQL") compares the results with Prisma's own.
import { Prisma, type Db, type PrismaClient, type SqlTransaction, sqlPoolOf } from './database';

/** How a column's value becomes Prisma's (decimals as Prisma.Decimal, timestamps as Date) and JSON a parameter. */
export type ColumnKind = 'plain' | 'decimal' | 'decimals' | 'date' | 'json';

/** Every field of a Prisma row: its column, and its kind when not plain. */
export type ColumnMap<Row> = { readonly [Field in keyof Row]-?: readonly [column: string, kind?: ColumnKind] };

export interface TableMap<Row> {
  table: string;
  columns: ColumnMap<Row>;
}

/** A to-one relation read with the row: its field, the scalar field of this table holding the other's id, its table. */
export interface JoinedRelation {
  relation: string;
  foreignKey: string;
  target: TableMap<object>;
}

export interface RowByIdQuery<Row> {
  /** The prepared statement's name (parsed and planned once per connection). */
  readonly name: string;
  readonly text: string;
  /** A result row of `text` in Prisma's shape. */
  read(row: Record<string, unknown>): Row;
}

const quoted = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;
const entriesOf = (map: TableMap<object>) =>
  Object.entries(map.columns) as Array<[string, readonly [column: string, kind?: ColumnKind]]>;

/** A value as pg (pool) or Prisma ($queryRaw) decodes it, as Prisma's model API gives it. */
function asPrisma(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'decimal':
      return value instanceof Prisma.Decimal ? value : new Prisma.Decimal(String(value));
    case 'decimals':
      return (value as unknown[]).map((item) => asPrisma('decimal', item));
    case 'date':
      return value instanceof Date ? value : new Date(String(value));
    default:
      return value;
  }
}

/** A value as a statement parameter: decimals as text, JSON as text, Prisma's JSON nulls as NULL. */
function asParameter(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined || value === Prisma.DbNull || value === Prisma.JsonNull) return null;
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'decimal') return String(value);
  if (kind === 'decimals') return (value as unknown[]).map(String);
  return value;
}

/**
 * The statement reading one row of `root` by id with `joins` (LEFT JOINs, so an absent relation reads as null), and
 * with `forUpdate` under the row's lock (inside a transaction).
 */
export function rowByIdQuery<Row>(
  root: TableMap<object>,
  joins: JoinedRelation[] = [],
  options: { forUpdate?: boolean } = {},
): RowByIdQuery<Row> {
  const rootColumns = entriesOf(root);
  const columnOf = (map: TableMap<object>, field: string) => {
    const found = (map.columns as Record<string, readonly [string, ColumnKind?]>)[field];
    if (!found) throw new Error(`sql-rows: ${map.table} maps no field ${field}`);
    return found[0];
  };
  const columns = rootColumns.map(([field, [column]]) => `m.${quoted(column)} AS ${quoted(field)}`);
  const from = [`${quoted(root.table)} m`];
  joins.forEach((join, index) => {
    const alias = `r${index}`;
    for (const [field, [column]] of entriesOf(join.target)) {
      columns.push(`${alias}.${quoted(column)} AS ${quoted(`${join.relation}.${field}`)}`);
    }
    from.push(
      `LEFT JOIN ${quoted(join.target.table)} ${alias} ON ${alias}.${quoted(columnOf(join.target, 'id'))} = ` +
        `m.${quoted(columnOf(root, join.foreignKey))}`,
    );
  });
  const text =
    `SELECT ${columns.join(', ')} FROM ${from.join(' ')} WHERE m.${quoted(columnOf(root, 'id'))} = $1::uuid` +
    (options.forUpdate ? ' FOR UPDATE OF m' : '');
  const name = `row:${root.table}:${joins.map((join) => join.relation).join('+')}${options.forUpdate ? ':lock' : ''}`;
  return {
    name,
    text,
    read(row) {
      const result: Record<string, unknown> = {};
      for (const [field, [, kind = 'plain']] of rootColumns) result[field] = asPrisma(kind, row[field]);
      for (const join of joins) {
        if (row[`${join.relation}.id`] == null) {
          result[join.relation] = null;
          continue;
        }
        const nested: Record<string, unknown> = {};
        for (const [field, [, kind = 'plain']] of entriesOf(join.target)) {
          nested[field] = asPrisma(kind, row[`${join.relation}.${field}`]);
        }
        result[join.relation] = nested;
      }
      return result as Row;
    },
  };
}

/**
 * Runs the query: on the client's pool as a prepared statement, or inside an interactive transaction through it
 * (raw SQL skips Prisma's query compiler there too). Null when no row has that id.
 */
export async function readRowById<Row>(
  db: Db | SqlTransaction,
  query: RowByIdQuery<Row>,
  id: string,
): Promise<Row | null> {
  const rows: Record<string, unknown>[] =
    '$transaction' in db
      ? (await sqlPoolOf(db as PrismaClient).query({ name: query.name, text: query.text, values: [id] })).rows
      : await db.$queryRawUnsafe<Record<string, unknown>[]>(query.text, id);
  return rows[0] ? query.read(rows[0]) : null;
}

/**
 * Inserts one row in the caller's transaction and returns it as Prisma's create would: `data` by field name, the
 * timestamps set here when absent (as Prisma sets @default(now()) and @updatedAt), the other defaults the database's.
 */
export async function insertRow<Row>(
  tx: SqlTransaction,
  target: TableMap<Row>,
  data: Record<string, unknown>,
): Promise<Row> {
  const mapped = entriesOf(target as TableMap<object>);
  const now = new Date();
  const values: Record<string, unknown> = { ...data };
  for (const stamp of ['createdAt', 'updatedAt']) {
    if (values[stamp] === undefined && mapped.some(([field]) => field === stamp)) values[stamp] = now;
  }
  const given = mapped.filter(([field]) => values[field] !== undefined);
  for (const field of Object.keys(values)) {
    if (values[field] !== undefined && !given.some(([name]) => name === field))
      throw new Error(`sql-rows: ${target.table} maps no column for ${field}`);
  }
  const text =
    `INSERT INTO ${quoted(target.table)} (${given.map(([, [column]]) => quoted(column)).join(', ')}) ` +
    `VALUES (${given.map((_, index) => `$${index + 1}`).join(', ')}) ` +
    `RETURNING ${mapped.map(([field, [column]]) => `${quoted(column)} AS ${quoted(field)}`).join(', ')}`;
  const [row] = await tx.$queryRawUnsafe<Record<string, unknown>[]>(
    text,
    ...given.map(([field, [, kind = 'plain']]) => asParameter(kind, values[field])),
  );
  const result: Record<string, unknown> = {};
  for (const [field, [, kind = 'plain']] of mapped) result[field] = asPrisma(kind, row![field]);
  return result as Row;
}
