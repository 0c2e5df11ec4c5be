// How transactions and their deposits are shown: the API shape, which is also every payin.* and
// payout.* event's `event_resource`. Pure: rows in, resources out. The legs stay internal.
import type { TransactionDepositRow, TransactionRow } from '../persistence/transactions';
import { Decimal, Money } from '../domain/money';
import { blockchainOf, externalAccountRailOf, isFiatRail, type PaymentRail, railDefinitions } from '../domain/rails';
import { amountsOf, type FailureReason, type TransactionStatus } from '../domain/transactions';
import type { SenderDepositInstructions } from '../providers/transaction-deposits';
import type { DepositResource, SenderDocumentType, TransactionResource } from '../schemas/transactions';

type RailDetails = Record<string, unknown>;

/** The last 4 characters of what identifies the receiving account on its rail (its definition's masking). */
export function accountIdentifierOf(rail: PaymentRail, details: RailDetails): string {
  const fields: readonly string[] = isFiatRail(rail) ? (railDefinitions[rail].externalAccount?.maskedFields ?? []) : [];
  const value = fields.map((field) => details[field]).find((found) => typeof found === 'string');
  return typeof value === 'string' ? value.slice(-4) : '';
}

/** `{amount, currency}` with the currency's decimals. */
const asMoney = (value: Money) => ({ amount: value.toString(), currency: value.currency });

function receiverOf(row: TransactionRow, amounts: ReturnType<typeof amountsOf>): TransactionResource['receiver'] {
  if (row.type === 'payin') {
    return {
      wallet_id: row.walletId as string,
      address: row.wallet?.address ?? '',
      currency: row.receiverCurrency,
      payment_rail: blockchainOf(row.receiverPaymentRail),
      amount: amounts.receiver.toString(),
    };
  }
  const account = row.externalAccount;
  // A payout to a pix key given in the request keeps the key's rail object on the transaction.
  const details = (account?.details ?? row.receiverDetails ?? {}) as RailDetails;
  const beneficiaryName = typeof details.beneficiary_name === 'string' ? details.beneficiary_name : '';
  return {
    external_account_id: row.externalAccountId ?? null,
    currency: row.receiverCurrency,
    payment_rail: externalAccountRailOf(row.receiverPaymentRail),
    amount: amounts.receiver.toString(),
    account_name: account?.accountName ?? beneficiaryName,
    beneficiary_name: beneficiaryName,
    bank_name: typeof details.bank_name === 'string' ? details.bank_name : null,
    account_last4: accountIdentifierOf(row.receiverPaymentRail, details),
  };
}

function senderOf(row: TransactionRow, amounts: ReturnType<typeof amountsOf>): TransactionResource['sender'] {
  const side = {
    currency: row.senderCurrency,
    payment_rail: row.senderPaymentRail,
    amount: amounts.sender.toString(),
  };
  if (row.type === 'payout') return { wallet_id: row.walletId ?? null, ...side };
  return {
    name: row.senderName,
    document: row.senderDocumentType
      ? { type: row.senderDocumentType as SenderDocumentType, number: row.senderDocumentNumber as string }
      : null,
    ...(row.virtualAccountId ? { virtual_account_id: row.virtualAccountId } : {}),
    ...side,
  };
}

