// Sanctions screening's tables: the list versions (each load, loaded or refused; a loaded one with its parsed entries)
// and the screenings with their reports. Also the pages of subjects a re-screening walks through.
import { sql } from 'kysely';
import { type DatabaseTransaction, jsonParameter, sqlOf, type Database } from './internal/database';
import type { ListEntry, ListSource } from '../screening/entries';
import type { MatchReport } from '../screening/matcher';
import type { ExternalAccountStatus } from '../domain/external-accounts';
import { newId } from '../domain/ids';

export interface ListVersionRow {
  id: string;
  source: ListSource;
  url: string;
  checksum: string;
  entryCount: number;
  publishedAt: string | null;
  status: 'loaded' | 'refused';
  detail: string | null;
  loadedAt: Date;
}

const versionColumns = [
  'id',
  'source',
  'url',
  'checksum',
  'entryCount',
  'publishedAt',
  'status',
  'detail',
  'loadedAt',
] as const;

/** The newest loaded version of every source (without entries): what every process screens against. */
export async function currentListVersions(db: Database): Promise<ListVersionRow[]> {
  const rows = await sqlOf(db)
    .selectFrom('screeningListVersions')
    .select(versionColumns)
    .distinctOn('source')
    .where('status', '=', 'loaded')
    .orderBy('source')
    .orderBy('loadedAt', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows as ListVersionRow[];
}

/** The parsed entries of a loaded version. */
export async function listVersionEntries(db: Database, id: string): Promise<ListEntry[]> {
  const row = await sqlOf(db)
    .selectFrom('screeningListVersions')
    .select('entries')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return (row.entries ?? []) as unknown as ListEntry[];
}

/** Every load of one source, newest first (the operator's view of what was loaded and refused). */
export async function listVersionHistory(db: Database, source: ListSource, limit = 20): Promise<ListVersionRow[]> {
  const rows = await sqlOf(db)
    .selectFrom('screeningListVersions')
    .select(versionColumns)
    .where('source', '=', source)
    .orderBy('loadedAt', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows as ListVersionRow[];
}

export type NewListVersion = Omit<ListVersionRow, 'id' | 'loadedAt'> & { entries: ListEntry[] | null };

export async function insertListVersion(db: Database, version: NewListVersion): Promise<ListVersionRow> {
  const row = await sqlOf(db)
    .insertInto('screeningListVersions')
    .values({ ...version, id: newId(), entries: version.entries ? jsonParameter(version.entries) : null })
    .returning(versionColumns)
    .executeTakeFirstOrThrow();
  return row as ListVersionRow;
}

export type ScreeningSubjectType = 'customer' | 'beneficial_owner' | 'external_account' | 'payout';
export type ScreeningTrigger = 'verification' | 'creation' | 'payout' | 'rescreening';

export interface NewScreening {
  partnerId: string;
  subjectType: ScreeningSubjectType;
  subjectId: string;
  resourceId: string;
  trigger: ScreeningTrigger;
  name: string;
  outcome: 'clear' | 'potential_match';
  listVersions: string[];
  matches: MatchReport[];
}

export interface ScreeningRow extends NewScreening {
  id: string;
  createdAt: Date;
}

export async function insertScreening(db: Database, screening: NewScreening): Promise<string> {
  const id = newId();
  await sqlOf(db)
    .insertInto('screenings')
    .values({ ...screening, id, matches: jsonParameter(screening.matches) ?? '[]' })
    .execute();
  return id;
}

/** The screenings that decided a resource's status (a customer, an external account), oldest first. */
export async function listScreenings(db: Database, resourceId: string): Promise<ScreeningRow[]> {
  const rows = await sqlOf(db)
    .selectFrom('screenings')
    .selectAll()
    .where('resourceId', '=', resourceId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    ...row,
    subjectType: row.subjectType as ScreeningSubjectType,
    trigger: row.trigger as ScreeningTrigger,
    outcome: row.outcome as ScreeningRow['outcome'],
    listVersions: row.listVersions ?? [],
    matches: (row.matches ?? []) as unknown as MatchReport[],
  }));
}

/** A customer as a screening needs it. */
export interface CustomerToScreen {
  id: string;
  partnerId: string;
  type: 'individual' | 'business';
  status: string;
  firstName: string | null;
  lastName: string | null;
  businessLegalName: string | null;
  dateOfBirth: Date | null;
  country: string;
  beneficiaries: { id: string; firstName: string; lastName: string; dateOfBirth: Date; country: string }[];
  /** Sandbox only: screening_review forces a potential match. */
  sandboxSimulation: string | null;
}

/**
 * Approved customers after `afterId` (by id), `limit` at most, each with its beneficial owners. Customers still in
 * verification are screened when they submit (their verification workflow owns their status until it ends).
 */
export async function customersToScreen(
  db: Database,
  afterId: string | null,
  limit: number,
  partnerIds?: string[],
): Promise<CustomerToScreen[]> {
  let query = sqlOf(db).selectFrom('customers').select(screenedCustomerColumns).where('status', '=', 'approved');
  if (afterId) query = query.where('id', '>', afterId);
  if (partnerIds) query = query.where('partnerId', 'in', partnerIds);
  return withBeneficiaries(db, await query.orderBy('id').limit(limit).execute());
}

/** The customers' columns a screening reads. */
const screenedCustomerColumns = [
  'id',
  'partnerId',
  'type',
  'status',
  'firstName',
  'lastName',
  'businessLegalName',
  'dateOfBirth',
  'country',
  'sandboxSimulation',
] as const;

