// Pix payouts through the same bank (its transfer extension, docs/pix.md): the key's holder is looked up in the DICT
// first and must still be the account's beneficiary (a key that moved to someone else is not paid), then the send is
// made under an idEnvio derived from the step's idempotency key, so a retried or re-run step finds the first send.
// Every other rail, and every other operation, stays with the rails it wraps.
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
import { RailUnavailableError } from '../fiat-rails';
import type { OperationLookup } from '../unavailable';
import { ApiPixClient, ApiPixProblem, ApiPixUnavailableError, type EnvioPix } from './api-pix';

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
  constructor(
    private readonly inner: FiatRails,
    private readonly client: ApiPixClient,
    /** The service's key at the bank (the payer's). */
    private readonly payerKey: string,
  ) {}

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

  returnToSender(request: ReturnRequest): Promise<RailOutcome & { status: 'completed' }> {
    return this.inner.returnToSender(request);
  }

  sellBack(request: SellBackRequest): Promise<SellBackOutcome> {
    return this.inner.sellBack(request);
  }

  async lookUp(kind: RailOperationKind, request: RailRequest): Promise<OperationLookup<RailOutcome | SellBackOutcome>> {
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
