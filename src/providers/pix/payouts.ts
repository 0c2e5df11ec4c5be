// Pix payouts through the same bank (its transfer extension, docs/pix.md): the key's holder is looked up in the DICT
// first and must still be the account's beneficiary (a key that moved to someone else is not paid), then the send is
// made under an idEnvio derived from the step's idempotency key, so a retried or re-run step finds the first send.
// Returns of deposits API Pix reported (provider `api-pix`) go back through `devolucao` under an id from the step's key
// and round, their status read back until the SPI settles them (docs/pix.md "Returns"). Every other rail, and every
// other operation, stays with the rails it wraps.
import type {
  ConversionRequest,
  FiatRails,
  PayoutRequest,
  RailOperationKind,
  RailOutcome,
  RailRequest,
  ReturnRequest,
  SellBackOutcome,
  SellBackRequest,
} from '../fiat-rails';
import { RailUnavailableError, ReturnRefusedError } from '../fiat-rails';
import type { OperationLookup } from '../unavailable';
import { ApiPixClient, ApiPixProblem, ApiPixUnavailableError, type EnvioPix } from './api-pix';
import { API_PIX_PROVIDER, type PixReturnOutcome, PixReturns } from './collections';

export interface ApiPixRailsOptions {
  /** Sandbox: the partners' `simulate` values become the bank simulator's scenarios (return_error: a refused return). */
  simulate?: boolean;
  /** How long a return EM_PROCESSAMENTO is read back before the attempt gives up (a retry reads it again). */
  returnSettleWaitMs?: number;
}

/** The send's id at the bank: letters and digits of the idempotency key, at most 35 (the same key, the same send). */
export function idEnvioFor(idempotencyKey: string): string {
  return idempotencyKey.replace(/[^a-zA-Z0-9]/g, '').slice(-35);
}

/** Names compared as a person writes them: accents, case and spacing aside. */
export function sameHolder(a: string, b: string): boolean {
  const plain = (text: string) =>
    text
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .trim();
  return plain(a) === plain(b);
}

export class ApiPixPayoutRails implements FiatRails {
  private readonly returns: PixReturns;

  constructor(
    private readonly inner: FiatRails,
    private readonly client: ApiPixClient,
    /** The service's key at the bank (the payer's). */
    private readonly payerKey: string,
    private readonly options: ApiPixRailsOptions = {},
  ) {
    this.returns = new PixReturns(client);
  }

  convertToStablecoin(request: ConversionRequest): Promise<RailOutcome & { status: 'completed' }> {
    return this.inner.convertToStablecoin(request);
  }

  async payOut(request: PayoutRequest): Promise<RailOutcome> {
    if (request.rail !== 'pix') return this.inner.payOut(request);
    const destination = request.destination as { key?: string; beneficiary_name?: string };
    const idEnvio = idEnvioFor(request.idempotencyKey);
    try {
      // A send already made (an earlier attempt whose answer was lost) is the outcome: no second lookup or send.
      const previous = await this.sent(idEnvio);
      if (previous) return outcomeOf(previous);
      const holder = await this.client.dictLookup(destination.key ?? '');
      if (!holder) return { status: 'rejected', providerReference: idEnvio, reason: 'pix key not found in the DICT' };
      if (!sameHolder(holder.nome, destination.beneficiary_name ?? '')) {
        return { status: 'rejected', providerReference: idEnvio, reason: 'the pix key now belongs to someone else' };
      }
      return outcomeOf(
        await this.client.sendPix(idEnvio, request.amount.toString(), destination.key ?? '', this.payerKey),
      );
    } catch (error) {
      if (error instanceof ApiPixUnavailableError) throw new RailUnavailableError(error.message);
      throw error;
    }
  }

