// What `npm run bench` drives: partners reading resources, quoting, and settling fiat to fiat end to end, and the
// references each is compared with (the bare HTTP floor, a no-op workflow start, the engine's ceiling).
import { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { pokeSignal, pokeUpdate, shapedWorkflow, WorkflowShape } from './engine/workflows';
import { closedLoop, expectStatus, HttpClient, Recorder, sideBySide } from './load';
import { BENCH_STABLECOIN_CHAIN, type BenchPartner, type Party } from './partners';
import { ENGINE_TASK_QUEUE } from './stack';
import { pause } from '../lib/wait';

export interface PhaseOptions {
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  rounds: number;
}

/** A resource the GET phase reads: its id and the partner that owns it. */
export interface Readable {
  id: string;
  partner: BenchPartner;
}

const pick = <T>(list: T[], index: number): T => list[index % list.length]!;

/**
 * GET of one resource through the API, against the bare floor (one Prisma findUnique, one pg query) on the same
 * rows, side by side. `path` is the API's GET path of the resource (`/v1/customers/` or `/v1/transactions/`).
 */
export async function readPhase(
  floorUrl: string,
  path: string,
  resources: Readable[],
  options: PhaseOptions,
  cpu: Record<string, () => Record<string, number>> = {},
): Promise<Record<string, Recorder>> {
  const floor = new HttpClient(floorUrl);
  let counter = 0;
  const get = (client: HttpClient, url: (resource: Readable) => string, op: string) => async (recorder: Recorder) => {
    const resource = pick(resources, counter++);
    const response = await recorder.time(op, async () =>
      expectStatus(await client.request('GET', url(resource)), 200, op),
    );
    return void response;
  };
  try {
    return await sideBySide(
      {
        floor_pg: get(floor, (resource) => `/pg/${resource.id}`, 'floor_pg'),
        floor_prisma: get(floor, (resource) => `/prisma/${resource.id}`, 'floor_prisma'),
        api_get: async (recorder) => {
          const resource = pick(resources, counter++);
          await recorder.time('api_get', async () =>
            expectStatus(await resource.partner.api.request('GET', `${path}${resource.id}`), 200, 'api_get'),
          );
        },
      },
      options,
      cpu,
    );
  } finally {
    floor.close();
  }
}

/** The fiat-to-fiat quote of every settlement: 1000.00 BRL on pix -> USDC on ethereum -> MXN on spei. */
export const quoteBody = {
  sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
  stablecoin: { currency: 'USDC', payment_rail: BENCH_STABLECOIN_CHAIN },
  receiver: { currency: 'MXN', payment_rail: 'spei' },
};

/**
 * The settlement through the bank simulator's ISO 20022 channel: 1000.00 EUR on SEPA (credited at the bank, its
 * camt.054 read by the bank-reports workflow) -> USDC on ethereum -> USD by wire (a pain.001, settled at the bank).
 */
export const isoQuoteBody = {
  sender: { currency: 'EUR', payment_rail: 'sepa', amount: '1000.00' },
  stablecoin: { currency: 'USDC', payment_rail: BENCH_STABLECOIN_CHAIN },
  receiver: { currency: 'USD', payment_rail: 'wire' },
};

/** POST /v1/quote/fiat-to-fiat (a write and a workflow start) against a bare route starting a no-op workflow. */
export async function quotePhase(
  floorUrl: string,
  partners: BenchPartner[],
  options: PhaseOptions,
  cpu: Record<string, () => Record<string, number>> = {},
): Promise<Record<string, Recorder>> {
  const floor = new HttpClient(floorUrl);
  let counter = 0;
  try {
    return await sideBySide(
      {
        noop_start: async (recorder) => {
          await recorder.time('noop_start', async () =>
            expectStatus(await floor.request('POST', '/noop-start'), 201, 'noop_start'),
          );
        },
        quote: async (recorder) => {
          const partner = pick(partners, counter++);
          await recorder.time('quote', async () =>
            expectStatus(
              await partner.api.request('POST', '/v1/quote/fiat-to-fiat', { body: quoteBody }),
              201,
              'quote',
            ),
          );
        },
      },
      options,
      cpu,
    );
  } finally {
    floor.close();
  }
}

export interface SettlementOptions {
  settlements: number;
  concurrency: number;
  /** Pause between two GETs of a transaction still settling. */
  pollMs: number;
  /** A settlement not completed after this long counts as an error. */
  timeoutMs: number;
  /** `iso20022`: EUR (SEPA) -> USD (wire) through the bank simulator (isoQuoteBody); default the sandbox rails. */
  rails?: 'sandbox' | 'iso20022';
}

export interface SettlementRun {
  recorder: Recorder;
  /** Completed transactions (id, quote id, party) for the GET phase and the history. */
  completed: { id: string; quoteId: string; party: Party }[];
}

/**
 * N settlements at concurrency C, as partners make them: quote, create, the (simulated) deposit, then GET every
 * `pollMs` until `completed`. Ops: quote, create, deposit, get, settlement (the whole, quote to completed).
 */
export async function settlementPhase(
  parties: Party[],
  options: SettlementOptions,
  /** Adds to an earlier round's recorder (the runs alternate with the ceiling's). */
  recorder = new Recorder(),
): Promise<SettlementRun> {
  const completed: SettlementRun['completed'] = [];
  const { elapsedMs } = await closedLoop(
    { concurrency: options.concurrency, iterations: options.settlements },
    async (index) => {
      const party = pick(parties, index);
      const api = party.partner.api;
      const started = performance.now();
      try {
        const quote = await recorder.time('quote', async () =>
          expectStatus(
            await api.request('POST', '/v1/quote/fiat-to-fiat', {
              body: options.rails === 'iso20022' ? isoQuoteBody : quoteBody,
              json: true,
            }),
            201,
            'quote',
          ),
        );
        const transaction = await recorder.time('create', async () =>
          expectStatus(
            await api.request('POST', '/v1/fiat-to-fiat', {
              body: {
                quote_id: quote.body.id,
                customer_id: party.customerId,
                wallet_id: party.walletId,
                sender: { name: 'João Pereira', document: { type: 'cpf', number: '529.982.247-25' } },
                receiver: {
                  external_account_id: options.rails === 'iso20022' ? party.wireAccountId : party.externalAccountId,
                },
              },
              json: true,
            }),
            201,
            'create',
          ),
        );
        const id = transaction.body.id as string;
        await recorder.time('deposit', async () =>
          expectStatus(
            await api.request('POST', `/v1/sandbox/transactions/${id}/deposit`, {
              body: { amount: transaction.body.sender.amount },
              json: true,
            }),
            201,
            'deposit',
          ),
        );
        for (;;) {
          const current = await recorder.time('get', async () =>
            expectStatus(await api.request('GET', `/v1/transactions/${id}`, { json: true }), 200, 'get'),
          );
          const status = current.body.status as string;
          if (status === 'completed') break;
          if (status !== 'awaiting_deposit' && status !== 'processing') {
            throw new Error(`transaction ${id} ended ${status} (${String(current.body.failure_reason)})`);
          }
          if (performance.now() - started > options.timeoutMs) throw new Error(`transaction ${id} still ${status}`);
          await pause(options.pollMs);
        }
        recorder.add('settlement', performance.now() - started);
        completed.push({ id, quoteId: quote.body.id as string, party });
      } catch (error) {
        recorder.error('settlement', error);
      }
    },
  );
  recorder.addElapsed(elapsedMs);
  return { recorder, completed };
}

/**
 * The engine's ceiling for the same work: per settlement, a workflow shaped like the quote's (started, then
 * updated as the create does) and one shaped like the settlement (children, activities, timers, and its updates
 * and signals sent as the deposit is), awaited to completion. Same server, same worker settings, no-op
 * activities, tiny payloads. Ops: ceiling (the whole, like `settlement`).
 */
export async function ceilingPhase(
  client: Client,
  shapes: { quote: WorkflowShape; settlement: WorkflowShape },
  options: { settlements: number; concurrency: number },
  recorder = new Recorder(),
): Promise<Recorder> {
  const poke = async (workflowId: string, shape: WorkflowShape) => {
    const handle = client.workflow.getHandle(workflowId);
    for (let index = 0; index < shape.updates; index += 1) await handle.executeUpdate(pokeUpdate);
    for (let index = 0; index < shape.signals; index += 1) await handle.signal(pokeSignal);
  };
  const { elapsedMs } = await closedLoop(
    { concurrency: options.concurrency, iterations: options.settlements },
    async () => {
      const started = performance.now();
      try {
        const quote = await client.workflow.start(shapedWorkflow, {
          taskQueue: ENGINE_TASK_QUEUE,
          workflowId: `ceiling-quote-${randomUUID()}`,
          args: [shapes.quote],
        });
        await poke(quote.workflowId, shapes.quote);
        const settlement = await client.workflow.start(shapedWorkflow, {
          taskQueue: ENGINE_TASK_QUEUE,
          workflowId: `ceiling-settlement-${randomUUID()}`,
          args: [shapes.settlement],
        });
        await poke(settlement.workflowId, shapes.settlement);
        await settlement.result();
        recorder.add('ceiling', performance.now() - started);
      } catch (error) {
        recorder.error('ceiling', error);
      }
    },
  );
  recorder.addElapsed(elapsedMs);
  return recorder;
}
