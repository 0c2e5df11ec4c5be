// The outside systems that move a transaction's money: the exchange that turns fiat into the
// stablecoin (leg 1, on-ramp), the off-ramp that turns the stablecoin into fiat and pays the
// receiver's bank account (leg 2, payout rail), and the return of money to the sender (refunds).
// Every request carries an idempotency key (transaction and step): asking twice makes one operation,
// which is what lets a retried or re-run activity call the provider again safely.
//
// Outcomes: `completed`; `rejected` (payouts only: the receiving bank refused for good, e.g. a closed
// account: the money goes back to the sender); or a thrown RailUnavailableError. A thrown error says
// nothing about whether the operation happened (a timeout may follow its execution), so when the
// activity's retries run out the workflow asks `lookUp` with the same key before deciding anything.
import type { Blockchain, FiatRail, PaymentRail } from '../domain/rails';
import { Money } from '../domain/money';
import type { PayoutReturnReason, SandboxSimulation } from '../domain/transactions';
import type { DatabaseClient } from '../persistence/database';
import { findSandboxOperation, recordSandboxOperation } from '../persistence/sandbox-operations';
import { OperationLookup, ProviderUnavailableError, Unconnected } from './unavailable';

export interface RailRequest {
  /** `<transactionId>:<step>`: the same key always names the same operation. */
  idempotencyKey: string;
  /** Sandbox only: the failure the deposit asked for; real providers ignore it. */
  simulate: SandboxSimulation | null;
  /** 0 on the first run of the step; each operator retry runs it again with the next round. */
  round: number;
  /**
   * Returns (and their lookups) only: the deposit sent back, as its provider reported it. A bank returns a credit by
   * its own id of it (API Pix: PUT /pix/{endToEndId}/devolucao/{id}).
   */
  deposit?: { provider: string; providerReference: string };
}

export interface ConversionRequest extends RailRequest {
  /** The fiat converted (the deposit minus the fees). */
  from: Money;
  /** The stablecoin bought at the locked rate. */
  to: Money;
  chain: Blockchain;
  /** Where the stablecoin is delivered: the service-managed wallet of the transaction. */
  walletAddress: string;
}

export interface PayoutRequest extends RailRequest {
  /** The stablecoin sold. */
  from: Money;
  /** What the receiver gets. */
  amount: Money;
  rail: FiatRail;
  /** The receiver's external account as stored (rail object). */
  destination: object;
}

export interface ReturnRequest extends RailRequest {
  amount: Money;
  /** The sender's rail: a bank rail, or the payout's chain (sent back to the address it came from). */
  rail: PaymentRail;
}

/**
 * After leg 1, when the transaction is refunded: the stablecoin bought is sold back for the sender's fiat at
 * the exchange's rate of the moment (not the locked one).
 */
export interface SellBackRequest extends RailRequest {
  /** The stablecoin sold (leg 1 bought it). */
  from: Money;
  /** What the locked rate gave for it in leg 1: the exchange's answer is compared with it in the ledger. */
  atLockedRate: Money;
  chain: Blockchain;
  /** The service-managed wallet holding the stablecoin. */
  walletAddress: string;
}

/** The kinds of rail operation, one per step that moves money outside (the key's step names it too). */
export type RailOperationKind = 'conversion' | 'payout' | 'return' | 'sell_back';

export type RailOutcome =
  | { status: 'completed'; providerReference: string }
  | { status: 'rejected'; providerReference: string; reason: string };

/** The provider could not do it now (outage, timeout): retry later. */
export class RailUnavailableError extends ProviderUnavailableError {
  override name = 'RailUnavailableError';
}

/**
 * The sender's bank refused the return for good (API Pix: NAO_REALIZADO): nothing was returned. Not retried under
 * the same round; the workflow's lookup finds it not executed and the existing failed-return path follows (a refund
 * in `error`, a late deposit `return_failed`) until an operator's retry asks again in the next round.
 */
export class ReturnRefusedError extends Error {
  override name = 'ReturnRefusedError';
}

