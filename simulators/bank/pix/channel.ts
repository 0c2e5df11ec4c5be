// A bank's API Pix (BACEN's standard, v2.9.0; test/fixtures/api-pix/ names the version and the parts used): charges
// (`cob`, PUT/GET /cob/{txid}), the webhook registered per key (PUT /webhook/{chave}) that receives
// `POST <webhookUrl>/pix` for each payment, returns (`devolucao`, PUT/GET /pix/{e2eid}/devolucao/{id}), OAuth2
// client credentials (POST /oauth/token) and, when the process serves TLS, mutual TLS (a client without a certificate
// of the dev CA is refused before any route). Payouts follow the bank extension `PUT /gn/pix/{idEnvio}` (API Pix
// standardises collections only; docs/pix.md), and DICT lookups `GET /gn/dict/{chave}`.
// Scenario controls (POST /pix/_scenarios/payments) make a payer pay a charge: late, notified twice, or with its
// returns refused.
import Router from '@koa/router';
import { json as parseJson } from 'co-body';
import Decimal from 'decimal.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { Context, Next } from 'koa';
import type { BankChannel, BankSimulatorOptions } from '../channel';
import { JsonState } from '../state';

/** The simulated bank's ISPB (the first 8 digits of every endToEndId it makes). */
export const SIMULATED_ISPB = '99999004';
export const pixScopes = ['cob.write', 'cob.read', 'pix.read', 'pix.write', 'webhook.write', 'webhook.read'] as const;
export const pixScenarios = ['late_payment', 'duplicate_notification', 'return_refused'] as const;
export type PixScenario = (typeof pixScenarios)[number];

export interface PixChannelOptions extends BankSimulatorOptions {
  /** The OAuth2 client the service is registered as (PIX_CLIENT_ID / PIX_CLIENT_SECRET in the service). */
  clientId?: string;
  clientSecret?: string;
  /** How long a late payment waits before its webhook (ms); a scenario may say otherwise. */
  lateDelayMs?: number;
  /** How long a return stays EM_PROCESSAMENTO (ms). */
  returnSettleMs?: number;
}

export const DEV_PIX_CLIENT = { id: 'payments-api-dev', secret: 'dev-pix-secret' } as const;

interface Cob {
  txid: string;
  revisao: number;
  status: 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
  calendario: { criacao: string; expiracao: number };
  devedor?: { cpf?: string; cnpj?: string; nome: string };
  valor: { original: string };
  chave: string;
  solicitacaoPagador?: string;
  locId: number;
  pixCopiaECola: string;
}

interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza: 'ORIGINAL' | 'RETIRADA';
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  motivo?: string;
  settlesAt: number;
  refused: boolean;
}

interface Pix {
  endToEndId: string;
  txid: string;
  valor: string;
  chave: string;
  horario: string;
  infoPagador?: string;
  pagador: { nome: string; cpf: string };
  devolucoes: Devolucao[];
  scenarios: PixScenario[];
}

interface Envio {
  idEnvio: string;
  e2eId: string;
  valor: string;
  chave: string;
  status: 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';
  horario: string;
  requests: number;
}

interface PixState {
  cobs: Record<string, Cob>;
  pix: Record<string, Pix>;
  webhooks: Record<string, { webhookUrl: string; criacao: string }>;
  envios: Record<string, Envio>;
  nextLoc: number;
  /** Webhook deliveries still due (late payments), so a restart sends them. */
  pending: Array<{ endToEndId: string; dueAt: number; copies: number }>;
  deliveries: Array<{ endToEndId: string; url: string; status: number | null; at: string }>;
}

const TXID = /^[a-zA-Z0-9]{26,35}$/;
const AMOUNT = /^\d{1,10}\.\d{2}$/;
const RETURN_ID = /^[a-zA-Z0-9]{1,35}$/;
const ERROR_BASE = 'https://pix.bcb.gov.br/api/v2/error';

/** API Pix errors are RFC 7807 problems whose type names the error (e.g. CobOperacaoInvalida). */
function problem(ctx: Context, status: number, type: string, title: string, detail: string, violacoes?: object[]) {
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = { type: `${ERROR_BASE}/${type}`, title, status, detail, ...(violacoes ? { violacoes } : {}) };
}

