// Virtual account commands: the 404 lookup and creation with its workflow (sandbox: approved at
// once with deposit details; production: under review).
import { ownedOrNotFound } from './owned';
import {
  isUniqueViolation,
  withDatabaseTransaction,
  type Database,
  type DatabaseClient,
} from '../persistence/database';
import { newId } from '../domain/ids';
import { recordEvent } from '../persistence/events';
import { DomainError } from '../domain/errors';
import {
  allocateDepositDetails,
  findVirtualAccount,
  insertVirtualAccount,
  listVirtualAccounts as listVirtualAccountRows,
  storeDepositReferences,
  VirtualAccountRow,
} from '../persistence/virtual-accounts';
import { beneficiaryNameOf, toVirtualAccount } from '../presenters/virtual-accounts';
import type {
  CreateVirtualAccountRequest,
  VirtualAccountResource,
  VirtualAccountStatus,
} from '../schemas/virtual-accounts';
import type { ApiServices } from '../app-services';
import { workflowIds } from '../temporal/workflow-ids';
import { workflowStart, writeThenStart } from '../temporal/write-then-start';
import { WorkflowNotFoundError } from '@temporalio/client';
import { withTemporalDeadline } from '../temporal/calls';
import { updateRefusal } from '../temporal/errors';
import { cancellableVirtualAccountStatuses, cancelVirtualAccountRow } from './virtual-account-cancellation';
import {
  cancelVirtualAccountUpdate,
  virtualAccountRefusals,
  virtualAccountWorkflow,
} from '../../workflows/virtual-account';
import { ownedCustomerFilter, requireApprovedCustomer } from './customers';
import { paginate, type PageRequest } from '../domain/pages';
import { findWalletOrThrow } from './wallets';

