// Pix collections through a bank's API Pix: one charge (`cob`) per transaction, whose txid carries the deposit
// reference and whose "copia e cola" is the one in the deposit instructions; the `pix` webhook's payments become
// IncomingDeposits whose provider reference is the SPI's endToEndId (a payment notified twice is one deposit:
// receiveDeposit derives the deposit's id from provider and reference); returns through `devolucao`.
import { Money } from '../../domain/money';
import { normaliseDepositReference } from '../../domain/transactions';
import type {
  DepositInstructionsRequest,
  DepositProvider,
  IncomingDeposit,
  SenderDepositInstructions,
  StablecoinDepositInstructionsRequest,
} from '../transaction-deposits';
import { ApiPixClient, ApiPixProblem, type Cob, type DevolucaoStatus } from './api-pix';

/** The provider name of credits API Pix reports (IncomingDeposit.provider). */
export const API_PIX_PROVIDER = 'api-pix';
/** API Pix asks 26 to 35 letters and digits of a cob's txid; the deposit reference has 12. */
const TXID_LENGTH = 26;
const TXID_PAD = 'P';

/** The cob's txid of a deposit reference: the reference, then `P` up to 26 characters (TX7K2M9QH4RDPPPPPPPPPPPPPP). */
export function pixTxidFor(reference: string): string {
  return reference.padEnd(TXID_LENGTH, TXID_PAD);
}

/** The deposit reference a txid carries, or null when the txid is not one of ours. */
export function referenceOfTxid(txid: string): string | null {
  // The first 12 characters, not the txid less its trailing Ps: a reference may itself end in P (Crockford base32).
  const reference = txid.slice(0, 12);
  return pixTxidFor(reference) === txid ? normaliseDepositReference(reference) : null;
}

export interface PixCollectionAccount {
  /** The service's Pix key at the bank (the cob's `chave`): a company's, so its CNPJ (the instructions' key_type). */
  key: string;
  keyType: 'cnpj';
  bankName: string;
  beneficiaryName: string;
}

/** Deposit instructions for pix from a cob made at the bank; every other rail from `others`. */
export class ApiPixDepositProvider implements DepositProvider {
  constructor(
    private readonly client: ApiPixClient,
    private readonly account: PixCollectionAccount,
    private readonly others: DepositProvider,
  ) {}

  async instructionsFor(request: DepositInstructionsRequest): Promise<SenderDepositInstructions> {
    if (request.rail !== 'pix') return this.others.instructionsFor(request);
    const cob = await this.chargeFor(request);
    return {
      payment_rail: 'pix',
      currency: request.amount.currency,
      amount: request.amount.toString(),
      reference: request.reference,
      deadline: request.deadline.toISOString(),
      pix: {
        key: this.account.key,
        key_type: this.account.keyType,
        bank_name: this.account.bankName,
        beneficiary_name: this.account.beneficiaryName,
        copy_paste_code: cob.pixCopiaECola ?? '',
      },
    };
  }

  stablecoinInstructionsFor(request: StablecoinDepositInstructionsRequest): SenderDepositInstructions {
    return this.others.stablecoinInstructionsFor(request);
  }

  /**
   * Sandbox only: a payer pays the charge of `reference` at the bank simulator, which notifies the webhook after
   * `notifyAfterMs` (twice with `twice`). Answers the payment's endToEndId and time (the deposit's id at the bank).
   */
  async payInSandbox(
    reference: string,
    amount: Money,
    payerName: string | null,
    notification: { notifyAfterMs: number; twice: boolean },
  ): Promise<{ endToEndId: string; horario: string }> {
    const paid = (await this.client.simulatorScenario('/payments', {
      txid: pixTxidFor(reference),
      valor: amount.toString(),
      ...(payerName ? { nomePagador: payerName } : {}),
      delayMs: notification.notifyAfterMs,
      scenarios: notification.twice ? ['duplicate_notification'] : [],
      again: true,
    })) as { endToEndId: string; horario: string };
    return { endToEndId: paid.endToEndId, horario: paid.horario };
  }