export function createPixChannel(options: PixChannelOptions): BankChannel {
  const state = new JsonState<PixState>(options.stateDir, 'pix', () => ({
    cobs: {},
    pix: {},
    webhooks: {},
    envios: {},
    nextLoc: 1,
    pending: [],
    deliveries: [],
  }));
  const clientId = options.clientId ?? process.env.PIX_SIMULATOR_CLIENT_ID ?? DEV_PIX_CLIENT.id;
  const clientSecret = options.clientSecret ?? process.env.PIX_SIMULATOR_CLIENT_SECRET ?? DEV_PIX_CLIENT.secret;
  const lateDelayMs = options.lateDelayMs ?? 5_000;
  const returnSettleMs = options.returnSettleMs ?? 500;
  const tokens = new Map<string, { scopes: Set<string>; expiresAt: number }>();
  const router = new Router();
  let timer: NodeJS.Timeout | null = null;

  const locationOf = (cob: Cob) => `${new URL(options.publicUrl).host}/pix/qr/v2/${cob.locId}`;

  // A TLS connection must carry a client certificate the dev CA signed (mutual TLS); plain HTTP is the dev stack's
  // simulator, where the service's client is configured without TLS.
  router.use(async (ctx, next) => {
    const socket = ctx.req.socket as TLSSocket;
    if (socket.encrypted && !socket.authorized) {
      return problem(ctx, 401, 'AcessoNegado', 'Acesso negado.', 'Certificado de cliente ausente ou inválido.');
    }
    return next();
  });

  router.post('/oauth/token', async (ctx) => {
    const header = ctx.get('authorization');
    const basic = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
    const body = await readBody(ctx, 'form');
    if (!sameText(basic, `${clientId}:${clientSecret}`)) {
      ctx.status = 401;
      ctx.body = { error: 'invalid_client' };
      return;
    }
    if (body.grant_type !== 'client_credentials') {
      ctx.status = 400;
      ctx.body = { error: 'unsupported_grant_type' };
      return;
    }
    const asked = typeof body.scope === 'string' && body.scope.trim() ? body.scope.trim().split(/\s+/) : [...pixScopes];
    const unknown = asked.filter((scope) => !(pixScopes as readonly string[]).includes(scope));
    if (unknown.length > 0) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_scope' };
      return;
    }
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { scopes: new Set(asked), expiresAt: Date.now() + 3_600_000 });
    ctx.body = { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: asked.join(' ') };
  });

  const requireScope = (scope: string) => async (ctx: Context, next: Next) => {
    const header = ctx.get('authorization');
    const grant = header.startsWith('Bearer ') ? tokens.get(header.slice(7)) : undefined;
    if (!grant || grant.expiresAt < Date.now()) {
      return problem(ctx, 401, 'AcessoNegado', 'Acesso negado.', 'Token de acesso ausente, inválido ou expirado.');
    }
    if (!grant.scopes.has(scope)) {
      return problem(ctx, 403, 'AcessoNegado', 'Acesso negado.', `O escopo ${scope} é necessário.`);
    }
    return next();
  };

  const cobResource = (cob: Cob) => ({
    calendario: cob.calendario,
    txid: cob.txid,
    revisao: cob.revisao,
    loc: { id: cob.locId, location: locationOf(cob), tipoCob: 'cob' },
    location: locationOf(cob),
    status: cob.status,
    ...(cob.devedor ? { devedor: cob.devedor } : {}),
    valor: cob.valor,
    chave: cob.chave,
    ...(cob.solicitacaoPagador ? { solicitacaoPagador: cob.solicitacaoPagador } : {}),
    pixCopiaECola: cob.pixCopiaECola,
    ...(cob.status === 'CONCLUIDA'
      ? {
          pix: Object.values(state.data.pix)
            .filter((p) => p.txid === cob.txid)
            .map(pixResource),
        }
      : {}),
  });

  router.put('/cob/:txid', requireScope('cob.write'), async (ctx) => {
    const txid = ctx.params.txid!;
    const body = (await readBody(ctx, 'json')) as Record<string, unknown>;
    const violacoes = cobViolations(txid, body);
    if (violacoes.length > 0) {
      return problem(
        ctx,
        400,
        'CobOperacaoInvalida',
        'Cobrança inválida.',
        'A requisição não respeita o schema.',
        violacoes,
      );
    }
    const previous = state.data.cobs[txid];
    // The specification lets PUT replace a charge that is still ATIVA (a revision), never one paid or removed.
    if (previous && previous.status !== 'ATIVA') {
      return problem(ctx, 400, 'CobOperacaoInvalida', 'Cobrança inválida.', `A cobrança ${txid} já existe.`, [
        {
          razao: 'A cobrança já existe, não está no status ATIVA, e a presente requisição busca alterá-la.',
          propriedade: 'txid',
        },
      ]);
    }
    const calendario = (body.calendario ?? {}) as { expiracao?: number };
    const locId = previous?.locId ?? state.data.nextLoc++;
    const cob: Cob = {
      txid,
      revisao: previous ? previous.revisao + 1 : 0,
      status: 'ATIVA',
      calendario: { criacao: new Date().toISOString(), expiracao: calendario.expiracao ?? 86_400 },
      ...(body.devedor ? { devedor: body.devedor as Cob['devedor'] } : {}),
      valor: { original: (body.valor as { original: string }).original },
      chave: body.chave as string,
      ...(typeof body.solicitacaoPagador === 'string' ? { solicitacaoPagador: body.solicitacaoPagador } : {}),
      locId,
      pixCopiaECola: '',
    };
    cob.pixCopiaECola = dynamicBrCode(locationOf(cob), 'PAYMENTS SANDBOX LTDA', 'SAO PAULO');
    state.data.cobs[txid] = cob;
    state.save();
    ctx.status = 201;
    ctx.body = cobResource(cob);
  });

  router.get('/cob/:txid', requireScope('cob.read'), (ctx) => {
    const cob = state.data.cobs[ctx.params.txid!];
    if (!cob)
      return problem(ctx, 404, 'CobNaoEncontrado', 'Cobrança não encontrada.', 'Nenhuma cobrança com este txid.');
    ctx.body = cobResource(cob);
  });

  router.patch('/cob/:txid', requireScope('cob.write'), async (ctx) => {
    const cob = state.data.cobs[ctx.params.txid!];
    if (!cob)
      return problem(ctx, 404, 'CobNaoEncontrado', 'Cobrança não encontrada.', 'Nenhuma cobrança com este txid.');
    const body = (await readBody(ctx, 'json')) as { status?: string };
    if (body.status !== 'REMOVIDA_PELO_USUARIO_RECEBEDOR' || cob.status !== 'ATIVA') {
      return problem(ctx, 400, 'CobOperacaoInvalida', 'Cobrança inválida.', 'Só uma cobrança ATIVA pode ser removida.');
    }
    cob.status = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
    cob.revisao += 1;
    state.save();
    ctx.body = cobResource(cob);
  });

  router.put('/webhook/:chave', requireScope('webhook.write'), async (ctx) => {
    const body = (await readBody(ctx, 'json')) as { webhookUrl?: unknown };
    if (typeof body.webhookUrl !== 'string' || !/^https?:\/\//.test(body.webhookUrl)) {
      return problem(ctx, 400, 'WebhookOperacaoInvalida', 'Webhook inválido.', 'webhookUrl é obrigatório.');
    }
    state.data.webhooks[ctx.params.chave!] = { webhookUrl: body.webhookUrl, criacao: new Date().toISOString() };
    state.save();
    ctx.status = 200;
  });

  router.get('/webhook/:chave', requireScope('webhook.read'), (ctx) => {
    const hook = state.data.webhooks[ctx.params.chave!];
    if (!hook) return problem(ctx, 404, 'WebhookNaoEncontrado', 'Webhook não encontrado.', 'Nenhum webhook.');
    ctx.body = { webhookUrl: hook.webhookUrl, chave: ctx.params.chave, criacao: hook.criacao };
  });

  const pixResource = (pix: Pix) => ({
    endToEndId: pix.endToEndId,
    txid: pix.txid,
    valor: pix.valor,
    chave: pix.chave,
    horario: pix.horario,
    ...(pix.infoPagador ? { infoPagador: pix.infoPagador } : {}),
    pagador: pix.pagador,
    devolucoes: pix.devolucoes.map(devolucaoResource),
  });

  const devolucaoResource = (devolucao: Devolucao) => {
    settle(devolucao);
    return {
      id: devolucao.id,
      rtrId: devolucao.rtrId,
      valor: devolucao.valor,
      natureza: devolucao.natureza,
      ...(devolucao.descricao ? { descricao: devolucao.descricao } : {}),
      horario: devolucao.horario,
      status: devolucao.status,
      ...(devolucao.motivo ? { motivo: devolucao.motivo } : {}),
    };
  };

  const settle = (devolucao: Devolucao) => {
    if (devolucao.status !== 'EM_PROCESSAMENTO' || Date.now() < devolucao.settlesAt) return;
    devolucao.status = devolucao.refused ? 'NAO_REALIZADO' : 'DEVOLVIDO';
    if (devolucao.refused)
      devolucao.motivo = 'Devolução recusada pelo participante do pagador (cenário return_refused).';
    else devolucao.horario.liquidacao = new Date().toISOString();
    state.save();
  };

  router.get('/pix/:e2eid', requireScope('pix.read'), (ctx) => {
    const pix = state.data.pix[ctx.params.e2eid!];
    if (!pix) return problem(ctx, 404, 'PixNaoEncontrado', 'Pix não encontrado.', 'Nenhum Pix com este endToEndId.');
    ctx.body = pixResource(pix);
  });

  router.put('/pix/:e2eid/devolucao/:id', requireScope('pix.write'), async (ctx) => {
    const pix = state.data.pix[ctx.params.e2eid!];
    const id = ctx.params.id!;
    if (!pix) return problem(ctx, 404, 'PixNaoEncontrado', 'Pix não encontrado.', 'Nenhum Pix com este endToEndId.');
    if (!RETURN_ID.test(id)) {
      return problem(ctx, 400, 'DevolucaoOperacaoInvalida', 'Devolução inválida.', 'id: 1-35 letras e dígitos.');
    }
    const body = (await readBody(ctx, 'json')) as { valor?: unknown; natureza?: unknown; descricao?: unknown };
    const existing = pix.devolucoes.find((d) => d.id === id);
    // The id is the caller's: asking again with the same id answers the same return, never a second one.
    if (existing) {
      ctx.status = 201;
      ctx.body = devolucaoResource(existing);
      return;
    }
    if (typeof body.valor !== 'string' || !AMOUNT.test(body.valor) || new Decimal(body.valor).lte(0)) {
      return problem(ctx, 400, 'DevolucaoOperacaoInvalida', 'Devolução inválida.', 'valor: decimal com 2 casas.');
    }
    const returned = pix.devolucoes
      .filter((d) => d.status !== 'NAO_REALIZADO')
      .reduce((sum, d) => sum.plus(d.valor), new Decimal(0));
    if (returned.plus(body.valor).gt(pix.valor)) {
      return problem(ctx, 400, 'DevolucaoOperacaoInvalida', 'Devolução inválida.', 'O valor excede o valor do Pix.');
    }
    const natureza = body.natureza === 'RETIRADA' ? 'RETIRADA' : 'ORIGINAL';
    const devolucao: Devolucao = {
      id,
      rtrId: `D${SIMULATED_ISPB}${compactTime(new Date())}${randomAlnum(11)}`,
      valor: body.valor,
      natureza,
      ...(typeof body.descricao === 'string' ? { descricao: body.descricao } : {}),
      horario: { solicitacao: new Date().toISOString() },
      status: 'EM_PROCESSAMENTO',
      settlesAt: Date.now() + returnSettleMs,
      refused: pix.scenarios.includes('return_refused'),
    };
    // The payer's bank refuses one return: a later one (an operator's retry) goes through.
    pix.scenarios = pix.scenarios.filter((scenario) => scenario !== 'return_refused');
    pix.devolucoes.push(devolucao);
    state.save();
    ctx.status = 201;
    ctx.body = devolucaoResource(devolucao);
  });

  router.get('/pix/:e2eid/devolucao/:id', requireScope('pix.read'), (ctx) => {
    const devolucao = state.data.pix[ctx.params.e2eid!]?.devolucoes.find((d) => d.id === ctx.params.id);
    if (!devolucao) return problem(ctx, 404, 'DevolucaoNaoEncontrada', 'Devolução não encontrada.', 'Nenhuma.');
    ctx.body = devolucaoResource(devolucao);
  });

  // Payout (bank extension): the idEnvio is the caller's idempotency reference; the same idEnvio answers the first
  // send. Keys the directory does not know are refused (NAO_REALIZADO), as the SPI would.
  router.put('/gn/pix/:idEnvio', requireScope('pix.write'), async (ctx) => {
    const idEnvio = ctx.params.idEnvio!;
    if (!/^[a-zA-Z0-9]{1,35}$/.test(idEnvio)) {
      return problem(ctx, 400, 'EnvioOperacaoInvalida', 'Envio inválido.', 'idEnvio: 1-35 letras e dígitos.');
    }
    const body = (await readBody(ctx, 'json')) as { valor?: unknown; favorecido?: { chave?: unknown } };
    const existing = state.data.envios[idEnvio];
    if (existing) {
      existing.requests += 1;
      state.save();
      ctx.status = 201;
      ctx.body = envioResource(existing);
      return;
    }
    const chave = body.favorecido?.chave;
    if (typeof body.valor !== 'string' || !AMOUNT.test(body.valor) || typeof chave !== 'string' || !chave) {
      return problem(
        ctx,
        400,
        'EnvioOperacaoInvalida',
        'Envio inválido.',
        'valor e favorecido.chave são obrigatórios.',
      );
    }
    const envio: Envio = {
      idEnvio,
      e2eId: `E${SIMULATED_ISPB}${compactTime(new Date())}${randomAlnum(11)}`,
      valor: body.valor,
      chave,
      status: dictOwner(chave) ? 'REALIZADO' : 'NAO_REALIZADO',
      horario: new Date().toISOString(),
      requests: 1,
    };
    state.data.envios[idEnvio] = envio;
    state.save();
    ctx.status = 201;
    ctx.body = envioResource(envio);
  });

  router.get('/gn/pix/enviados/id-envio/:idEnvio', requireScope('pix.read'), (ctx) => {
    const envio = state.data.envios[ctx.params.idEnvio!];
    if (!envio) return problem(ctx, 404, 'EnvioNaoEncontrado', 'Envio não encontrado.', 'Nenhum envio.');
    ctx.body = envioResource(envio);
  });

  router.get('/gn/dict/:chave', requireScope('pix.read'), (ctx) => {
    const owner = dictOwner(ctx.params.chave!);
    if (!owner) return problem(ctx, 404, 'ChaveNaoEncontrada', 'Chave não encontrada.', 'A chave não existe no DICT.');
    ctx.body = { chave: ctx.params.chave, ...owner };
  });

  // ---- scenario controls (no OAuth: the simulator's operator, i.e. the sandbox and the tests) ----

  /** A payer pays a charge: `valor` (default the charge's), `scenarios` as listed in pixScenarios. */
  router.post('/_scenarios/payments', async (ctx) => {
    const body = (await readBody(ctx, 'json')) as {
      txid?: string;
      valor?: string;
      nomePagador?: string;
      infoPagador?: string;
      scenarios?: string[];
      delayMs?: number;
      again?: boolean;
    };
    const cob = body.txid ? state.data.cobs[body.txid] : undefined;
    if (!cob)
      return problem(ctx, 404, 'CobNaoEncontrado', 'Cobrança não encontrada.', 'Nenhuma cobrança com este txid.');
    // A charge already paid is paid again only when asked (`again`): a payer's app would refuse it, but the sandbox
    // stands a second credit with the same reference for it (the service records it late and returns it).
    if (cob.status !== 'ATIVA' && !(cob.status === 'CONCLUIDA' && body.again === true)) {
      return problem(ctx, 409, 'CobOperacaoInvalida', 'Cobrança inválida.', `A cobrança está ${cob.status}.`);
    }
    const scenarios = (body.scenarios ?? []).filter((s): s is PixScenario =>
      (pixScenarios as readonly string[]).includes(s),
    );
    const pix: Pix = {
      endToEndId: `E${SIMULATED_ISPB}${compactTime(new Date())}${randomAlnum(11)}`,
      txid: cob.txid,
      valor: body.valor ?? cob.valor.original,
      chave: cob.chave,
      horario: new Date().toISOString(),
      ...(body.infoPagador ? { infoPagador: body.infoPagador } : {}),
      pagador: { nome: body.nomePagador ?? 'Pagador Simulado', cpf: '12345678909' },
      devolucoes: [],
      scenarios,
    };
    if (cob.status !== 'CONCLUIDA') {
      cob.status = 'CONCLUIDA';
      cob.revisao += 1;
    }
    state.data.pix[pix.endToEndId] = pix;
    const late = scenarios.includes('late_payment');
    state.data.pending.push({
      endToEndId: pix.endToEndId,
      // A delay given applies to any payment (the sandbox records the deposit first, then the bank notifies).
      dueAt: Date.now() + (body.delayMs ?? (late ? lateDelayMs : 0)),
      copies: scenarios.includes('duplicate_notification') ? 2 : 1,
    });
    state.save();
    void deliverDue();
    ctx.status = 201;
    ctx.body = pixResource(pix);
  });

  /** Scenarios for a payment already made (the sandbox's `simulate` values): e.g. its next return refused. */
  router.post('/_scenarios/pix/:e2eid', async (ctx) => {
    const pix = state.data.pix[ctx.params.e2eid!];
    if (!pix) return problem(ctx, 404, 'PixNaoEncontrado', 'Pix não encontrado.', 'Nenhum Pix com este endToEndId.');
    const body = (await readBody(ctx, 'json')) as { scenarios?: string[] };
    for (const scenario of body.scenarios ?? []) {
      if ((pixScenarios as readonly string[]).includes(scenario) && !pix.scenarios.includes(scenario as PixScenario)) {
        pix.scenarios.push(scenario as PixScenario);
      }
    }
    state.save();
    ctx.body = { endToEndId: pix.endToEndId, scenarios: pix.scenarios };
  });

  /** What the simulator delivered to webhooks (tests and chaos read it). */
  router.get('/_scenarios/deliveries', (ctx) => {
    ctx.body = { deliveries: state.data.deliveries, pending: state.data.pending };
  });

  router.get('/_scenarios/envios/:idEnvio', (ctx) => {
    const envio = state.data.envios[ctx.params.idEnvio!];
    if (!envio) return problem(ctx, 404, 'EnvioNaoEncontrado', 'Envio não encontrado.', 'Nenhum envio.');
    ctx.body = { ...envioResource(envio), requests: envio.requests };
  });

  /** The delivery round under way, if any: one at a time, and `stop` waits for it (it saves the state when it ends). */
  let round: Promise<void> | null = null;
  const deliverDue = (): Promise<void> =>
    (round ??= deliverRound().finally(() => {
      round = null;
    }));
  const deliverRound = async (): Promise<void> => {
    const now = Date.now();
    for (const due of state.data.pending.filter((p) => p.dueAt <= now)) {
      const pix = state.data.pix[due.endToEndId];
      const hook = pix ? state.data.webhooks[pix.chave] : undefined;
      if (!pix || !hook) {
        state.data.pending = state.data.pending.filter((p) => p !== due);
        continue;
      }
      const url = `${hook.webhookUrl.replace(/\/$/, '')}/pix`;
      let delivered = true;
      for (let copy = 0; copy < due.copies; copy += 1) {
        const status = await postWebhook(url, { pix: [pixResource(pix)] });
        state.data.deliveries.push({ endToEndId: pix.endToEndId, url, status, at: new Date().toISOString() });
        if (status === null || status >= 300) delivered = false;
      }
      // A PSP retries a refused notification later, backing off (1 s doubling to 30 s); bounded: after 10 rounds
      // (about 2.5 minutes) it gives up (GET /pix/{e2eid} still finds the payment).
      const rounds = Math.floor(
        state.data.deliveries.filter((d) => d.endToEndId === pix.endToEndId).length / due.copies,
      );
      if (delivered || rounds >= 10) state.data.pending = state.data.pending.filter((p) => p !== due);
      else due.dueAt = Date.now() + Math.min(30_000, 1_000 * 2 ** Math.max(0, rounds - 1));
    }
    state.save();
  };

  return {
    name: 'pix',
    routes: router,
    start() {
      timer = setInterval(() => void deliverDue(), 250);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await round;
    },
  };
}

