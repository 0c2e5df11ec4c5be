// Virtual-account deposits: pay-ins without a quote, created funded at the current rate and credited to the
// account's wallet (or sent back when the account may not take them).
import { idFromReference } from '../../domain/ids';
import { idOfThisRequest } from '../../request-context';
import { toTransaction } from '../../presenters/transactions';
import { amountTextProblem, Money, type Currency } from '../../domain/money';
import type { FiatRail } from '../../domain/rails';
import { decideVirtualAccountDeposit } from '../../domain/transactions';
import { DomainError } from '../../domain/errors';
import { postLedgerEntries } from '../../persistence/ledger';
import { readCustomer } from '../../persistence/customers';
import { findTransactionDeposit, readTransactionRow, type TransactionDepositRow } from '../../persistence/transactions';
import { findVirtualAccountByDepositReference, type VirtualAccountRow } from '../../persistence/virtual-accounts';
import { beneficiaryNameOf } from '../../presenters/virtual-accounts';
import type { DepositRail } from '../../providers/deposit-accounts';
import { type IncomingDeposit, SANDBOX_PROVIDER } from '../../providers/transaction-deposits';
import { lockTerms, priceWithinRanges } from '../quotes';
import { findVirtualAccountOrThrow } from '../virtual-accounts';
import type { TransactionResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { providerReferenceInUse } from './deposits';
import { depositPosting, insertDeposit } from './deposit-bookkeeping';
import { writeNewTransaction, amountColumns } from './write';

// ---- virtual-account deposits: pay-ins without a quote ----

/** A credit on a virtual account's deposit details (the sandbox endpoint, or a bank integration). */
export interface VirtualAccountCredit {
  /** Who reported the credit and their own id of it: the same credit reported again makes no second pay-in. */
  provider: string;
  providerReference: string;
  amount: Money;
  senderName: string;
  reference: string | null;
  receivedAt: Date;
}

/** The rail a virtual account's deposit arrives on: SEPA for EUR, ACH for USD. */
const virtualAccountRails: Partial<Record<Currency, FiatRail>> = { EUR: 'sepa', USD: 'ach' };

/**
 * Money arrived on a virtual account: a `payin` transaction, created funded (`processing`, event
 * payin.created) with its deposit, converted at the current rate with the fees quotes charge (the
 * service fee and one network fee; no partner fee, no quote), and credited to the account's wallet.
 * A deposit the account may not take (decideVirtualAccountDeposit: not approved, or a third party on a
 * EUR account without accepts_third_party_payments) is recorded the same way and sent back in full
 * (payin.refunded). An amount outside the allowed range (or below the fees) is refused
 * (amount_out_of_range) and nothing is created.
 */
export async function receiveVirtualAccountDeposit(
  services: ApiServices,
  account: VirtualAccountRow,
  credit: VirtualAccountCredit,
): Promise<TransactionResource> {
  // Both ids come from the provider's reference: a credit reported twice, even at once, is one deposit and one pay-in.
  const depositId = idFromReference('deposit', credit.provider, credit.providerReference);
  const id = idFromReference('virtual_account_payin', credit.provider, credit.providerReference);
  const reported = await findTransactionDeposit(services.prisma, depositId);
  if (reported) return payInOfReplay(services, account, reported);
  try {
    return await writeVirtualAccountPayIn(services, account, credit, { id, depositId });
  } catch (error) {
    const recorded = await findTransactionDeposit(services.prisma, depositId);
    if (recorded) return payInOfReplay(services, account, recorded);
    throw error;
  }
}

/** The pay-in a credit reported again made the first time (it must have been for this account). */
async function payInOfReplay(
  services: ApiServices,
  account: VirtualAccountRow,
  deposit: TransactionDepositRow,
): Promise<TransactionResource> {
  const payIn = await readTransactionRow(services.prisma, deposit.transactionId);
  if (payIn?.virtualAccountId !== account.id) throw providerReferenceInUse(deposit.providerReference);
  return toTransaction(payIn);
}

async function writeVirtualAccountPayIn(
  services: ApiServices,
  account: VirtualAccountRow,
  credit: VirtualAccountCredit,
  { id, depositId }: { id: string; depositId: string },
): Promise<TransactionResource> {
  const customer = await readCustomer(services.prisma, account.customerId);
  const decision = decideVirtualAccountDeposit({
    status: account.status,
    senderCurrency: account.senderCurrency,
    acceptsThirdPartyPayments: account.acceptsThirdPartyPayments,
    holderName: beneficiaryNameOf(customer),
    senderName: credit.senderName,
  });
  const rail = virtualAccountRails[account.senderCurrency];
  if (!rail) throw new Error(`virtual account ${account.id} collects ${account.senderCurrency}, which no rail carries`);
  const receiver = { currency: account.receiverCurrency, paymentRail: account.wallet.chain };
  const terms = await lockTerms(services.rateProvider, services.config.quoteServiceFeeBps, {
    type: 'payin',
    sender: { currency: credit.amount.currency, paymentRail: rail },
    stablecoin: null,
    receiver,
    fixed: null,
    partnerFee: null,
  });
  const amounts = priceWithinRanges(terms, { side: 'sender', amount: credit.amount }, services.config.amountRanges);
  return writeNewTransaction(
    services,
    {
      id,
      createdAt: new Date(),
      partnerId: account.partnerId,
      customerId: account.customerId,
      type: 'payin',
      senderRail: rail,
      deposit: null,
      funded: decision.action === 'settle' ? { action: 'settle' } : { action: 'refund', reason: decision.reason },
      afterInsert: async (tx) => {
        const deposit = await insertDeposit(
          tx,
          { id: depositId, transactionId: id, credit },
          decision.action === 'settle' ? { status: 'accepted' } : { status: 'returning', reason: decision.reason },
        );
        // Recorded by a concurrent report of the same credit: roll this one back; the caller answers that pay-in.
        if (!deposit.inserted) throw new Error(`deposit ${depositId} was recorded by another report`);
        await postLedgerEntries(
          tx,
          depositPosting(id, credit.amount, `Deposit on virtual account ${account.id} (pay-in ${id})`),
        );
      },
      columns: {
        quoteId: null,
        walletId: account.walletId,
        virtualAccountId: account.id,
        senderName: credit.senderName,
        ...amountColumns(amounts, terms, { ...receiver, amount: amounts.receiver }),
      },
    },
    null,
  );
}

/** The sandbox endpoint: the amount's decimals in the account's currency, then receiveVirtualAccountDeposit. */
export async function receiveSandboxVirtualAccountDeposit(
  services: ApiServices,
  partnerId: string,
  virtualAccountId: string,
  body: { amount: string; sender_name: string; reference?: string; provider_reference?: string },
): Promise<TransactionResource> {
  const account = await findVirtualAccountOrThrow(services.prisma, partnerId, virtualAccountId);
  const currency = account.senderCurrency;
  const problem = amountTextProblem(body.amount, currency);
  if (problem) throw DomainError.invalidParam('amount', problem);
  return receiveVirtualAccountDeposit(services, account, {
    provider: SANDBOX_PROVIDER,
    // Without one, each request is a new credit (a retry with its Idempotency-Key being the same one).
    providerReference: body.provider_reference ?? idOfThisRequest('deposit'),
    amount: Money.parse(currency, body.amount),
    senderName: body.sender_name,
    reference: body.reference ?? null,
    receivedAt: new Date(),
  });
}

/**
 * Production: a credit on a virtual account's bank details (its IBAN or account number), as a bank
 * integration reports it; null when the details name no virtual account (kept for manual handling).
 */
export async function receiveVirtualAccountCredit(
  services: ApiServices,
  incoming: IncomingDeposit & { account: { rail: DepositRail; identifier: string } },
): Promise<TransactionResource | null> {
  const account = await findVirtualAccountByDepositReference(services.prisma, incoming.account);
  if (!account || account.senderCurrency !== incoming.amount.currency) return null;
  return receiveVirtualAccountDeposit(services, account, {
    provider: incoming.provider,
    providerReference: incoming.providerReference,
    amount: incoming.amount,
    senderName: incoming.senderName ?? '',
    reference: incoming.reference,
    receivedAt: incoming.receivedAt,
  });
}
