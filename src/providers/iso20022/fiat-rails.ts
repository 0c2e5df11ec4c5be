// Payouts in EUR (SEPA) and USD (wire) through a bank's ISO 20022 host-to-host API: one pain.001 per payout, its
// EndToEndId derived from the operation's idempotency key (endToEndIdOf), so that asking twice is one payment at the
// bank and every report the bank sends names the operation. The exchange (conversion, sell-back), the returns to the
// sender and the other rails (Pix, SPEI, CVU) stay with `others` (the sandbox's adapters, docs/iso20022.md).
import { randomUUID } from 'node:crypto';
import type { FiatRail } from '../../domain/rails';
import type { Money } from '../../domain/money';
import {
  RailUnavailableError,
  type ConversionRequest,
  type FiatRails,
  type PayoutRequest,
  type RailOperationKind,
  type RailOutcome,
  type RailRequest,
  type ReturnRequest,
  type SellBackOutcome,
  type SellBackRequest,
} from '../fiat-rails';
import type { OperationLookup } from '../unavailable';
import type { Iso20022BankClient } from './client';
import {
  buildPain001,
  endToEndIdOf,
  type AgentId,
  type AccountId,
  type Pain002,
  type Party,
  type Scheme,
} from './messages';

/** The service's accounts at the bank simulator (simulators/bank/iso20022): the debtor of every payout. */
export const bankSimulatorDebtors: Record<'EUR' | 'USD', Party> = {
  EUR: { name: 'Payments Service', account: { iban: 'DE89370400440532013000' }, agent: { bic: 'COBADEFFXXX' } },
  USD: { name: 'Payments Service', account: { number: '000111222333' }, agent: { abaRoutingNumber: '021000021' } },
};

/** The rails this adapter pays out on, and the ISO scheme of each. */
export const iso20022PayoutRails: Partial<Record<FiatRail, Scheme>> = { sepa: 'sepa', wire: 'wire' };

export interface Iso20022RailsOptions {
  /** The service's own account at the bank, per currency (the debtor of every payout). */
  debtors: Record<'EUR' | 'USD', Party>;
  /** How long one payOut waits for the bank to settle an accepted payment before the activity tries again. */
  settleWaitMs: number;
  pollIntervalMs: number;
  /** Sandbox: the partners' `simulate` values become the bank simulator's scenarios. */
  simulate: boolean;
}

export class Iso20022FiatRails implements FiatRails {
  constructor(
    private readonly bank: Iso20022BankClient,
    private readonly others: FiatRails,
    private readonly options: Iso20022RailsOptions,
  ) {}

  convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }> {
    return this.others.convertToStablecoin(request);
  }

  returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    return this.others.returnToSender(request);
  }

  sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    return this.others.sellBack(request);
  }

  async payOut(request: PayoutRequest): Promise<RailOutcome> {
    const scheme = iso20022PayoutRails[request.rail];
    if (!scheme) return this.others.payOut(request);
    const endToEndId = endToEndIdOf(request.idempotencyKey);
    if (this.options.simulate) await this.simulate(request, endToEndId);
    const debtor = this.options.debtors[request.amount.currency as 'EUR' | 'USD'];
    if (!debtor) throw new Error(`ISO 20022: no account of the service in ${request.amount.currency}`);
    const pain001 = buildPain001({
      messageId: `P-${randomUUID().replaceAll('-', '').slice(0, 30)}`,
      createdAt: new Date(),
      scheme,
      executionDate: new Date().toISOString().slice(0, 10),
      debtor,
      transfers: [
        {
          endToEndId,
          amount: request.amount,
          creditor: creditorOf(request.rail, request.destination),
          // Banks carry the remittance text onto their statements: the reconciliation finds the operation by it.
          remittance: request.idempotencyKey,
        },
      ],
    });
    let status = lineOf(await this.bank.initiate(pain001), endToEndId);
    // Accepted: the bank settles later. Wait a bounded while, then let the activity's retry ask again (the same
    // end-to-end id is the same payment, so a retry never pays twice).
    const deadline = Date.now() + this.options.settleWaitMs;
    while (status.status === 'ACCP' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, this.options.pollIntervalMs));
      const report = await this.bank.status(endToEndId);
      if (report) status = lineOf(report, endToEndId);
    }
    return outcomeOf(status, endToEndId, request.amount);
  }

  async lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
    if (kind !== 'payout') return this.others.lookUp(kind, request);
    const endToEndId = endToEndIdOf(request.idempotencyKey);
    const report = await this.bank.status(endToEndId);
    // Not at the bank: it may still be a payout of another rail (the sandbox's own log).
    if (!report) return this.others.lookUp(kind, request);
    const status = lineOf(report, endToEndId);
    if (status.status === 'ACCP') return { state: 'unknown' };
    return { state: 'executed', outcome: outcomeOf(status, endToEndId, null) };
  }

  private async simulate(request: PayoutRequest, endToEndId: string): Promise<void> {
    if (request.simulate === 'payout_error' && request.round === 0) {
      throw new RailUnavailableError('ISO 20022 bank unavailable (simulate: payout_error)');
    }
    if (request.simulate === 'payout_rejected') {
      await this.bank.scenario({ kind: 'reject_next', endToEndId, reason: 'AC04' });
    }
    if (request.simulate === 'payout_timeout_after_execution' && request.round === 0) {
      await this.bank.scenario({ kind: 'lose_next_status', endToEndId });
    }
  }
}

function lineOf(report: Pain002, endToEndId: string) {
  const line = report.statuses.find((status) => status.endToEndId === endToEndId);
  if (!line) throw new RailUnavailableError(`ISO 20022 bank: pain.002 ${report.messageId} does not name ${endToEndId}`);
  return line;
}

function outcomeOf(line: { status: string; reason?: string }, endToEndId: string, amount: Money | null): RailOutcome {
  if (line.status === 'ACSC') return { status: 'completed', providerReference: endToEndId };
  if (line.status === 'RJCT') {
    return {
      status: 'rejected',
      providerReference: endToEndId,
      reason: `the bank rejected the payment (ISO ${line.reason ?? 'NARR'})`,
    };
  }
  throw new RailUnavailableError(
    `ISO 20022 bank: ${endToEndId}${amount ? ` (${amount.toString()} ${amount.currency})` : ''} accepted, not settled yet`,
  );
}

function field(destination: object, name: string): string {
  const value = (destination as Record<string, unknown>)[name];
  if (typeof value !== 'string' || value === '') throw new Error(`ISO 20022: the destination has no ${name}`);
  return value;
}

/** The receiver's account as the rail stores it (src/domain/rails.ts), as ISO names it. */
function creditorOf(rail: FiatRail, destination: object): Party {
  const name = field(destination, 'beneficiary_name');
  let account: AccountId;
  let agent: AgentId;
  if (rail === 'sepa') {
    account = { iban: field(destination, 'iban') };
    agent = { bic: field(destination, 'bic') };
  } else {
    account = { number: field(destination, 'bank_account_number') };
    agent = { abaRoutingNumber: field(destination, 'routing_number') };
  }
  return { name, account, agent };
}
