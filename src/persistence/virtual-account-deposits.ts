// The virtual_account_deposits table: the bank references (IBANs, account numbers) issued to
// virtual accounts. Shared by the create command (sandbox: issued at once) and the approval activity.
import type { Db, Prisma } from './database';
import { newId } from '../domain/ids';
import type {
  DepositAccountIssuer,
  DepositRail,
  IssuedDepositDetails,
  SenderCurrency,
} from '../providers/deposit-accounts';
import { VirtualAccountRow, withWallet } from '../presenters/virtual-accounts';

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
