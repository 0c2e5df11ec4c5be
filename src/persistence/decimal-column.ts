// How decimal columns are typed in the Kysely tables generated from schema.prisma (generated/tables.ts): read as
// Prisma's Decimal (the pool's numeric parser, database.ts), written as a Decimal or its exact text (the
// DecimalParameters plugin sends both as text).
import type { ColumnType } from 'kysely';
import type { Prisma } from './generated/prisma/client';

type Decimal = Prisma.Decimal;
export type DecimalColumn = ColumnType<Decimal, Decimal | string, Decimal | string>;
/** An element of a decimal list column (rates): a Decimal read and written. */
export type DecimalValue = Decimal;
