// Where senders pay the fiat of a transaction, and how deposits reach the service. The service
// collects on one account per sender rail (its collection accounts); the transaction's deposit
// reference, carried in the rail's payment-reference field (pix txid, SPEI concepto, SEPA remittance
// information, wire/ACH memo), tells which transaction a deposit pays.
//
// Production: a bank or rail integration implements DepositProvider with the service's real
// collection accounts, and reports each incoming credit by calling `receiveDeposit` of
// src/services/transactions/deposits.ts with an IncomingDeposit (the same path the sandbox deposit endpoint
// takes). Production refuses the flows of a rail no integration collects (src/providers/readiness.ts).
import { base58 } from '@scure/base';
import { createHash } from 'node:crypto';
import { composeIBAN, electronicFormatIBAN } from 'ibantools';
import { pixCopyPasteCode } from '../domain/brazil';
import { toChecksumAddress } from '../domain/chains';
import type { Currency, Money } from '../domain/money';
import type { Blockchain, FiatRail, PaymentRail } from '../domain/rails';
import type { z } from 'zod';
import type { railInstructionSchemas } from '../schemas/transactions';
import { ProviderUnavailableError, Unconnected } from './unavailable';

/** Each fiat rail's object in the instructions, as its schema (src/schemas/transactions.ts) describes it. */
export type FiatRailInstructions = { [R in FiatRail]: z.output<(typeof railInstructionSchemas)[R]> };
export type ChainInstructions = { address: string };

/** `sender_deposit_instructions`: what to pay, where, with which reference, by when. */
export type SenderDepositInstructions = {
  payment_rail: PaymentRail;
  currency: Currency;
  amount: string;
  reference: string;
  deadline: string;
} & { [R in FiatRail]?: FiatRailInstructions[R] } & { [C in Blockchain]?: ChainInstructions };

export interface DepositInstructionsRequest {
  rail: FiatRail;
  amount: Money;
  reference: string;
  deadline: Date;
}

export interface StablecoinDepositInstructionsRequest {
  chain: Blockchain;
  amount: Money;
  reference: string;
  deadline: Date;
}

export interface DepositProvider {
  /** Asked before the transaction is written (a bank such as API Pix makes a charge for it; a failed write leaves an
   * unpaid charge that expires). */
  instructionsFor(request: DepositInstructionsRequest): Promise<SenderDepositInstructions>;
  /** A payout's stablecoin, sent on chain to the service's collection address (POST /v1/payout/confirm tells it was sent). */
  stablecoinInstructionsFor(request: StablecoinDepositInstructionsRequest): SenderDepositInstructions;
}

/** Who reports the sandbox's simulated credits (the provider of their deposits). */
export const SANDBOX_PROVIDER = 'sandbox';

/** A credit on a collection account, as a production integration reports it to receiveDeposit. */
export interface IncomingDeposit {
  /** The integration that reports it (one name per bank or rail connection). */
  provider: string;
  /**
   * The provider's own id of this credit (its end-to-end id, transaction id or statement entry reference): unique per
   * provider, so a credit reported twice is recorded once.
   */
  providerReference: string;
  /** The payment reference the credit carried (normalised before matching). */
  reference: string;
  amount: Money;
  senderName: string | null;
  receivedAt: Date;
}

/** Fictitious collection accounts of the sandbox: well-formed, naming no real account. */
export const sandboxCollectionAccounts = {
  beneficiary: 'Payments Sandbox Ltda',
  pix: { key: '11222333000181', bank_name: 'Sandbox Pagamentos S.A.', city: 'Sao Paulo' },
  pix_account: {
    bank_code: '001',
    branch_code: '0001',
    bank_account_number: '1000001',
    beneficiary_document: '11222333000181',
    bank_name: 'Sandbox Pagamentos S.A.',
  },
  spei: { clabe: '646180157000000004', bank_name: 'STP Sandbox' },
  us: {
    bank_account_number: '840000000001',
    ach_routing_number: '123456780',
    wire_routing_number: '321076548',
    bank_name: 'Sandbox Bank, N.A.',
    bank_address: {
      street_line_1: '1 Sandbox Plaza',
      city: 'New York',
      state: 'NY',
      postal_code: '10004',
      country: 'USA',
    },
  },
  sepa: {
    iban: electronicFormatIBAN(composeIBAN({ countryCode: 'DE', bban: '876543210000000001' }) ?? '') as string,
    bic: 'SBOXDEBBXXX',
    bank_name: 'Sandbox Bank Europe AG',
  },
  cvu: { cvu: '0000003100000000000017', bank_name: 'Sandbox Pagos S.A.' },
  /** Collection addresses of the sandbox, derived from a fixed label: well-formed, holding no real key. */
  chains: {
    ethereum: toChecksumAddress(
      createHash('sha256').update('payments-api sandbox collection ethereum').digest('hex').slice(0, 40),
    ),
    solana: base58.encode(createHash('sha256').update('payments-api sandbox collection solana').digest()),
  },
} as const;

