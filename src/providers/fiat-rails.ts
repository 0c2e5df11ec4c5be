// The outside systems that move a transaction's money: the exchange that turns fiat into the
// stablecoin (leg 1, on-ramp), the off-ramp that turns the stablecoin into fiat and pays the
// receiver's bank account (leg 2, payout rail), and the return of money to the sender (refunds).
// Every request carries an idempotency key (transaction and step): asking twice makes one operation,
// which is what lets a retried or re-run activity call the provider again safely.
//
// Outcomes: `completed`; `rejected` (payouts only: the receiving bank refused for good, e.g. a closed
// account: the money goes back to the sender); or a thrown RailUnavailableError (transient: the
// activity retries within its bounded policy, then the transaction goes to `error`).
import type { Blockchain, FiatRail, PaymentRail } from '../domain/rails';
import type { Money } from '../domain/money';
import type { SandboxSimulation } from '../domain/transactions';
import type { PrismaClient } from '../db';
import { ProviderUnavailableError, Unconnected } from './unavailable';

export interface RailRequest {
  /** `<transactionId>:<step>`: the same key always names the same operation. */
  idempotencyKey: string;
  /** Sandbox only: the failure the deposit asked for; real providers ignore it. */
  simulate: SandboxSimulation | null;
  /** 0 on the first run of the step; each operator retry runs it again with the next round. */
  round: number;
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

export type RailOutcome =
  | { status: 'completed'; providerReference: string }
  | { status: 'rejected'; providerReference: string; reason: string };

/** The provider could not do it now (outage, timeout): retry later. */
export class RailUnavailableError extends ProviderUnavailableError {
  override name = 'RailUnavailableError';
}

export interface FiatRails {
  convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }>;
  payOut(request: PayoutRequest): Promise<RailOutcome>;
  returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }>;
}

/**
 * Sandbox: completes every operation at once, except what the deposit's `simulate` asked for:
 * payout_rejected -> the payout is rejected (every round); conversion_error / payout_error -> the
 * step's first round fails as unavailable every time it is tried (so the retries run out and the
 * transaction goes to `error`), and an operator's retry (round 1) succeeds. Operations are recorded
 * in sandbox_rail_operations under their idempotency key, as a real bank keeps them: a repeated
 * request counts `requests` up and finds the first outcome, never a second operation.
 */
export class SandboxFiatRails implements FiatRails {
  constructor(private readonly prisma: PrismaClient) {}

  async convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }> {
    if (request.simulate === 'conversion_error' && request.round === 0) {
      throw new RailUnavailableError('sandbox: the exchange is unavailable (simulate: conversion_error)');
    }
    return (await this.record('conversion', request, request.to, 'completed')) as RailOutcome & {
      status: 'completed';
    };
  }

  async payOut(request: PayoutRequest): Promise<RailOutcome> {
    if (request.simulate === 'payout_error' && request.round === 0) {
      throw new RailUnavailableError('sandbox: the payout rail is unavailable (simulate: payout_error)');
    }
    return this.record('payout', request, request.amount, request.simulate === 'payout_rejected' ? 'rejected' : 'completed');
  }

  async returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    return (await this.record('return', request, request.amount, 'completed')) as RailOutcome & {
      status: 'completed';
    };
  }

  private async record(
    kind: 'conversion' | 'payout' | 'return',
    request: RailRequest,
    amount: Money,
    outcome: 'completed' | 'rejected',
  ): Promise<RailOutcome> {
    const [row] = await this.prisma.$queryRaw<Array<{ outcome: string }>>`
      INSERT INTO sandbox_rail_operations (idempotency_key, kind, currency, amount, outcome)
      VALUES (${request.idempotencyKey}, ${kind}, ${amount.currency}, ${amount.toString()}::numeric, ${outcome})
      ON CONFLICT (idempotency_key) DO UPDATE SET requests = sandbox_rail_operations.requests + 1
      RETURNING outcome`;
    const providerReference = `sandbox-${kind}-${request.idempotencyKey}`;
    return row?.outcome === 'rejected'
      ? { status: 'rejected', providerReference, reason: 'sandbox: the receiving bank rejected the payout (simulate: payout_rejected)' }
      : { status: 'completed', providerReference };
  }
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
}
