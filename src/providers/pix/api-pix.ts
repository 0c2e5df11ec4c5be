// A client of a bank's API Pix (BACEN's standard, v2: test/fixtures/api-pix/ keeps the parts used and names their
// source): OAuth2 client credentials at the bank's token endpoint, every call over mutual TLS with the certificate the
// bank issued (node's https; plain http only for a simulator configured without TLS), bounded timeouts and no retry
// here (callers own their retries: the activities' policies, or the partner's request).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { ProviderUnavailableError } from '../unavailable';

export interface ApiPixConfig {
  /** The bank's API Pix base URL, e.g. https://pix.bank.example/api (the simulator's is <url>/pix). */
  baseUrl: string;
  /** The token endpoint (defaults to <baseUrl>/oauth/token). */
  tokenUrl?: string;
  clientId: string;
  clientSecret: string;
  /** PEM files of the client certificate and key the bank issued, and the CA that signs the bank's server. */
  tls?: { certFile: string; keyFile: string; caFile?: string };
  timeoutMs?: number;
}

export const API_PIX_SCOPES = 'cob.write cob.read pix.read pix.write webhook.write webhook.read';

/** The bank answered with an API Pix problem (RFC 7807): a refusal, not an outage. */
export class ApiPixProblem extends Error {
  override name = 'ApiPixProblem';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly detail: string,
    readonly violacoes: Array<{ razao: string; propriedade: string }> = [],
  ) {
    super(`API Pix ${status} ${type}: ${detail}`);
  }
}

/** The bank could not answer (network, timeout, 5xx): whether the operation happened is unknown. */
export class ApiPixUnavailableError extends ProviderUnavailableError {
  override name = 'ApiPixUnavailableError';
}

export interface CobRequest {
  calendario: { expiracao: number };
  devedor?: { cpf: string; nome: string } | { cnpj: string; nome: string };
  valor: { original: string };
  chave: string;
  solicitacaoPagador?: string;
}

export type CobStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';

export interface Cob extends CobRequest {
  txid: string;
  revisao: number;
  status: CobStatus;
  location: string;
  pixCopiaECola?: string;
  calendario: { criacao: string; expiracao: number };
  pix?: PixRecebido[];
}

export type DevolucaoStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA';
  horario: { solicitacao: string; liquidacao?: string };
  status: DevolucaoStatus;
  motivo?: string;
}

export interface PixRecebido {
  endToEndId: string;
  txid?: string;
  valor: string;
  chave?: string;
  horario: string;
  infoPagador?: string;
  pagador?: { nome?: string; cpf?: string; cnpj?: string };
  devolucoes?: Devolucao[];
}

export interface EnvioPix {
  idEnvio: string;
  e2eId: string;
  valor: string;
  status: 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';
}

export class ApiPixClient {
  private token: { value: string; expiresAt: number } | null = null;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;

  constructor(private readonly config: ApiPixConfig) {
    this.timeoutMs = config.timeoutMs ?? 10_000;
    this.agent = config.tls
      ? new https.Agent({
          cert: readFileSync(config.tls.certFile),
          key: readFileSync(config.tls.keyFile),
          ...(config.tls.caFile ? { ca: readFileSync(config.tls.caFile) } : {}),
          keepAlive: true,
        })
      : new http.Agent({ keepAlive: true });
  }

  /** PUT /cob/{txid}. */
  createCob(txid: string, request: CobRequest): Promise<Cob> {
    return this.call('PUT', `/cob/${encodeURIComponent(txid)}`, request) as Promise<Cob>;
  }

  getCob(txid: string): Promise<Cob> {
    return this.call('GET', `/cob/${encodeURIComponent(txid)}`) as Promise<Cob>;
  }

  /** PUT /webhook/{chave}: the bank then posts each payment to `<webhookUrl>/pix`. */
  async registerWebhook(chave: string, webhookUrl: string): Promise<void> {
    await this.call('PUT', `/webhook/${encodeURIComponent(chave)}`, { webhookUrl });
  }

  getPix(endToEndId: string): Promise<PixRecebido> {
    return this.call('GET', `/pix/${encodeURIComponent(endToEndId)}`) as Promise<PixRecebido>;
  }

  /** PUT /pix/{e2eid}/devolucao/{id}: the id is ours, so asking again names the same return. */
  requestReturn(endToEndId: string, id: string, valor: string, descricao?: string): Promise<Devolucao> {
    return this.call('PUT', `/pix/${encodeURIComponent(endToEndId)}/devolucao/${encodeURIComponent(id)}`, {
      valor,
      natureza: 'ORIGINAL',
      ...(descricao ? { descricao } : {}),
    }) as Promise<Devolucao>;
  }