/** A virtual account of this partner, or 404 (also for malformed ids and other partners' accounts). */
export async function findVirtualAccountOrThrow(
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<VirtualAccountRow> {
  return ownedOrNotFound('virtual account', findVirtualAccount, db, partnerId, id);
}

function isThirdPartyConflict(error: unknown): boolean {
  return isUniqueViolation(error, 'virtual_accounts_one_eur_third_party_per_customer');
}

/**
 * Creates a virtual account and starts its workflow. Sandbox: approved at once, with deposit details
 * issued in the same transaction (events virtual_account.created then virtual_account.approved, both
 * carrying the approved account). Production: under_review with `{}` until an operator decides.
 */
export async function createVirtualAccount(
  services: ApiServices,
  partnerId: string,
  request: CreateVirtualAccountRequest,
): Promise<VirtualAccountResource> {
  const { prisma, config } = services;
  const customer = await requireApprovedCustomer(prisma, partnerId, request.customer_id);
  const wallet = await findWalletOrThrow(prisma, partnerId, request.receiver.wallet_id);
  if (wallet.customerId !== customer.id) {
    throw new DomainError(
      'customer_mismatch',
      `Wallet ${wallet.id} belongs to another customer than ${customer.id}; use one of this customer's wallets.`,
    );
  }
  const id = newId();
  const senderCurrency = request.sender.currency;
  const sandbox = config.appEnv === 'sandbox';
  if (request.simulate !== undefined && !sandbox) {
    throw DomainError.invalidParam('simulate', 'is a sandbox control; production accounts are reviewed by an operator');
  }
  // The sandbox approves at creation, unless asked to simulate a rejected review.
  const approveAtCreation = sandbox && request.simulate === undefined;
  try {
    return await writeThenStart(services, async (tx, start) => {
      const issued = approveAtCreation
        ? await allocateDepositDetails(tx, services.depositAccountIssuer, {
            virtualAccountId: id,
            senderCurrency,
            beneficiaryName: beneficiaryNameOf(customer),
          })
        : null;
      const row = await insertVirtualAccount(tx, {
        id,
        partnerId,
        customerId: customer.id,
        walletId: wallet.id,
        name: request.name,
        status: issued ? 'approved' : 'under_review',
        senderCurrency,
        receiverCurrency: request.receiver.currency,
        acceptsThirdPartyPayments: senderCurrency === 'EUR' ? (request.accepts_third_party_payments ?? false) : null,
        depositAddresses: issued?.depositAddresses ?? {},
        decidedAt: issued ? new Date() : null,
      });
      if (issued) await storeDepositReferences(tx, id, issued);
      const resource = toVirtualAccount(row);
      const event = { partnerId, resourceId: id, resourceStatus: row.status, resource };
      await recordEvent(tx, { ...event, type: 'virtual_account.created' });
      if (issued) await recordEvent(tx, { ...event, type: 'virtual_account.approved' });
      await start(
        workflowStart(virtualAccountWorkflow, {
          workflowId: workflowIds.virtualAccount(id),
          args: [
            {
              virtualAccountId: id,
              partnerId,
              customerId: customer.id,
              status: row.status,
              review: config.virtualAccountReview,
              ...(request.simulate === 'rejected'
                ? { sandboxDecision: { outcome: 'rejected' as const, reason: SANDBOX_REJECTION_REASON } }
                : {}),
            },
          ],
          searchAttributes: { PartnerId: partnerId, CustomerId: customer.id, ResourceId: id },
        }),
      );
      return resource;
    });
  } catch (error) {
    if (isThirdPartyConflict(error)) {
      throw new DomainError(
        'eur_virtual_account_3pp_exists',
        `Customer ${customer.id} already has a EUR virtual account accepting third-party payments; only one is allowed.`,
      );
    }
    throw error;
  }
}

/** The rejection reason of a review rejected by the sandbox's `simulate: "rejected"`. */
export const SANDBOX_REJECTION_REASON = 'sandbox_simulated_rejection';

function cannotBeCancelled(id: string, status: string): DomainError {
  return new DomainError(
    'virtual_account_cannot_be_cancelled',
    `Virtual account ${id} is ${status}; only an account under review or approved can be cancelled.`,
  );
}

/**
 * PUT /v1/virtual-accounts/{id} {"status": "cancelled"}. Under review: the account's workflow decides (its
 * update, so a review decision arriving at the same time has one outcome) and stops reminding. Approved:
 * its workflow has completed; the account is cancelled under its row lock. Rejected or cancelled: refused.
 */
export async function cancelVirtualAccount(
  services: ApiServices,
  partnerId: string,
  id: string,
): Promise<VirtualAccountResource> {
  const row = await findVirtualAccountOrThrow(services.prisma, partnerId, id);
  if (!cancellableVirtualAccountStatuses.includes(row.status)) {
    throw cannotBeCancelled(row.id, row.status);
  }
  if (row.status === 'under_review') {
    const handle = services.temporal.workflow.getHandle(workflowIds.virtualAccount(row.id));
    try {
      await withTemporalDeadline(services, () => handle.executeUpdate(cancelVirtualAccountUpdate));
    } catch (error) {
      // A decision came first (or the workflow ended since): wait for it, then act on the account as it is.
      const decided =
        error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === virtualAccountRefusals.alreadyDecided;
      if (!decided) throw error;
      await withTemporalDeadline(services, () => handle.result()).catch(() => undefined);
    }
  }
  const updated = await withDatabaseTransaction(services.prisma, (tx) =>
    cancelVirtualAccountRow(
      tx,
      row.id,
      cancellableVirtualAccountStatuses.filter((status) => status !== 'under_review'),
    ),
  );
  if (!updated || updated.status !== 'cancelled') throw cannotBeCancelled(row.id, updated?.status ?? row.status);
  return toVirtualAccount(updated);
}

/** A page of the partner's virtual accounts, of one of its customers when `customerId` is given (404 if not its). */
export async function listVirtualAccounts(
  db: DatabaseClient,
  partnerId: string,
  page: PageRequest,
  customerId: string | undefined,
) {
  const byCustomer = await ownedCustomerFilter(db, partnerId, customerId);
  return paginate(page, (keyset) => listVirtualAccountRows(db, { partnerId, ...byCustomer }, keyset));
}