  async returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    const endToEndId = pixDepositOf(request);
    if (request.rail !== 'pix' || !endToEndId) return this.inner.returnToSender(request);
    const { idempotencyKey: key, round } = request;
    try {
      // This round's return, or an earlier round's that was not refused (made or still settling): never a second one.
      let outcome = await this.returns.earlier(endToEndId, key, round);
      if (!outcome || (outcome.status === 'refused' && !(await this.returns.status(endToEndId, key, round)))) {
        if (this.options.simulate && request.simulate === 'return_error' && round === 0) {
          await this.client.simulatorScenario(`/pix/${encodeURIComponent(endToEndId)}`, {
            scenarios: ['return_refused'],
          });
        }
        outcome = await this.returns.request(endToEndId, key, request.amount, round);
      }
      outcome = await this.settled(endToEndId, key, round, outcome);
      if (outcome.status === 'refused') {
        throw new ReturnRefusedError(`the payer's bank refused the pix return (NAO_REALIZADO): ${outcome.reason}`);
      }
      if (outcome.status === 'pending') {
        throw new RailUnavailableError(`the pix return ${outcome.providerReference} is still EM_PROCESSAMENTO`);
      }
      return { status: 'completed', providerReference: outcome.providerReference };
    } catch (error) {
      if (error instanceof ApiPixUnavailableError) throw new RailUnavailableError(error.message);
      throw error;
    }
  }

  /** Reads a return EM_PROCESSAMENTO back for a bounded while (the SPI settles in seconds). */
  private async settled(
    endToEndId: string,
    key: string,
    round: number,
    outcome: PixReturnOutcome,
  ): Promise<PixReturnOutcome> {
    const deadline = Date.now() + (this.options.returnSettleWaitMs ?? 5_000);
    let current = outcome;
    while (current.status === 'pending' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      current = (await this.returns.earlier(endToEndId, key, round)) ?? current;
    }
    return current;
  }

  sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    return this.inner.sellBack(request);
  }

  async lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
    const endToEndId = pixDepositOf(request);
    if (kind === 'return' && endToEndId) {
      let found: PixReturnOutcome | null;
      try {
        found = await this.returns.earlier(endToEndId, request.idempotencyKey, request.round);
      } catch (error) {
        if (error instanceof ApiPixUnavailableError) return { state: 'unknown' };
        throw error;
      }
      if (!found || found.status === 'refused') return { state: 'not_executed' };
      if (found.status === 'pending') return { state: 'unknown' };
      return { state: 'executed', outcome: { status: 'completed', providerReference: found.providerReference } };
    }
    if (kind !== 'payout' || !request.idempotencyKey.endsWith(':stablecoin_to_fiat')) {
      return this.inner.lookUp(kind, request);
    }
    let sent: EnvioPix | null;
    try {
      sent = await this.sent(idEnvioFor(request.idempotencyKey));
    } catch (error) {
      if (error instanceof ApiPixUnavailableError) return { state: 'unknown' };
      throw error;
    }
    // Not sent here: a payout on another rail, which the wrapped rails know.
    return sent ? { state: 'executed', outcome: outcomeOf(sent) } : this.inner.lookUp(kind, request);
  }

  private async sent(idEnvio: string): Promise<EnvioPix | null> {
    try {
      return await this.client.getSent(idEnvio);
    } catch (error) {
      if (error instanceof ApiPixProblem && error.status === 404) return null;
      throw error;
    }
  }
}

function outcomeOf(envio: EnvioPix): RailOutcome {
  if (envio.status === 'NAO_REALIZADO') {
    return { status: 'rejected', providerReference: envio.e2eId, reason: 'the bank did not make the pix' };
  }
  // EM_PROCESSAMENTO is the SPI's few seconds; the bank answers REALIZADO or NAO_REALIZADO to the lookup.
  return { status: 'completed', providerReference: envio.e2eId };
}

/** The endToEndId of the deposit a return sends back, when API Pix reported that deposit. */
function pixDepositOf(request: RailRequest): string | null {
  return request.deposit?.provider === API_PIX_PROVIDER ? request.deposit.providerReference : null;
}
