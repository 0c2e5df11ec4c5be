// External account commands: the 404 lookup, and creation: pix directory lookup, screening, then
// the row and its two events in one transaction.
import { ownedOrNotFound } from './owned';
import { type DatabaseTransaction, isUniqueViolation, type DatabaseClient } from '../persistence/database';
import {
  ExternalAccountRow,
  findExternalAccount,
  findExternalAccountByIdentity,
  insertExternalAccount,
  listExternalAccounts as listExternalAccountRows,
} from '../persistence/external-accounts';
import { parsePixKey, PixKey } from '../domain/brazil';
import {
  accountIdentityOf,
  countryOfAccount,
  type ExternalAccountRail,
  ExternalAccountStatus,
} from '../domain/external-accounts';
import { newId } from '../domain/ids';
import { recordEvent } from '../persistence/events';
import { DomainError } from '../domain/errors';
import { PixDirectoryUnavailableError } from '../providers/pix-directory';
import type { ScreeningResult } from '../providers/screening';
import type { CreateExternalAccountRequest, ExternalAccountResource, PixDetails } from '../schemas/external-accounts';
import type { ApiServices } from '../app-services';
import { toExternalAccount } from '../presenters/external-accounts';
import { findCustomerOrThrow, ownedCustomerFilter } from './customers';
import { paginate, type PageRequest } from '../domain/pages';
import { type EnqueueStart, writeRequest, writeThenStart } from '../temporal/write-then-start';
import { insertScreening } from '../persistence/screening';
import { type ScreeningReviewInput, screeningReviewWorkflowId } from '../domain/screening-review';

/** An external account of this partner, or 404 (also for malformed ids and other partners' accounts). */
export async function findExternalAccountOrThrow(
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<ExternalAccountRow> {
  return ownedOrNotFound('external account', findExternalAccount, db, partnerId, id);
}

type RailDetails = { beneficiaryName: string; details: Record<string, unknown> };

/** Drops the optional fields the request left out, so that the stored rail object has none of them. */
const present = (object: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));

/**
 * The rail object to store and return, and whom to screen. Pix asks the directory for the holder; the other
 * rails store the normalised request object.
 */
async function railDetailsOf(services: ApiServices, request: CreateExternalAccountRequest): Promise<RailDetails> {
  if (request.payment_rail === 'pix') {
    const details = await pixDetailsOf(services, request.pix.key);
    return { beneficiaryName: details.beneficiary_name, details };
  }
  const account = (request as unknown as Record<ExternalAccountRail, Record<string, unknown>>)[request.payment_rail];
  const details = present(account);
  return { beneficiaryName: String(details.beneficiary_name), details };
}

function parsedPixKeyOrThrow(raw: string, param = 'pix.key'): PixKey {
  const parsed = parsePixKey(raw);
  if (!parsed.ok) throw new DomainError('pix_key_invalid', `${param} ${parsed.reason}.`);
  return parsed.key;
}

/**
 * A pix key checked as external accounts check it (format, then the pix directory: pix_key_invalid,
 * pix_directory_unavailable), as the rail object stored and shown. Payouts to a key given directly use it.
 */
export async function pixDetailsOf(services: ApiServices, rawKey: string, param = 'pix.key'): Promise<PixDetails> {
  const key = parsedPixKeyOrThrow(rawKey, param);
  const owner = await lookUpPixKey(services, key, param);
  return { key: key.value, key_type: key.type, bank_name: owner.bankName, beneficiary_name: owner.beneficiaryName };
}

async function lookUpPixKey(services: ApiServices, key: PixKey, param = 'pix.key') {
  let lookup;
  try {
    lookup = await services.pixDirectory.lookup(key);
  } catch (error) {
    if (error instanceof PixDirectoryUnavailableError) {
      services.logger.warn({ err: error }, 'pix directory unavailable');
      throw new DomainError('pix_directory_unavailable', 'The pix directory cannot be reached just now; retry later.');
    }
    throw error;
  }
  if (!lookup.found) {
    throw new DomainError(
      'pix_key_invalid',
      `${param}: no ${key.type} key ${key.value} is registered in the pix directory.`,
    );
  }
  return lookup;
}

function alreadyExists(existing: ExternalAccountRow): DomainError {
  return new DomainError(
    'external_account_already_exists',
    `The customer already registered this account as external account ${existing.id} (status ${existing.status}).`,
  );
}

