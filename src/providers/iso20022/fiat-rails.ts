// Payouts in EUR (SEPA) and USD (wire) through a bank's ISO 20022 host-to-host API: one pain.001 per payout, its
// EndToEndId derived from the operation's idempotency key (endToEndIdOf), so that asking twice is one payment at the
// bank and every report the bank sends names the operation. Returns of credits this bank notified (a refund, a late
// deposit sent back) are pain.001s too, to the payer's account the camt.054 named (kept in bank_credits): a customer's
// host-to-host channel carries pain messages only; pacs.004, the interbank return, is the bank's own message to the
// payer's bank, which a customer cannot send (docs/iso20022.md "Refunds"). The exchange (conversion, sell-back) and
// the other rails (Pix, SPEI, CVU) stay with `others` (the sandbox's adapters).
import { randomUUID } from 'node:crypto';
import type { FiatRail } from '../../domain/rails';
import type { Money } from '../../domain/money';
import {
  RailUnavailableError,
  ReturnRefusedError,
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
import { ISO20022_PROVIDER } from './reports';
import {
  buildPain001,
  endToEndIdOf,
  type AgentId,
  type AccountId,
  type Pain002,
  type Party,
  type Scheme,
  type StatusLine,
} from './messages';

/** Sandbox (`iso_payout_returned`): seconds after settling that the bank returns the payout. */
export const SANDBOX_RETURN_AFTER_SECONDS = 3;

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
  /** The payer of a credit this bank notified (by the bank's entry reference), as its camt.054 named them. */
  payerOf: (entryReference: string) => Promise<Party | null>;
}

/**
 * A return's end-to-end id: the step's idempotency key in round 0; an operator's retry (round n) asks under its own,
 * since the bank keeps a rejected id rejected.
 */
export function returnEndToEndId(idempotencyKey: string, round: number): string {
  return endToEndIdOf(round === 0 ? idempotencyKey : `${idempotencyKey}#${round}`);
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

  async returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    const credit = creditOf(request);
    const scheme = iso20022PayoutRails[request.rail as FiatRail];
    if (!credit || !scheme) return this.others.returnToSender(request);
    const { idempotencyKey: key, round } = request;
    // An earlier round's return that the bank did not reject (settled or settling) is this return: never a second.
    let status = await this.earlierReturn(key, round);
    let endToEndId = status?.endToEndId ?? returnEndToEndId(key, round);
    if (!status) {
      const payer = await this.options.payerOf(credit);
      // The camt.054 not read yet (a sandbox deposit is recorded before its notification): asked again later.
      if (!payer) throw new RailUnavailableError(`ISO 20022: the payer's account of credit ${credit} is not known yet`);
      if (this.options.simulate && request.simulate === 'return_error' && round === 0) {
        await this.bank.scenario({ kind: 'reject_next', endToEndId, reason: 'AC04' });
      }
      status = await this.send(scheme, request.amount, payer, endToEndId, key);
      endToEndId = status.endToEndId;
    }
    status = await this.settled(status, endToEndId);
    if (status.status === 'RJCT') {
      throw new ReturnRefusedError(`the bank rejected the return ${endToEndId} (ISO ${status.reason ?? 'NARR'})`);
    }
    if (status.status === 'ACCP') {
      throw new RailUnavailableError(`ISO 20022 bank: the return ${endToEndId} is accepted, not settled yet`);
    }
    return { status: 'completed', providerReference: endToEndId };
  }

  /** The first return of rounds 0..round that the bank did not reject, or null. */
  private async earlierReturn(key: string, round: number) {
    for (let earlier = 0; earlier <= round; earlier += 1) {
      const endToEndId = returnEndToEndId(key, earlier);
      const report = await this.bank.status(endToEndId);
      if (!report) continue;
      const line = lineOf(report, endToEndId);
      if (line.status !== 'RJCT' || earlier === round) return line;
    }
    return null;
  }

  sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    return this.others.sellBack(request);
  }

  async payOut(request: PayoutRequest): Promise<RailOutcome> {
    const scheme = iso20022PayoutRails[request.rail];
    if (!scheme) return this.others.payOut(request);
    const endToEndId = endToEndIdOf(request.idempotencyKey);
    if (this.options.simulate) await this.simulate(request, endToEndId);
    const creditor = creditorOf(request.rail, request.destination);
    const status = await this.send(scheme, request.amount, creditor, endToEndId, request.idempotencyKey);
    const outcome = outcomeOf(await this.settled(status, endToEndId), endToEndId, request.amount);
    if (this.options.simulate && request.simulate === 'iso_payout_returned' && outcome.status === 'completed') {
      // Returned by the bank once the transaction has completed (a return of a payout not completed is refused).
      await this.bank
        .scenario({ kind: 'return', endToEndId, reason: 'AC04', afterSeconds: SANDBOX_RETURN_AFTER_SECONDS })
        .catch(() => undefined);
    }
    return outcome;
  }

  /** One pain.001 of one transfer from the service's account in the amount's currency; the bank's first status. */
  private async send(scheme: Scheme, amount: Money, creditor: Party, endToEndId: string, key: string) {
    const debtor = this.options.debtors[amount.currency as 'EUR' | 'USD'];
    if (!debtor) throw new Error(`ISO 20022: no account of the service in ${amount.currency}`);
    const pain001 = buildPain001({
      messageId: `P-${randomUUID().replaceAll('-', '').slice(0, 30)}`,
      createdAt: new Date(),
      scheme,
      executionDate: new Date().toISOString().slice(0, 10),
      debtor,
      transfers: [
        {
          endToEndId,
          amount,
          creditor,
          // Banks carry the remittance text onto their statements: the reconciliation finds the operation by it.
          remittance: key,
        },
      ],
    });
    return lineOf(await this.bank.initiate(pain001), endToEndId);
  }

  /**
   * Accepted: the bank settles later. Waits a bounded while, then lets the activity's retry ask again (the same
   * end-to-end id is the same payment, so a retry never pays twice).
   */
  private async settled(first: StatusLine, endToEndId: string): Promise<StatusLine> {
    let status = first;
    const deadline = Date.now() + this.options.settleWaitMs;
    while (status.status === 'ACCP' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, this.options.pollIntervalMs));
      const report = await this.bank.status(endToEndId);
      if (report) status = lineOf(report, endToEndId);
    }
    return status;
  }

  async lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
    if (kind === 'return' && creditOf(request)) {
      // Rejected in every round so far (or never received): not made; settling: not known yet.
      const found = await this.earlierReturn(request.idempotencyKey, request.round);
      if (!found || found.status === 'RJCT') return { state: 'not_executed' };
      if (found.status === 'ACCP') return { state: 'unknown' };
      return { state: 'executed', outcome: { status: 'completed', providerReference: found.endToEndId } };
    }
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

/** The bank's entry reference of the credit a return sends back, when this bank notified it. */
function creditOf(request: RailRequest): string | null {
  return request.deposit?.provider === ISO20022_PROVIDER ? request.deposit.providerReference : null;
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