  /**
   * PUT /webhook/{chave}: the bank posts each payment to our key to `<url>/pix`. Asked at the API's start, within
   * `attempts` tries `waitMs` apart (the bank, or the simulator, may be starting too); false when none succeeded.
   */
  async registerWebhook(url: string, attempts = 10, waitMs = 2_000): Promise<boolean> {
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      try {
        await this.client.registerWebhook(this.account.key, url);
        return true;
      } catch (error) {
        if (attempt === attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
    return false;
  }

  /** PUT /cob/{txid}; a txid the bank already has (our retry) is read back, provided it is the same charge. */
  private async chargeFor(request: DepositInstructionsRequest): Promise<Cob> {
    const txid = pixTxidFor(request.reference);
    const expiracao = Math.max(60, Math.floor((request.deadline.getTime() - Date.now()) / 1000));
    const body = { calendario: { expiracao }, valor: { original: request.amount.toString() }, chave: this.account.key };
    try {
      return await this.client.createCob(txid, body);
    } catch (error) {
      if (!(error instanceof ApiPixProblem) || !error.violacoes.some((v) => v.propriedade === 'txid')) throw error;
      const existing = await this.client.getCob(txid);
      if (existing.valor.original !== body.valor.original || existing.chave !== body.chave) throw error;
      return existing;
    }
  }
}

/** One payment of a `pix` webhook body ({ pix: [...] }) as the service's deposit; null when it names no charge of ours. */
export function depositsFromPixWebhook(body: unknown): {
  deposits: IncomingDeposit[];
  ignored: Array<{ endToEndId: string; why: string }>;
} {
  const items = (body as { pix?: unknown })?.pix;
  if (!Array.isArray(items)) throw new Error('a pix webhook body is { pix: [...] }');
  const deposits: IncomingDeposit[] = [];
  const ignored: Array<{ endToEndId: string; why: string }> = [];
  for (const item of items as Array<Record<string, unknown>>) {
    const endToEndId = typeof item.endToEndId === 'string' ? item.endToEndId : '';
    const reference = typeof item.txid === 'string' ? referenceOfTxid(item.txid) : null;
    if (!/^[EeDd][0-9]{8}[0-9]{8}[0-9]{4}[a-zA-Z0-9]{11}$/.test(endToEndId) || typeof item.valor !== 'string') {
      ignored.push({ endToEndId, why: 'not a pix payment (endToEndId and valor)' });
      continue;
    }
    if (!reference) {
      ignored.push({ endToEndId, why: 'no txid of a charge of this service' });
      continue;
    }
    const pagador = item.pagador as { nome?: unknown } | undefined;
    deposits.push({
      provider: API_PIX_PROVIDER,
      providerReference: endToEndId,
      reference,
      amount: Money.parse('BRL', item.valor),
      senderName: typeof pagador?.nome === 'string' ? pagador.nome : null,
      receivedAt: typeof item.horario === 'string' ? new Date(item.horario) : new Date(),
    });
  }
  return { deposits, ignored };
}

export type PixReturnOutcome =
  | { status: 'completed'; providerReference: string }
  | { status: 'pending'; providerReference: string }
  | { status: 'refused'; providerReference: string; reason: string };

/**
 * A return's id at the bank from our idempotency key and the round (1-35 letters and digits): the same key and round,
 * the same id; an operator's retry (the next round) asks a new return, since a refused one stays refused at the bank.
 */
export function returnIdFor(idempotencyKey: string, round = 0): string {
  const suffix = round === 0 ? '' : `R${round}`;
  return idempotencyKey.replace(/[^a-zA-Z0-9]/g, '').slice(-(35 - suffix.length)) + suffix;
}

/** Returns a received Pix (all or part) through devolucao, and tells its status. */
export class PixReturns {
  constructor(private readonly client: ApiPixClient) {}

  async request(endToEndId: string, idempotencyKey: string, amount: Money, round = 0): Promise<PixReturnOutcome> {
    const id = returnIdFor(idempotencyKey, round);
    const devolucao = await this.client.requestReturn(endToEndId, id, amount.toString());
    return outcomeOf(devolucao.status, devolucao.rtrId, devolucao.motivo);
  }

  async status(endToEndId: string, idempotencyKey: string, round = 0): Promise<PixReturnOutcome | null> {
    try {
      const devolucao = await this.client.getReturn(endToEndId, returnIdFor(idempotencyKey, round));
      return outcomeOf(devolucao.status, devolucao.rtrId, devolucao.motivo);
    } catch (error) {
      if (error instanceof ApiPixProblem && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * What the rounds up to `round` of this key made at the bank, read from the payment (GET /pix/{e2eid}): a return
   * DEVOLVIDO (completed) or still EM_PROCESSAMENTO (pending) wins over refused ones; null when none was asked.
   */
  async earlier(endToEndId: string, idempotencyKey: string, round: number): Promise<PixReturnOutcome | null> {
    const ids = new Set(Array.from({ length: round + 1 }, (_, index) => returnIdFor(idempotencyKey, index)));
    let pix;
    try {
      pix = await this.client.getPix(endToEndId);
    } catch (error) {
      if (error instanceof ApiPixProblem && error.status === 404) return null;
      throw error;
    }
    const ours = (pix.devolucoes ?? []).filter((devolucao) => ids.has(devolucao.id));
    const pick =
      ours.find((devolucao) => devolucao.status === 'DEVOLVIDO') ??
      ours.find((devolucao) => devolucao.status === 'EM_PROCESSAMENTO') ??
      ours.at(-1);
    return pick ? outcomeOf(pick.status, pick.rtrId, pick.motivo) : null;
  }
}

function outcomeOf(status: DevolucaoStatus, rtrId: string, motivo: string | undefined): PixReturnOutcome {
  if (status === 'DEVOLVIDO') return { status: 'completed', providerReference: rtrId };
  if (status === 'NAO_REALIZADO') return { status: 'refused', providerReference: rtrId, reason: motivo ?? 'refused' };
  return { status: 'pending', providerReference: rtrId };
}