export class SandboxDepositProvider implements DepositProvider {
  /** `collectionAddress`: a chain whose transfers are checked on a node names its own (ChainTransferVerifier). */
  constructor(private readonly collectionAddress: (chain: Blockchain) => string | null = () => null) {}

  stablecoinInstructionsFor(request: StablecoinDepositInstructionsRequest): SenderDepositInstructions {
    return {
      payment_rail: request.chain,
      currency: request.amount.currency,
      amount: request.amount.toString(),
      reference: request.reference,
      deadline: request.deadline.toISOString(),
      [request.chain]: {
        address: this.collectionAddress(request.chain) ?? sandboxCollectionAccounts.chains[request.chain],
      },
    };
  }

  async instructionsFor(request: DepositInstructionsRequest): Promise<SenderDepositInstructions> {
    return {
      payment_rail: request.rail,
      currency: request.amount.currency,
      amount: request.amount.toString(),
      reference: request.reference,
      deadline: request.deadline.toISOString(),
      [request.rail]: sandboxInstructions[request.rail](request),
    };
  }
}

/** The sandbox's collection account on each fiat rail, as the rail's instructions object. */
const sandboxInstructions: { [R in FiatRail]: (request: DepositInstructionsRequest) => FiatRailInstructions[R] } = {
  pix: (request) => ({
    key: sandboxCollectionAccounts.pix.key,
    key_type: 'cnpj',
    bank_name: sandboxCollectionAccounts.pix.bank_name,
    beneficiary_name: sandboxCollectionAccounts.beneficiary,
    copy_paste_code: pixCopyPasteCode({
      key: sandboxCollectionAccounts.pix.key,
      amount: request.amount.toString(),
      beneficiaryName: sandboxCollectionAccounts.beneficiary,
      city: sandboxCollectionAccounts.pix.city,
      txid: request.reference,
    }),
  }),
  pix_account: () => ({
    ...sandboxCollectionAccounts.pix_account,
    account_type: 'checking',
    beneficiary_name: sandboxCollectionAccounts.beneficiary,
  }),
  spei: () => ({ ...sandboxCollectionAccounts.spei, beneficiary_name: sandboxCollectionAccounts.beneficiary }),
  wire: () => usBankInstructions(sandboxCollectionAccounts.us.wire_routing_number),
  ach: () => usBankInstructions(sandboxCollectionAccounts.us.ach_routing_number),
  sepa: () => ({ ...sandboxCollectionAccounts.sepa, beneficiary_name: sandboxCollectionAccounts.beneficiary }),
  cvu: () => ({ ...sandboxCollectionAccounts.cvu, beneficiary_name: sandboxCollectionAccounts.beneficiary }),
};

function usBankInstructions(routingNumber: string): FiatRailInstructions['wire'] {
  const us = sandboxCollectionAccounts.us;
  return {
    bank_account_number: us.bank_account_number,
    routing_number: routingNumber,
    bank_name: us.bank_name,
    bank_address: us.bank_address,
    beneficiary_name: sandboxCollectionAccounts.beneficiary,
  };
}

/**
 * Production until a bank integration exists: no collection accounts, so no instructions (503 to the
 * partner; production refuses its flows at quote and transaction creation: src/providers/readiness.ts).
 */
export class UnconnectedDepositProvider implements DepositProvider, Unconnected {
  readonly unconnected = 'no collection accounts for transaction deposits are connected';

  async instructionsFor(): Promise<SenderDepositInstructions> {
    throw new ProviderUnavailableError(this.unconnected);
  }

  stablecoinInstructionsFor(): SenderDepositInstructions {
    throw new ProviderUnavailableError(this.unconnected);
  }
}