export type SellBackOutcome = { status: 'completed'; providerReference: string; proceeds: Money };

export interface FiatRails {
  convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }>;
  payOut(request: PayoutRequest): Promise<RailOutcome>;
  returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }>;
  sellBack(request: SellBackRequest): Promise<SellBackOutcome>;
  /**
   * What became of the operation under `request.idempotencyKey`: executed (with its outcome, as the first answer
   * was or would have been), never executed, or unknown (the provider cannot tell yet). A thrown
   * RailUnavailableError means unknown as well.
   */
  lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>>;
}

/** The sandbox exchange's spread on a sell-back: what the stablecoin fetches below the locked rate. */
export const SANDBOX_SELL_BACK_SPREAD_BASIS_POINTS = 50;

/**
 * Sandbox: completes every operation at once, except what the deposit's `simulate` asked for:
 * payout_rejected -> the payout is rejected (every round); conversion_error / payout_error -> the step's first round
 * fails as unavailable, before anything is done, every time it is tried (so the retries run out, the lookup finds
 * nothing and the transaction goes to `error`), and an operator's retry (round 1) succeeds;
 * return_error -> a return's first round fails as unavailable, before anything is done (the refund goes to `error`, a
 * late deposit's return to `return_failed`), and an operator's retry (round 1) succeeds;
 * payout_timeout_after_execution -> in the first round the payout is made and then every answer is lost (a timeout),
 * while the lookup reports it made; payout_outcome_unknown -> the same, and in the first round the lookup cannot tell
 * either (unknown); from round 1 both answer. A sell-back fetches SANDBOX_SELL_BACK_SPREAD_BASIS_POINTS less than the
 * locked rate. Operations are recorded in sandbox_rail_operations under their idempotency key, as a real bank keeps
 * them: a repeated request counts `requests` up and finds the first outcome, never a second operation.
 */
export class SandboxFiatRails implements FiatRails {
  constructor(private readonly prisma: DatabaseClient) {}

  async convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }> {
    if (request.simulate === 'conversion_error' && request.round === 0) {
      throw new RailUnavailableError('sandbox: the exchange is unavailable (simulate: conversion_error)');
    }
    return (await this.record('conversion', request, request.to, 'completed')).outcome as RailOutcome & {
      status: 'completed';
    };
  }

  async payOut(request: PayoutRequest): Promise<RailOutcome> {
    if (request.simulate === 'payout_error' && request.round === 0) {
      throw new RailUnavailableError('sandbox: the payout rail is unavailable (simulate: payout_error)');
    }
    const { outcome } = await this.record(
      'payout',
      request,
      request.amount,
      request.simulate === 'payout_rejected' ? 'rejected' : 'completed',
    );
    if (losesAnswer(request)) {
      throw new RailUnavailableError(`sandbox: the payout was made, its answer lost (simulate: ${request.simulate})`);
    }
    return outcome;
  }

  async returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    if (request.simulate === 'return_error' && request.round === 0) {
      throw new RailUnavailableError('sandbox: the sender’s bank is unavailable (simulate: return_error)');
    }
    return (await this.record('return', request, request.amount, 'completed')).outcome as RailOutcome & {
      status: 'completed';
    };
  }

  async sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    const proceeds = request.atLockedRate.minus(
      request.atLockedRate.basisPoints(SANDBOX_SELL_BACK_SPREAD_BASIS_POINTS, 'up'),
    );
    // A repeated request finds the first sale, at the first price.
    const sold = await this.record('sell_back', request, proceeds, 'completed');
    return { status: 'completed', providerReference: sold.outcome.providerReference, proceeds: sold.amount };
  }

  async lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
    if (request.simulate === 'payout_outcome_unknown' && request.round === 0 && kind === 'payout') {
      return { state: 'unknown' };
    }
    const row = await findSandboxOperation(this.prisma, request.idempotencyKey);
    if (!row) return { state: 'not_executed' };
    if (row.kind !== kind) throw new Error(`sandbox: ${request.idempotencyKey} is a ${row.kind}, not a ${kind}`);
    const outcome = outcomeOf(kind, request.idempotencyKey, row.outcome);
    return {
      state: 'executed',
      outcome:
        kind === 'sell_back'
          ? {
              status: 'completed',
              providerReference: outcome.providerReference,
              proceeds: Money.of(row.currency, row.amount),
            }
          : outcome,
    };
  }

  private async record(
    kind: RailOperationKind,
    request: RailRequest,
    amount: Money,
    outcome: 'completed' | 'rejected',
  ): Promise<{ outcome: RailOutcome; amount: Money }> {
    const kept = await recordSandboxOperation(this.prisma, request.idempotencyKey, {
      kind,
      currency: amount.currency,
      amount: amount.toString(),
      outcome,
    });
    return {
      outcome: outcomeOf(kind, request.idempotencyKey, kept.outcome),
      amount: Money.of(amount.currency, kept.amount),
    };
  }
}