  getReturn(endToEndId: string, id: string): Promise<Devolucao> {
    return this.call(
      'GET',
      `/pix/${encodeURIComponent(endToEndId)}/devolucao/${encodeURIComponent(id)}`,
    ) as Promise<Devolucao>;
  }

  /** The bank's transfer (payout) extension, PUT /gn/pix/{idEnvio}: the idEnvio is the idempotency reference. */
  sendPix(idEnvio: string, valor: string, chave: string, pagadorChave: string): Promise<EnvioPix> {
    return this.call('PUT', `/gn/pix/${encodeURIComponent(idEnvio)}`, {
      valor,
      pagador: { chave: pagadorChave },
      favorecido: { chave },
    }) as Promise<EnvioPix>;
  }

  getSent(idEnvio: string): Promise<EnvioPix> {
    return this.call('GET', `/gn/pix/enviados/id-envio/${encodeURIComponent(idEnvio)}`) as Promise<EnvioPix>;
  }

  /** The bank's DICT lookup: the key's holder, or null when the key does not exist. */
  async dictLookup(chave: string): Promise<{ nome: string; ispb: string } | null> {
    try {
      return (await this.call('GET', `/gn/dict/${encodeURIComponent(chave)}`)) as { nome: string; ispb: string };
    } catch (error) {
      if (error instanceof ApiPixProblem && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * Sandbox only: a scenario control of the bank simulator (`<baseUrl>/_scenarios/...`, no OAuth), through which the
   * partners' `simulate` values reach it. A real bank has no such path; nothing calls this outside the sandbox.
   */
  async simulatorScenario(path: string, body: object): Promise<unknown> {
    const response = await this.request(
      'POST',
      `${this.config.baseUrl}/_scenarios${path}`,
      { 'content-type': 'application/json' },
      JSON.stringify(body),
    );
    if (response.status >= 300)
      throw new ApiPixUnavailableError(`simulator scenario ${path} answered ${response.status}`);
    return response.body;
  }

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now() + 30_000) return this.token.value;
    const basic = Buffer.from(`${this.config.clientId}:${this.config.clientSecret}`).toString('base64');
    const response = await this.request(
      'POST',
      this.config.tokenUrl ?? `${this.config.baseUrl}/oauth/token`,
      { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ grant_type: 'client_credentials', scope: API_PIX_SCOPES }).toString(),
    );
    const body = response.body as { access_token?: string; expires_in?: number } | null;
    if (response.status !== 200 || !body?.access_token) {
      throw new ApiPixUnavailableError(`API Pix token endpoint answered ${response.status}`);
    }
    this.token = { value: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 300) * 1000 };
    return this.token.value;
  }

  private async call(method: string, path: string, body?: object): Promise<unknown> {
    const send = async () =>
      this.request(
        method,
        `${this.config.baseUrl}${path}`,
        { authorization: `Bearer ${await this.accessToken()}`, 'content-type': 'application/json' },
        body === undefined ? undefined : JSON.stringify(body),
      );
    let response = await send();
    // A token the bank forgot (its restart) is asked for once more, never in a loop.
    if (response.status === 401 && this.token) {
      this.token = null;
      response = await send();
    }
    if (response.status >= 500 || response.status === 429) {
      throw new ApiPixUnavailableError(`API Pix ${method} ${path} answered ${response.status}`);
    }
    if (response.status >= 400) {
      const problem = (response.body ?? {}) as { type?: string; detail?: string; violacoes?: [] };
      throw new ApiPixProblem(
        response.status,
        (problem.type ?? 'unknown').split('/').pop() ?? 'unknown',
        problem.detail ?? '',
        problem.violacoes ?? [],
      );
    }
    return response.body;
  }

  private request(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<{ status: number; body: unknown }> {
    const target = new URL(url);
    const transport = target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(
        target,
        {
          method,
          agent: this.agent,
          headers: { accept: 'application/json', ...headers },
          timeout: this.timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = null;
            try {
              parsed = text ? JSON.parse(text) : null;
            } catch {
              parsed = null;
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
          response.on('error', (error) => reject(new ApiPixUnavailableError(`API Pix: ${error.message}`)));
        },
      );
      request.on('timeout', () => request.destroy(new Error(`timed out after ${this.timeoutMs} ms`)));
      request.on('error', (error) => reject(new ApiPixUnavailableError(`API Pix ${method} ${url}: ${error.message}`)));
      if (body !== undefined) request.write(body);
      request.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
