// Virtual accounts as the API shows them, their creation, their deposit details and the lookup
// from a bank reference (the IBAN or account number an incoming credit names) to the account.
import { isUniqueViolation, type Db, type Prisma } from '../db';
import type { Chain } from '../domain/chains';
import { isUuid, newId } from '../domain/ids';
import { recordEvent } from '../events';
import { ApiError } from '../http/errors';
import type {
  DepositAccountIssuer,
  DepositAddresses,
  DepositRail,
  IssuedDepositDetails,
  SenderCurrency,
} from '../providers/deposit-accounts';
import type { CustomerRow } from './customers';
import type {
  CreateVirtualAccountRequest,
  VirtualAccountResource,
  VirtualAccountStatus,
} from '../schemas/virtual-accounts';
import type { ApiServices } from '../services';
import { workflowIds } from '../temporal/workflow-ids';
import { virtualAccountWorkflow } from '../../workflows/virtual-account';
import { requireApprovedCustomer } from './customers';
import { findWalletOrThrow } from './wallets';

export const withWallet = { wallet: true } as const;
export type VirtualAccountRow = Prisma.VirtualAccountGetPayload<{ include: typeof withWallet }>;

export function toVirtualAccount(row: VirtualAccountRow): VirtualAccountResource {
  return {
    id: row.id,
    customer_id: row.customerId,
    name: row.name,
    status: row.status as VirtualAccountStatus,
    sender: { currency: row.senderCurrency as SenderCurrency },
    receiver: {
      currency: row.receiverCurrency as 'USDC' | 'USDT',
      wallet_id: row.walletId,
      payment_rail: row.wallet.chain as Chain,
      address: row.wallet.address,
    },
    deposit_addresses: row.status === 'approved' ? (row.depositAddresses as DepositAddresses) : {},
    ...(row.senderCurrency === 'EUR' ? { accepts_third_party_payments: row.acceptsThirdPartyPayments ?? false } : {}),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A virtual account of this partner, or 404 (also for malformed ids and other partners' accounts). */
export async function findVirtualAccountOrThrow(db: Db, partnerId: string, id: string): Promise<VirtualAccountRow> {
  const row = isUuid(id) ? await db.virtualAccount.findFirst({ where: { id, partnerId }, include: withWallet }) : null;
  if (!row) throw ApiError.notFound('virtual account', id);
  return row;
}

/** Normalises a bank reference as issued: IBANs without spaces and upper case, account numbers as digits. */
function normaliseReference(rail: DepositRail, reference: string): string {
  const compact = reference.replace(/[\s-]/g, '');
  return rail === 'sepa' ? compact.toUpperCase() : compact;
}

/**
 * The virtual account an incoming bank credit is for: the IBAN (sepa) or account number (ach, wire,
 * swift) it was sent to. Any partner's; null when the reference names no virtual account.
 */
export async function findVirtualAccountByDepositReference(
  db: Db,
  reference: { rail: DepositRail; identifier: string },
): Promise<VirtualAccountRow | null> {
  const found = await db.virtualAccountDeposit.findUnique({
    where: {
      rail_identifier: { rail: reference.rail, identifier: normaliseReference(reference.rail, reference.identifier) },
    },
    include: { virtualAccount: { include: withWallet } },
  });
  return found?.virtualAccount ?? null;
}

/** Name deposits are addressed to: the customer's full name, or a business's legal name. */
export function beneficiaryNameOf(
  customer: Pick<CustomerRow, 'type' | 'firstName' | 'lastName' | 'businessLegalName'>,
): string {
  return customer.type === 'business'
    ? (customer.businessLegalName ?? '')
    : [customer.firstName, customer.lastName].filter(Boolean).join(' ');
}

const MAX_ISSUE_ATTEMPTS = 10;

/**
 * Issues deposit details whose identifiers no other virtual account holds (a taken number moves on
 * to the next attempt; the unique index on virtual_account_deposits is the final guard).
 */
export async function allocateDepositDetails(
  tx: Prisma.TransactionClient,
  issuer: DepositAccountIssuer,
  request: { virtualAccountId: string; senderCurrency: SenderCurrency; beneficiaryName: string },
): Promise<IssuedDepositDetails> {
  for (let attempt = 0; attempt < MAX_ISSUE_ATTEMPTS; attempt += 1) {
    const issued = issuer.issue({ ...request, attempt });
    const taken = await tx.virtualAccountDeposit.count({
      where: { OR: issued.references.map(({ rail, identifier }) => ({ rail, identifier })) },
    });
    if (taken === 0) return issued;
  }
  throw new Error(`no free deposit account number after ${MAX_ISSUE_ATTEMPTS} attempts`);
}

export async function storeDepositReferences(
  tx: Prisma.TransactionClient,
  virtualAccountId: string,
  issued: IssuedDepositDetails,
): Promise<void> {
  await tx.virtualAccountDeposit.createMany({
    data: issued.references.map((reference) => ({ id: newId(), virtualAccountId, ...reference })),
  });
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
  const { prisma, config, temporal } = services;
  const customer = await requireApprovedCustomer(prisma, partnerId, request.customer_id);
  const wallet = await findWalletOrThrow(prisma, partnerId, request.receiver.wallet_id);
  if (wallet.customerId !== customer.id) {
    throw new ApiError(
      'customer_mismatch',
      `Wallet ${wallet.id} belongs to another customer than ${customer.id}; use one of this customer's wallets.`,
    );
  }
  const id = newId();
  const senderCurrency = request.sender.currency;
  const sandbox = config.appEnv === 'sandbox';
  try {
    return await prisma.$transaction(
      async (tx) => {
        const issued = sandbox
          ? await allocateDepositDetails(tx, services.depositAccountIssuer, {
              virtualAccountId: id,
              senderCurrency,
              beneficiaryName: beneficiaryNameOf(customer),
            })
          : null;
        const row = await tx.virtualAccount.create({
          data: {
            id,
            partnerId,
            customerId: customer.id,
            walletId: wallet.id,
            name: request.name,
            status: issued ? 'approved' : 'under_review',
            senderCurrency,
            receiverCurrency: request.receiver.currency,
            acceptsThirdPartyPayments:
              senderCurrency === 'EUR' ? (request.accepts_third_party_payments ?? false) : null,
            depositAddresses: (issued?.depositAddresses ?? {}) as Prisma.InputJsonObject,
            decidedAt: issued ? new Date() : null,
          },
          include: withWallet,
        });
        if (issued) await storeDepositReferences(tx, id, issued);
        const resource = toVirtualAccount(row);
        const event = { partnerId, resourceId: id, resourceStatus: row.status, resource };
        await recordEvent(tx, { ...event, type: 'virtual_account.created' });
        if (issued) await recordEvent(tx, { ...event, type: 'virtual_account.approved' });
        // Started before the commit: if Temporal is unreachable the account is not created either.
        await temporal.workflow.start(virtualAccountWorkflow, {
          workflowId: workflowIds.virtualAccount(id),
          taskQueue: config.temporal.taskQueue,
          args: [
            {
              virtualAccountId: id,
              partnerId,
              customerId: customer.id,
              status: row.status as VirtualAccountStatus,
              review: config.virtualAccountReview,
            },
          ],
        });
        return resource;
      },
      { timeout: 15_000 },
    );
  } catch (error) {
    if (isThirdPartyConflict(error)) {
      throw new ApiError(
        'eur_virtual_account_3pp_exists',
        `Customer ${customer.id} already has a EUR virtual account accepting third-party payments; only one is allowed.`,
      );
    }
    throw error;
  }
}