const envioResource = (envio: Envio) => ({
  idEnvio: envio.idEnvio,
  e2eId: envio.e2eId,
  valor: envio.valor,
  horario: { solicitacao: envio.horario },
  status: envio.status,
  favorecido: { chave: envio.chave },
});

async function postWebhook(url: string, body: object): Promise<number | null> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    return response.status;
  } catch {
    return null;
  }
}

function cobViolations(txid: string, body: Record<string, unknown>): Array<{ razao: string; propriedade: string }> {
  const out: Array<{ razao: string; propriedade: string }> = [];
  if (!TXID.test(txid)) out.push({ razao: 'O txid deve ter de 26 a 35 letras e dígitos.', propriedade: 'txid' });
  const valor = body.valor as { original?: unknown } | undefined;
  if (typeof valor?.original !== 'string' || !AMOUNT.test(valor.original) || new Decimal(valor.original).lte(0)) {
    out.push({ razao: 'valor.original é um decimal positivo com 2 casas.', propriedade: 'valor.original' });
  }
  if (typeof body.chave !== 'string' || body.chave.length === 0 || body.chave.length > 77) {
    out.push({ razao: 'chave é obrigatória (até 77 caracteres).', propriedade: 'chave' });
  }
  const calendario = body.calendario as { expiracao?: unknown } | undefined;
  if (
    calendario?.expiracao !== undefined &&
    !(Number.isInteger(calendario.expiracao) && Number(calendario.expiracao) > 0)
  ) {
    out.push({ razao: 'calendario.expiracao é um inteiro positivo (segundos).', propriedade: 'calendario.expiracao' });
  }
  const devedor = body.devedor as { cpf?: unknown; cnpj?: unknown; nome?: unknown } | undefined;
  if (
    devedor !== undefined &&
    (typeof devedor.nome !== 'string' || (devedor.cpf === undefined) === (devedor.cnpj === undefined))
  ) {
    out.push({ razao: 'devedor tem nome e um de cpf ou cnpj.', propriedade: 'devedor' });
  }
  return out;
}

