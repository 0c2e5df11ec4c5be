#!/usr/bin/env node
// `payments`: the developer's command line for the Payments API (the `bin` of the SDK package). Keeps a key
// (`login`), forwards the live event stream to a local URL signed like a real webhook delivery (`listen`), makes the
// sandbox emit an event (`trigger`) and reads and resends events (`events list`, `events resend`).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createPaymentsClient, signWebhook, unwrap, PaymentsApiError, type PaymentsClient } from './index';
import { streamEvents } from './stream';
import { exampleCustomer, uploadDocuments } from './example';

const DEFAULT_BASE_URL = 'http://localhost:3000';

const HELP: Record<string, string> = {
  main: `payments: the Payments API from the command line

Usage: payments <command> [options]

Commands:
  login                      Keep an API key (and base URL) in your config file
  listen --forward-to <url>  Forward your events, as they happen, to a local URL, signed like webhooks
  trigger <event-type>       Make the sandbox emit an event
  events list                List your events, newest first
  events resend <id>         Deliver an event again to your webhook configuration

Options for every command:
  --api-key <key>    API key (default: $PAYMENTS_API_KEY, then the one kept by login)
  --base-url <url>   API base URL (default: $PAYMENTS_API_URL, then login's, then ${DEFAULT_BASE_URL})
  --json             Machine-readable output (one JSON document per line)
  -h, --help         Help of a command (payments <command> --help)

Config file: $PAYMENTS_CONFIG, or $XDG_CONFIG_HOME/payments-api/config.json (~/.config by default), mode 0600.`,
  login: `Usage: payments login [--api-key <key>] [--base-url <url>] [--json]

Checks the key against the API and keeps it with the base URL in the config file, readable by you only (0600).
Without --api-key it reads the key from $PAYMENTS_API_KEY or asks for it.`,
  listen: `Usage: payments listen --forward-to <url> [--secret <whsec_...>] [--events <type,...>] [--json]

Streams your events as they are recorded (GET /v1/events/stream) and POSTs each one to <url> with the
Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature), signed with a secret it prints
(or --secret): verify them in your handler exactly as you will verify real deliveries. --events forwards only
those types. Says "Ready" once the stream is open: every event recorded from then on is forwarded. Reconnects
after the last event received. Ctrl-C stops.`,
  trigger: `Usage: payments trigger <event-type> [--json]

Drives a sandbox flow that emits the event:
  customer.created     creates an individual customer
  customer.approved    creates one, uploads documents, sets the sandbox outcome approved and runs the check
  payin.created        an approved customer, a wallet, a pay-in quote (1000 USD by ACH to USDC on solana) and a pay-in
  payin.processing     the same, and the sandbox deposit of the amount
  payin.completed      the same as payin.processing: the pay-in's workflow then completes it
Run \`payments listen\` meanwhile to receive it.`,
  events: `Usage: payments events list [--limit <n>] [--type <event-type>] [--json]
       payments events resend <event-id> [--json]

list: your events, newest first (--limit, default 10, across pages). resend: one more delivery of the event to
your webhook configuration (it must be enabled).`,
};

interface Config {
  apiKey?: string;
  baseUrl?: string;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PAYMENTS_CONFIG) return env.PAYMENTS_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'payments-api', 'config.json');
}

function readConfig(): Config {
  try {
    return JSON.parse(readFileSync(configPath(), 'utf8')) as Config;
  } catch {
    return {};
  }
}

function writeConfig(config: Config): string {
  const file = configPath();
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // writeFileSync's mode applies only when it creates the file
  return file;
}

