// How transactions and their deposits are shown: the API shape, which is also every payin.* event's
// `event_resource`. Pure: rows in, resources out. The legs stay internal.
import type { Prisma, TransactionDeposit } from '@prisma/client';
import { Currency, Decimal, Money } from '../domain/money';
import type { FailureReason, TransactionStatus, TransactionType } from '../domain/transactions';
import type { SenderDepositInstructions } from '../providers/transaction-deposits';
import type {
  DepositResource,
  SenderDocumentType,
  TransactionResource,
} from '../schemas/transactions';

export const withReceiverAccount = { externalAccount: true } as const;
export type TransactionRow = Prisma.TransactionGetPayload<{ include: typeof withReceiverAccount }>;

const money = (currency: string, value: { toString(): string }) => Money.of(currency as Currency, value.toString());

/** The amounts of a transaction in the money type. */
export function amountsOf(row: Pick<
  TransactionRow,
  | 'senderCurrency'
  | 'senderAmount'
  | 'stablecoinCurrency'
  | 'stablecoinAmount'
  | 'receiverCurrency'
  | 'receiverAmount'
  | 'serviceFee'
  | 'partnerFee'
  | 'networkFee'
>) {
  const service = money(row.senderCurrency, row.serviceFee);
  const partner = money(row.senderCurrency, row.partnerFee);
  const network = money(row.senderCurrency, row.networkFee);
  const total = service.plus(partner).plus(network);
  const sender = money(row.senderCurrency, row.senderAmount);
  return {
    sender,
    stablecoin: money(row.stablecoinCurrency as string, row.stablecoinAmount as Prisma.Decimal),
    receiver: money(row.receiverCurrency, row.receiverAmount),
    fees: { service, partner, network, total },
    /** What is converted: the sender amount minus every fee. */
    converted: sender.minus(total),
  };
}

type RailDetails = Record<string, unknown>;

/** The last 4 characters of what identifies the receiving account on its rail. */
function accountIdentifierOf(rail: string, details: RailDetails): string {
  const fields: Record<string, string[]> = {
    pix: ['key'],
    pix_account: ['bank_account_number'],
    spei: ['clabe', 'phone_number'],
    wire: ['bank_account_number'],
    sepa: ['iban'],
    cvu: ['cvu', 'cbu'],
  };
  const value = (fields[rail] ?? []).map((field) => details[field]).find((found) => typeof found === 'string');
  return typeof value === 'string' ? value.slice(-4) : '';
}

/** `{amount, currency}` with the currency's decimals. */
const asMoney = (value: Money) => ({ amount: value.toString(), currency: value.currency });

export function toTransaction(row: TransactionRow): TransactionResource {
  const amounts = amountsOf(row);
  const account = row.externalAccount;
  const details = (account?.details ?? {}) as RailDetails;
  const rate = (index: number) => new Decimal((row.rates[index] as Prisma.Decimal).toString()).toFixed(8);
  return {
    id: row.id,
    type: row.type as TransactionType,
    status: row.status as TransactionStatus,
    customer_id: row.customerId,
    wallet_id: row.walletId as string,
    quote_id: row.quoteId as string,
    sender: {
      name: row.senderName as string,
      document: { type: row.senderDocumentType as SenderDocumentType, number: row.senderDocumentNumber as string },
      currency: row.senderCurrency as Currency,
      payment_rail: row.senderPaymentRail as never,
      amount: amounts.sender.toString(),
    },
    stablecoin: {
      currency: row.stablecoinCurrency as Currency,
      payment_rail: row.stablecoinPaymentRail as never,
      amount: amounts.stablecoin.toString(),
    },
    receiver: {
      external_account_id: row.externalAccountId as string,
      currency: row.receiverCurrency as Currency,
      payment_rail: row.receiverPaymentRail as never,
      amount: amounts.receiver.toString(),
      account_name: account?.accountName ?? '',
      beneficiary_name: typeof details.beneficiary_name === 'string' ? details.beneficiary_name : '',
      bank_name: typeof details.bank_name === 'string' ? details.bank_name : null,
      account_last4: accountIdentifierOf(row.receiverPaymentRail, details),
    },
    sender_quotation: rate(0),
    receiver_quotation: rate(1),
    fees: {
      service_fee: asMoney(amounts.fees.service),
      partner_fee: asMoney(amounts.fees.partner),
      network_fee: asMoney(amounts.fees.network),
      total: asMoney(amounts.fees.total),
    },
    sender_deposit_instructions: row.depositInstructions as unknown as SenderDepositInstructions,
    deposit_deadline: (row.depositDeadline as Date).toISOString(),
    failure_reason: (row.failureReason as FailureReason | null) ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function toDeposit(row: TransactionDeposit): DepositResource {
  return {
    id: row.id,
    transaction_id: row.transactionId,
    amount: money(row.currency, row.amount).toString(),
    currency: row.currency as Currency,
    sender_name: row.senderName,
    reference: row.reference,
    status: row.status as DepositResource['status'],
    return_reason: row.returnReason as DepositResource['return_reason'],
    received_at: row.receivedAt.toISOString(),
  };
}