/** The simulated DICT: every key exists but those starting with `00000000` and emails at unknown.example. */
function dictOwner(chave: string): { nome: string; ispb: string } | null {
  if (chave.startsWith('00000000') || chave.startsWith('+5511900000000') || chave.endsWith('@unknown.example')) {
    return null;
  }
  const seed = createHash('sha256').update(chave).digest();
  const names = ['Ana Silva', 'Bruno Santos', 'Carla Oliveira', 'Diego Souza', 'Elisa Pereira', 'Fabio Costa'];
  return { nome: names[seed[0]! % names.length]!, ispb: '00000000' };
}

function compactTime(date: Date): string {
  return date.toISOString().slice(0, 16).replace(/[-T:]/g, '');
}

function randomAlnum(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  return [...bytes].map((byte) => alphabet[byte % alphabet.length]).join('');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

async function readBody(ctx: Context, kind: 'json' | 'form'): Promise<Record<string, unknown>> {
  try {
    if (kind === 'form') {
      const text = await new Promise<string>((resolve, reject) => {
        let data = '';
        ctx.req.setEncoding('utf8');
        ctx.req
          .on('data', (chunk: string) => (data += chunk))
          .on('end', () => resolve(data))
          .on('error', reject);
      });
      return Object.fromEntries(new URLSearchParams(text));
    }
    return ((await parseJson(ctx.req, { limit: '64kb' })) ?? {}) as Record<string, unknown>;
  } catch {
    return {};
  }
}

// ---- BR Code of a dynamic charge (EMV MPM): the payer's app fetches the charge from the location (field 26/25) ----

function emv(id: string, value: string): string {
  return `${id}${value.length.toString().padStart(2, '0')}${value}`;
}

function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** Point of initiation 12 (single use), merchant account with the location URL, txid `***` (the charge names it). */
export function dynamicBrCode(location: string, merchantName: string, city: string): string {
  const payload =
    emv('00', '01') +
    emv('01', '12') +
    emv('26', emv('00', 'br.gov.bcb.pix') + emv('25', location)) +
    emv('52', '0000') +
    emv('53', '986') +
    emv('58', 'BR') +
    emv('59', merchantName.slice(0, 25)) +
    emv('60', city.slice(0, 15)) +
    emv('62', emv('05', '***')) +
    '6304';
  return payload + crc16(payload);
}