/**
 * Registers an external account. The customer must be one of the partner's and not rejected (any
 * other status is fine: accounts can be registered while verification is still going on). The
 * account is screened before it is stored; a rejected account is stored and returned as rejected.
 */
export async function createExternalAccount(
  services: ApiServices,
  partnerId: string,
  request: CreateExternalAccountRequest,
): Promise<ExternalAccountResource> {
  const customer = await findCustomerOrThrow(services.prisma, partnerId, request.customer_id);
  if (customer.status === 'rejected') {
    throw new DomainError(
      'customer_rejected',
      `Customer ${customer.id} was rejected; it cannot register external accounts.`,
    );
  }
  const rail = await railDetailsOf(services, request);
  const accountIdentity = accountIdentityOf(request.payment_rail, rail.details);
  const findExisting = () => findExternalAccountByIdentity(services.prisma, customer.id, accountIdentity);
  // Checked first so that a repeat does not ask screening again; the unique index settles races.
  const known = await findExisting();
  if (known) throw alreadyExists(known);

  if (request.simulate !== undefined && services.config.appEnv !== 'sandbox') {
    throw DomainError.invalidParam('simulate', 'is a sandbox control; production accounts are screened as they are');
  }
  // Sandbox simulate=screening_review: a potential match whatever the name (docs/screening.md).
  const screening: ScreeningResult =
    request.simulate === 'screening_review'
      ? { outcome: 'review', reason: 'sandbox simulate=screening_review', report: { versions: [], matches: [] } }
      : await services.accountScreening.screen({
          paymentRail: request.payment_rail,
          name: rail.beneficiaryName,
          country: countryOfAccount(request.payment_rail, rail.details),
        });
  const status: ExternalAccountStatus = screening.outcome === 'review' ? 'under_review' : screening.outcome;
  const now = new Date();
  const id = newId();
  const write = async (tx: DatabaseTransaction, start?: EnqueueStart) => {
    const row = await insertExternalAccount(tx, {
      id,
      partnerId,
      customerId: customer.id,
      accountName: request.account_name,
      paymentRail: request.payment_rail,
      status,
      isThirdParty: request.is_third_party,
      details: rail.details,
      accountIdentity,
      screeningReason: screening.outcome === 'approved' ? null : screening.reason,
      createdAt: now,
      updatedAt: now,
    });
    // The report of a screening against the lists (the sandbox's deny list has none).
    const screeningId = screening.report
      ? await insertScreening(tx, {
          partnerId,
          subjectType: 'external_account',
          subjectId: row.id,
          resourceId: row.id,
          trigger: 'creation',
          name: rail.beneficiaryName,
          outcome: screening.outcome === 'approved' ? 'clear' : 'potential_match',
          listVersions: screening.report.versions,
          matches: screening.report.matches,
        })
      : null;
    const resource = toExternalAccount(row);
    for (const type of ['external_account.created', `external_account.${status}`] as const) {
      await recordEvent(tx, {
        partnerId,
        type,
        resourceId: row.id,
        resourceStatus: status,
        resource,
        createdAt: now,
      });
    }
    if (start && screeningId) {
      const review: ScreeningReviewInput = {
        subjectType: 'external_account',
        resourceId: row.id,
        partnerId,
        screeningIds: [screeningId],
        opening: 'creation',
      };
      await start({
        workflowType: 'screeningReviewWorkflow',
        workflowId: screeningReviewWorkflowId(row.id),
        args: [review],
        searchAttributes: { PartnerId: partnerId, ResourceId: row.id },
      });
    }
    return resource;
  };
  try {
    // A potential match opens its review workflow (an operator clears or confirms it), started like every
    // workflow of a new resource: its intent commits with the account.
    return await (status === 'under_review'
      ? writeThenStart(services, (tx, start) => write(tx, start))
      : writeRequest(services.prisma, (tx) => write(tx)));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await findExisting();
    throw existing ? alreadyExists(existing) : error;
  }
}

/** A page of the partner's external accounts, of one of its customers when `customerId` is given (404 if not its). */
export async function listExternalAccounts(
  db: DatabaseClient,
  partnerId: string,
  page: PageRequest,
  customerId: string | undefined,
) {
  const byCustomer = await ownedCustomerFilter(db, partnerId, customerId);
  return paginate(page, (keyset) => listExternalAccountRows(db, partnerId, byCustomer, keyset));
}