export function toTransaction(row: TransactionRow): TransactionResource {
  const amounts = amountsOf(row);
  const rate = (index: number) => new Decimal(String(row.rates[index])).toFixed(8);
  // Rates along the path: fiat to fiat [sender -> stablecoin, stablecoin -> receiver]; pay-in and payout one.
  const [senderQuotation, receiverQuotation] =
    row.type === 'fiat_to_fiat' ? [rate(0), rate(1)] : row.type === 'payin' ? [rate(0), null] : [null, rate(0)];
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    customer_id: row.customerId,
    wallet_id: row.walletId ?? null,
    quote_id: row.quoteId ?? null,
    sender: senderOf(row, amounts),
    stablecoin: {
      currency: amounts.stablecoin.currency,
      payment_rail: blockchainOf(row.stablecoinPaymentRail),
      amount: amounts.stablecoin.toString(),
    },
    receiver: receiverOf(row, amounts),
    sender_quotation: senderQuotation,
    receiver_quotation: receiverQuotation,
    fees: {
      service_fee: asMoney(amounts.fees.service),
      partner_fee: asMoney(amounts.fees.partner),
      network_fee: asMoney(amounts.fees.network),
      total: asMoney(amounts.fees.total),
    },
    sender_deposit_instructions: (row.depositInstructions as unknown as SenderDepositInstructions | null) ?? null,
    deposit_deadline: row.depositDeadline?.toISOString() ?? null,
    failure_reason: (row.failureReason as FailureReason | null) ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function toDeposit(row: TransactionDepositRow): DepositResource {
  return {
    id: row.id,
    transaction_id: row.transactionId,
    amount: Money.of(row.currency, row.amount.toString()).toString(),
    currency: row.currency,
    sender_name: row.senderName,
    reference: row.reference,
    provider_reference: row.providerReference,
    status: row.status as DepositResource['status'],
    return_reason: row.returnReason as DepositResource['return_reason'],
    received_at: row.receivedAt.toISOString(),
  };
}

const mockStatuses: Record<string, TransactionStatus> = {
  created: 'awaiting_deposit',
  processing: 'processing',
  completed: 'completed',
  cancelled: 'cancelled',
  failed: 'failed',
  error: 'error',
  refunded: 'refunded',
  returned: 'returned',
  // A payout held for a sanctions review stays processing.
  held: 'processing',
};
const mockFailureReasons: Partial<Record<TransactionStatus, FailureReason>> = {
  failed: 'deposit_deadline_passed',
  error: 'payout_failed',
  refunded: 'payout_rejected',
  returned: 'payout_returned',
};

/**
 * Sandbox: the `event_resource` of a mocked payin.* or payout.* event (POST /webhooks/mock), with
 * exactly the shape of a real transaction: illustrative fixed amounts (the sandbox market's rates and
 * fees), new random ids naming no real resource, the status the event type implies. `newId` is passed
 * in so that this module stays pure.
 */
export function mockTransactionFor(eventType: string, now: Date, newId: () => string): TransactionResource {
  const [group, action] = eventType.split('.') as ['payin' | 'payout', string];
  const status = mockStatuses[action] ?? 'processing';
  const awaiting = status === 'awaiting_deposit';
  const deadline = new Date(now.getTime() + 60 * 60_000).toISOString();
  const walletId = newId();
  const common = {
    id: newId(),
    status,
    customer_id: newId(),
    wallet_id: walletId,
    quote_id: newId(),
    failure_reason: mockFailureReasons[status] ?? null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
  if (group === 'payin') {
    return {
      ...common,
      type: 'payin',
      sender: {
        name: 'Jane Doe',
        document: { type: 'passport', number: 'X1234567' },
        currency: 'USD',
        payment_rail: 'ach',
        amount: '100.00',
      },
      stablecoin: { currency: 'USDC', payment_rail: 'ethereum', amount: '98.80' },
      receiver: {
        wallet_id: walletId,
        address: '0x52908400098527886E0F7030069857D2E4169EE7',
        currency: 'USDC',
        payment_rail: 'ethereum',
        amount: '98.800000',
      },
      sender_quotation: '0.99900000',
      receiver_quotation: null,
      fees: {
        service_fee: { amount: '0.20', currency: 'USD' },
        partner_fee: { amount: '0.00', currency: 'USD' },
        network_fee: { amount: '1.00', currency: 'USD' },
        total: { amount: '1.20', currency: 'USD' },
      },
      sender_deposit_instructions: {
        payment_rail: 'ach',
        currency: 'USD',
        amount: '100.00',
        reference: 'TX7K2M9QH4RD',
        deadline,
        ach: {
          bank_account_number: '840000000001',
          routing_number: '123456780',
          bank_name: 'Sandbox Bank, N.A.',
          bank_address: {
            street_line_1: '1 Sandbox Plaza',
            city: 'New York',
            state: 'NY',
            postal_code: '10004',
            country: 'USA',
          },
          beneficiary_name: 'Payments Sandbox Ltda',
        },
      },
      deposit_deadline: deadline,
    };
  }
  return {
    ...common,
    type: 'payout',
    wallet_id: awaiting ? null : walletId,
    sender: { wallet_id: awaiting ? null : walletId, currency: 'USDC', payment_rail: 'solana', amount: '100.000000' },
    stablecoin: { currency: 'USDC', payment_rail: 'solana', amount: '99.790000' },
    receiver: {
      external_account_id: newId(),
      currency: 'BRL',
      payment_rail: 'pix',
      amount: '496.45',
      account_name: 'My pix account',
      beneficiary_name: 'Ana Silva',
      bank_name: 'Nu Pagamentos S.A.',
      account_last4: '.com',
    },
    sender_quotation: null,
    receiver_quotation: '4.97500000',
    fees: {
      service_fee: { amount: '0.200000', currency: 'USDC' },
      partner_fee: { amount: '0.000000', currency: 'USDC' },
      network_fee: { amount: '0.010000', currency: 'USDC' },
      total: { amount: '0.210000', currency: 'USDC' },
    },
    sender_deposit_instructions: awaiting
      ? {
          payment_rail: 'solana',
          currency: 'USDC',
          amount: '100.000000',
          reference: 'TX7K2M9QH4RD',
          deadline,
          solana: { address: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV' },
        }
      : null,
    deposit_deadline: awaiting ? deadline : null,
  };
}
