// Rows read by id with one SQL statement, in exactly the shape Prisma's findUnique returns them (with the
// to-one relations asked for). For the few hottest reads only: Prisma 6 compiles every call (src/persistence/database.ts), 1.6 ms of
// CPU for a transaction with its two accounts against 0.15 ms for the same statement on the pool (`npm run bench`).
// The columns and their conversions come from the Prisma schema (Prisma.dmmf), so a column added there is read
// here too; test/payments.test.ts ("read with SQL") compares them with Prisma's own results.
import { Prisma, type Db, type PrismaClient, type SqlTransaction, sqlPoolOf } from './database';

type ModelName = Prisma.ModelName;
type RuntimeField = { name: string; kind: string; type: string; dbName?: string | null };

/** A to-one relation to read with the row: its field, and the scalar field of this model holding the other's id. */
export interface JoinedRelation {
  relation: string;
  foreignKey: string;
}

export interface RowByIdQuery<Row> {
  /** The prepared statement's name (parsed and planned once per connection). */
  readonly name: string;
  readonly text: string;
  /** A result row of `text` in Prisma's shape. */
  read(row: Record<string, unknown>): Row;
}

function modelOf(name: string): { table: string; fields: RuntimeField[] } {
  const model = Prisma.dmmf.datamodel.models.find((candidate) => candidate.name === name);
  if (!model) throw new Error(`sql-rows: no model ${name}`);
  return { table: model.dbName ?? model.name, fields: model.fields as unknown as RuntimeField[] };
}

const quoted = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;
const scalarsOf = (fields: RuntimeField[]) =>
  fields.filter((field) => field.kind === 'scalar' || field.kind === 'enum');

/** A value as pg (pool) or Prisma ($queryRaw) decodes it, as Prisma's model API gives it. */
function asPrisma(type: string, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => asPrisma(type, item));
  switch (type) {
    case 'Decimal':
      return value instanceof Prisma.Decimal ? value : new Prisma.Decimal(String(value));
    case 'DateTime':
      return value instanceof Date ? value : new Date(String(value));
    case 'BigInt':
      return typeof value === 'bigint' ? value : BigInt(String(value));
    default:
      return value;
  }
}

/**
 * The statement reading one `model` row by id with `joins` (LEFT JOINs, so an absent relation reads as null), and
 * with `forUpdate` under the row's lock (inside a transaction).
 */
export function rowByIdQuery<Row>(
  model: ModelName,
  joins: JoinedRelation[] = [],
  options: { forUpdate?: boolean } = {},
): RowByIdQuery<Row> {
  const root = modelOf(model);
  const rootScalars = scalarsOf(root.fields);
  const columnOf = (fields: RuntimeField[], name: string) => {
    const field = fields.find((candidate) => candidate.name === name);
    if (!field) throw new Error(`sql-rows: ${model} has no field ${name}`);
    return field.dbName ?? field.name;
  };
  const columns = rootScalars.map((field) => `m.${quoted(field.dbName ?? field.name)} AS ${quoted(field.name)}`);
  const from = [`${quoted(root.table)} m`];
  const related = joins.map((join, index) => {
    const relationField = root.fields.find((field) => field.name === join.relation && field.kind === 'object');
    if (!relationField) throw new Error(`sql-rows: ${model} has no relation ${join.relation}`);
    const target = modelOf(relationField.type);
    const alias = `r${index}`;
    const scalars = scalarsOf(target.fields);
    for (const field of scalars) {
      columns.push(`${alias}.${quoted(field.dbName ?? field.name)} AS ${quoted(`${join.relation}.${field.name}`)}`);
    }
    from.push(
      `LEFT JOIN ${quoted(target.table)} ${alias} ON ${alias}.${quoted(columnOf(target.fields, 'id'))} = ` +
        `m.${quoted(columnOf(root.fields, join.foreignKey))}`,
    );
    return { relation: join.relation, scalars };
  });
  const text =
    `SELECT ${columns.join(', ')} FROM ${from.join(' ')} WHERE m.${quoted(columnOf(root.fields, 'id'))} = $1::uuid` +
    (options.forUpdate ? ' FOR UPDATE OF m' : '');
  const name = `row:${model}:${joins.map((join) => join.relation).join('+')}${options.forUpdate ? ':lock' : ''}`;
  return {
    name,
    text,
    read(row) {
      const result: Record<string, unknown> = {};
      for (const field of rootScalars) result[field.name] = asPrisma(field.type, row[field.name]);
      for (const { relation, scalars } of related) {
        if (row[`${relation}.id`] == null) {
          result[relation] = null;
          continue;
        }
        const nested: Record<string, unknown> = {};
        for (const field of scalars) nested[field.name] = asPrisma(field.type, row[`${relation}.${field.name}`]);
        result[relation] = nested;
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

/** A value as a statement parameter: decimals and money as text, JSON as text, Prisma's JSON null as NULL. */
function asParameter(type: string, value: unknown): unknown {
  if (value === null || value === undefined || value === Prisma.DbNull || value === Prisma.JsonNull) return null;
  if (Array.isArray(value) && type !== 'Json') return value.map((item) => asParameter(type, item));
  if (type === 'Json') return JSON.stringify(value);
  if (type === 'Decimal') return String(value);
  return value;
}

/**
 * Inserts one `model` row in the caller's transaction and returns it as Prisma's create would: `data` by field
 * name, the timestamps set here when absent (as Prisma sets @default(now()) and @updatedAt), the other defaults
 * the database's.
 */
export async function insertRow<Row>(
  tx: SqlTransaction,
  model: ModelName,
  data: Record<string, unknown>,
): Promise<Row> {
  const { table, fields } = modelOf(model);
  const scalars = scalarsOf(fields);
  const now = new Date();
  const values: Record<string, unknown> = { ...data };
  for (const stamp of ['createdAt', 'updatedAt']) {
    if (values[stamp] === undefined && scalars.some((field) => field.name === stamp)) values[stamp] = now;
  }
  const given = scalars.filter((field) => values[field.name] !== undefined);
  for (const name of Object.keys(values)) {
    if (values[name] !== undefined && !given.some((field) => field.name === name))
      throw new Error(`sql-rows: ${model} has no column for ${name}`);
  }
  const column = (field: RuntimeField) => quoted(field.dbName ?? field.name);
  const text =
    `INSERT INTO ${quoted(table)} (${given.map(column).join(', ')}) ` +
    `VALUES (${given.map((_, index) => `$${index + 1}`).join(', ')}) ` +
    `RETURNING ${scalars.map((field) => `${column(field)} AS ${quoted(field.name)}`).join(', ')}`;
  const [row] = await tx.$queryRawUnsafe<Record<string, unknown>[]>(
    text,
    ...given.map((field) => asParameter(field.type, values[field.name])),
  );
  const result: Record<string, unknown> = {};
  for (const field of scalars) result[field.name] = asPrisma(field.type, row![field.name]);
  return result as Row;
}