/** The simulations whose first round executes the operation and then loses every answer. */
function losesAnswer(request: RailRequest): boolean {
  return (
    request.round === 0 &&
    (request.simulate === 'payout_timeout_after_execution' || request.simulate === 'payout_outcome_unknown')
  );
}

function outcomeOf(kind: RailOperationKind, idempotencyKey: string, outcome: string): RailOutcome {
  const providerReference = `sandbox-${kind}-${idempotencyKey}`;
  return outcome === 'rejected'
    ? {
        status: 'rejected',
        providerReference,
        reason: 'sandbox: the receiving bank rejected the payout (simulate: payout_rejected)',
      }
    : { status: 'completed', providerReference };
}

/**
 * A payout the receiving bank sent back days after it was made (a SEPA or ACH return: closed account, wrong
 * beneficiary). The rail integration reports it to receivePayoutReturn (src/services/transactions/payout-returns.ts);
 * the sandbox endpoint POST /v1/sandbox/transactions/{id}/payout-return does the same. `provider` and
 * `returnReference` name it once: a second report of the same pair is a replay.
 */
export interface PayoutReturnReport {
  /** Who reported it (the rail integration's name; `sandbox` in the sandbox). */
  provider: string;
  /** The payout's idempotency key, `<transactionId>:stablecoin_to_fiat`, when the bank echoes it back. */
  payoutIdempotencyKey: string | null;
  /** The provider's reference of the payout (RailOutcome.providerReference), when that is what the bank names. */
  payoutProviderReference: string | null;
  /** What came back, in the payout's currency: at most what was paid out (banks may keep charges). */
  amount: Money;
  reasonCode: PayoutReturnReason;
  /** The bank's own reference of the return. */
  returnReference: string;
  returnedAt: Date;
}

/** Sandbox: the simulated bank keeps the return in its operation log (kind payout_return), as a statement lists it. */
export async function recordSandboxPayoutReturn(
  prisma: DatabaseClient,
  transactionId: string,
  amount: Money,
): Promise<void> {
  await recordSandboxOperation(prisma, `${transactionId}:payout_return`, {
    kind: 'payout_return',
    currency: amount.currency,
    amount: amount.toString(),
    outcome: 'completed',
  });
}

/** Production until an exchange and payout rails are connected: every operation is unavailable. */
export class UnconnectedFiatRails implements FiatRails, Unconnected {
  readonly unconnected = 'no exchange or payout rail is connected';

  async convertToStablecoin(): Promise<never> {
    throw new RailUnavailableError(this.unconnected);
  }
  async payOut(): Promise<never> {
    throw new RailUnavailableError(this.unconnected);
  }
  async returnToSender(): Promise<never> {
    throw new RailUnavailableError(this.unconnected);
  }
  async sellBack(): Promise<never> {
    throw new RailUnavailableError(this.unconnected);
  }
  async lookUp(): Promise<never> {
    throw new RailUnavailableError(this.unconnected);
  }
}