/** Each customer with its beneficial owners, in their order, in one read for all of them. */
async function withBeneficiaries<Customer extends { id: string }>(
  db: Database,
  customers: Customer[],
): Promise<Array<Customer & Pick<CustomerToScreen, 'beneficiaries'>>> {
  if (customers.length === 0) return [];
  const owners = await sqlOf(db)
    .selectFrom('beneficiaries')
    .select(['id', 'customerId', 'firstName', 'lastName', 'dateOfBirth', 'country'])
    .where(
      'customerId',
      'in',
      customers.map((customer) => customer.id),
    )
    .orderBy('position')
    .execute();
  const ownersOf = new Map<string, CustomerToScreen['beneficiaries']>();
  for (const owner of owners) {
    const list = ownersOf.get(owner.customerId) ?? [];
    list.push(owner);
    ownersOf.set(owner.customerId, list);
  }
  return customers.map((customer) => ({ ...customer, beneficiaries: ownersOf.get(customer.id) ?? [] }));
}

/** An external account as a re-screening needs it. */
export interface ExternalAccountToScreen {
  id: string;
  partnerId: string;
  status: ExternalAccountStatus;
  paymentRail: string;
  details: Record<string, unknown>;
}

/** Approved external accounts after `afterId` (by id), `limit` at most. */
export async function externalAccountsToScreen(
  db: Database,
  afterId: string | null,
  limit: number,
  partnerIds?: string[],
): Promise<ExternalAccountToScreen[]> {
  let query = sqlOf(db)
    .selectFrom('externalAccounts')
    .select(['id', 'partnerId', 'status', 'paymentRail', 'details'])
    .where('status', '=', 'approved');
  if (afterId) query = query.where('id', '>', afterId);
  if (partnerIds) query = query.where('partnerId', 'in', partnerIds);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((row) => ({ ...row, details: (row.details ?? {}) as Record<string, unknown> }));
}

/**
 * Locks the account and moves it to `status` (screening's transitions); null, and nothing changed, when it is
 * already there (a retry) or rejected (final).
 */
export async function setExternalAccountScreeningStatus(
  tx: DatabaseTransaction,
  id: string,
  status: ExternalAccountStatus,
  reason: string | null,
): Promise<import('./external-accounts').ExternalAccountRow | null> {
  const current = await sqlOf(tx)
    .selectFrom('externalAccounts')
    .select('status')
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (current.status === status || current.status === 'rejected') return null;
  return sqlOf(tx)
    .updateTable('externalAccounts')
    .set({ status, screeningReason: reason, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One customer as customersToScreen gives them, whatever its status (the screening at verification). */
export async function customerToScreen(db: Database, customerId: string): Promise<CustomerToScreen> {
  const customer = await sqlOf(db)
    .selectFrom('customers')
    .select(screenedCustomerColumns)
    .where('id', '=', customerId)
    .executeTakeFirstOrThrow();
  const [withOwners] = await withBeneficiaries(db, [customer]);
  return withOwners!;
}

/**
 * The entries (source:id) operators cleared for an external account's holder: in the account's own reviews and in
 * the reviews of payouts held for it (their decisions name the account, details.external_account_id).
 */
export async function entriesClearedForAccount(db: Database, externalAccountId: string): Promise<Set<string>> {
  const rows = await sqlOf(db)
    .selectFrom('operatorActions')
    .select('details')
    .where('action', '=', 'clear')
    .where((where) =>
      where.or([
        where('resourceId', '=', externalAccountId),
        where.and([
          where('resourceType', '=', 'payout_screening'),
          where(sql<string>`details->>'external_account_id'`, '=', externalAccountId),
        ]),
      ]),
    )
    .execute();
  return new Set(
    rows.flatMap((row) => {
      const entries = (row.details as { entries?: unknown } | null)?.entries;
      return Array.isArray(entries) ? (entries as string[]) : [];
    }),
  );
}

/**
 * Deletes the loaded versions of `sources` (their entries are megabytes each) that are neither among the newest `keep`
 * of their source nor named by any screening's report (a report stays reproducible). Refused loads (no entries) stay
 * as the record of what was refused. Answers the versions deleted.
 */
export async function pruneListVersions(
  db: Database,
  options: { sources: ListSource[]; keep: number },
): Promise<{ source: string; checksum: string; loadedAt: Date }[]> {
  if (options.sources.length === 0) return [];
  const rows = await sql<{ source: string; checksum: string; loadedAt: Date }>`
    DELETE FROM screening_list_versions AS version
    WHERE version.status = 'loaded'
      AND version.source = ANY(${options.sources}::text[])
      AND version.id NOT IN (
        SELECT ranked.id FROM (
          SELECT id, row_number() OVER (PARTITION BY source ORDER BY loaded_at DESC, id DESC) AS position
          FROM screening_list_versions
          WHERE status = 'loaded' AND source = ANY(${options.sources}::text[])
        ) AS ranked
        WHERE ranked.position <= ${options.keep}
      )
      AND NOT EXISTS (
        SELECT 1 FROM screenings
        WHERE screenings.list_versions @> ARRAY[version.source || ':' || version.checksum]
      )
    RETURNING version.source, version.checksum, version.loaded_at AS "loadedAt"`.execute(sqlOf(db));
  return rows.rows;
}