type Output = (human: string, json: object) => void;

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'api-key': { type: 'string' },
      'base-url': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      'forward-to': { type: 'string' },
      secret: { type: 'string' },
      events: { type: 'string' },
      limit: { type: 'string' },
      type: { type: 'string' },
    },
  });
  const [command, ...rest] = positionals;
  if (!command || values.help) {
    console.log(HELP[command ?? 'main'] ?? HELP.main);
    return command && !HELP[command] ? 2 : 0;
  }
  const out: Output = (human, json) => console.log(values.json ? JSON.stringify(json) : human);
  const config = readConfig();
  const baseUrl = values['base-url'] || process.env.PAYMENTS_API_URL || config.baseUrl || DEFAULT_BASE_URL;
  const keyOf = () => {
    const apiKey = values['api-key'] || process.env.PAYMENTS_API_KEY || config.apiKey;
    if (!apiKey) throw new UsageError('no API key: run `payments login` or pass --api-key');
    return apiKey;
  };
  const api = () => createPaymentsClient({ baseUrl, apiKey: keyOf() });
  try {
    switch (command) {
      case 'login': {
        let apiKey = values['api-key'] || process.env.PAYMENTS_API_KEY;
        if (!apiKey) {
          const prompt = createInterface({ input: process.stdin, output: process.stderr });
          apiKey = (await prompt.question('API key (sk_sandbox_... or sk_live_...): ')).trim();
          prompt.close();
        }
        unwrap(await createPaymentsClient({ baseUrl, apiKey }).GET('/v1/events', { params: { query: { limit: 1 } } }));
        const file = writeConfig({ apiKey, baseUrl });
        out(`Logged in to ${baseUrl}; key kept in ${file} (0600).`, { base_url: baseUrl, config: file });
        return 0;
      }
      case 'listen':
        return await listen(baseUrl, keyOf(), values, out);
      case 'trigger': {
        const eventType = rest[0];
        if (!eventType) throw new UsageError(HELP.trigger);
        const resource = await trigger(api(), eventType);
        out(`Triggered ${eventType}: ${resource.id}`, { event_type: eventType, resource_id: resource.id });
        return 0;
      }
      case 'events': {
        const [sub, id] = rest;
        if (sub === 'list') {
          const limit = Number(values.limit ?? 10);
          if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');
          const items: unknown[] = [];
          const query = { limit: Math.min(limit, 100), ...(values.type ? { event_type: values.type } : {}) };
          for await (const event of api().paginate('/v1/events', { query: query as never })) {
            items.push(event);
            if (!values.json)
              console.log(
                `${event.event_id}  ${event.event_created_at}  ${event.event_type.padEnd(28)} ${event.event_resource_id}`,
              );
            if (items.length >= limit) break;
          }
          if (values.json) console.log(JSON.stringify({ items }));
          return 0;
        }
        if (sub === 'resend' && id) {
          const delivery = unwrap(await api().POST('/v1/events/{id}/redeliver', { params: { path: { id } } }));
          out(`Queued delivery ${delivery.id} of event ${id}`, delivery);
          return 0;
        }
        throw new UsageError(HELP.events);
      }
      default:
        throw new UsageError(`unknown command ${command}\n\n${HELP.main}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    if (error instanceof PaymentsApiError) {
      const detail = { status: error.status, code: error.code, message: error.message, request_id: error.requestId };
      console.error(
        values.json
          ? JSON.stringify({ error: detail })
          : `${error.status} ${error.code}: ${error.message} (request ${error.requestId})`,
      );
      return 1;
    }
    throw error;
  }
}

async function listen(
  baseUrl: string,
  apiKey: string,
  values: { 'forward-to'?: string; secret?: string; events?: string },
  out: Output,
): Promise<number> {
  const target = values['forward-to'];
  if (!target) throw new UsageError(HELP.listen);
  const secret = values.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
  const only = values.events ? new Set(values.events.split(',').map((type) => type.trim())) : null;
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  // Ready once the stream is open, not before: an event triggered after "Ready" is always forwarded.
  let ready = false;
  const onOpen = () => {
    if (ready) return;
    ready = true;
    out(`Ready: forwarding your events to ${target}\nWebhook signing secret: ${secret}`, {
      ready: true,
      forward_to: target,
      secret,
    });
  };
  try {
    for await (const event of streamEvents({
      baseUrl,
      apiKey,
      signal: stop.signal,
      onOpen,
      onError: (error) => console.error(`stream: ${String(error)}; reconnecting`),
    })) {
      if (only && !only.has(event.event_type)) continue;
      const body = JSON.stringify(event);
      let status: number | string;
      try {
        const response = await fetch(target, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'User-Agent': 'payments-cli',
            ...signWebhook(secret, event.event_id, body),
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        await response.body?.cancel();
      } catch (error) {
        status = `failed (${(error as Error).message})`;
      }
      out(`${new Date().toISOString()}  ${event.event_type.padEnd(28)} ${event.event_id}  -> ${status}`, {
        event_id: event.event_id,
        event_type: event.event_type,
        status,
      });
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  }
  return 0;
}

/** Drives the sandbox flow that emits `eventType`; returns the resource it is about. */
async function trigger(api: PaymentsClient, eventType: string): Promise<{ id: string }> {
  switch (eventType) {
    case 'customer.created':
      return unwrap(await api.POST('/v1/customers', { body: exampleCustomer }));
    case 'payin.created':
    case 'payin.processing':
    case 'payin.completed': {
      const customer = await approvedCustomer(api);
      const wallet = unwrap(
        await api.POST('/v1/wallets', { body: { customer_id: customer.id, name: 'Pay-ins', chain: 'solana' } }),
      );
      const quote = unwrap(
        await api.POST('/v1/quote', {
          body: {
            sender: { currency: 'USD', payment_rail: 'ach', amount: '1000.00' },
            receiver: { currency: 'USDC', payment_rail: 'solana' },
          },
        } as never),
      ) as { id: string };
      const payin = unwrap(
        await api.POST('/v1/payin', {
          body: {
            quote_id: quote.id,
            customer_id: customer.id,
            wallet_id: wallet.id,
            sender: { name: 'Ana Souza', document: { type: 'passport', number: 'x1234567' } },
          },
        } as never),
      ) as { id: string; sender_deposit_instructions?: { amount?: string } | null };
      if (eventType !== 'payin.created') {
        unwrap(
          await api.POST('/v1/sandbox/transactions/{id}/deposit', {
            params: { path: { id: payin.id } },
            body: { amount: payin.sender_deposit_instructions?.amount ?? '', sender_name: 'Ana Souza' },
          }),
        );
      }
      return payin;
    }
    case 'customer.approved':
      return approvedCustomer(api);
    default:
      throw new UsageError(`trigger does not know ${eventType} yet.\n\n${HELP.trigger}`);
  }
}

/** A customer through the sandbox review, approved (waits for the review, a minute at most). */
async function approvedCustomer(api: PaymentsClient): Promise<{ id: string }> {
  const customer = unwrap(await api.POST('/v1/customers', { body: exampleCustomer }));
  await uploadDocuments(api, customer.id);
  unwrap(
    await api.POST('/v1/sandbox/customers/{customerId}/verification-outcome', {
      params: { path: { customerId: customer.id } },
      body: { outcome: 'approved' },
    }),
  );
  unwrap(await api.POST('/v1/customers/{customerId}/check', { params: { path: { customerId: customer.id } } }));
  for (let attempt = 0; attempt < 120; attempt += 1) {
    const details = unwrap(
      await api.GET('/v1/customers/{customerId}/verification-details', {
        params: { path: { customerId: customer.id } },
      }),
    );
    if (details.customer_status === 'approved') return customer;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`customer ${customer.id} was not approved within a minute`);
}

if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
