// Configuration comes only from the environment. Invalid values stop start-up with a message that
// names the variable, so a misconfigured deployment fails at once instead of at first use.
import path from 'node:path';
import { z } from 'zod';
import { allCurrencies, amountTextProblem, isCurrency, Money } from './domain/money';
import { AmountRanges, defaultAmountRangeText, MAX_SERVICE_FEE_BPS } from './domain/quotes';
import { blockchains } from './domain/rails';
import type { StuckBounds } from './domain/reconciliation';
import { BankProfiles, bankProfilesSchema } from './providers/deposit-accounts';
import { iso20022AccountsSchema, type Iso20022AccountsSetting } from './providers/iso20022/accounts';
import { loadableListSources, type ListSource } from './screening/entries';

/**
 * The worker's sticky cache (WORKER_MAX_CACHED_WORKFLOWS). Each cached workflow keeps its own copy of the bundle's
 * module state, and the worker's peak memory follows the cache (`npm run bench`, full length: 100 -> 335 MB,
 * 30 -> 232 MB); 50 holds the settlements and legs in flight at the bench's concurrency (settlement_ratio unchanged)
 * with the worker near 260 MB. The bench's engine worker runs with the same.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 50;

/** Failed authentications allowed per client address per window (AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_SECONDS). */
export const DEFAULT_AUTH_FAILURE_LIMIT = 20;
export const DEFAULT_AUTH_FAILURE_WINDOW_SECONDS = 60;

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A 32-byte key written as 64 hex digits or in base64. */
const secretKeySchema = z.string().transform((text, ctx) => {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(text) && key.toString('base64') !== text)) {
    ctx.addIssue({ code: 'custom', message: 'must be 32 bytes as 64 hex digits or base64 (openssl rand -base64 32)' });
    return z.NEVER;
  }
  return key;
});

/** An EVM address as configured: 0x and 20 bytes in hex (the checksum case is not required). */
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address');

const environmentSchema = z
  .object({
    // No default: a deployment that forgot it must not silently run the sandbox (public seed, automatic KYC).
    APP_ENV: z.enum(['sandbox', 'production'], { error: 'is required: sandbox or production' }),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    DATABASE_URL: z
      .string({ error: 'is required (a PostgreSQL connection URL)' })
      .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgresql:// URL'),
    TEMPORAL_ADDRESS: z
      .string()
      .regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port')
      .default('localhost:7233'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('payments'),
    /**
     * Mutual TLS to the Temporal frontend (docs/operations.md "Temporal behind mutual TLS"): this client's
     * certificate and key (PEM files, both or neither), the CA that signed the frontend's certificate (default: the
     * system's roots) and the name that certificate carries when it is not the address's host. Unset: plaintext.
     */
    TEMPORAL_TLS_CLIENT_CERT: z.string().min(1).optional(),
    TEMPORAL_TLS_CLIENT_KEY: z.string().min(1).optional(),
    TEMPORAL_TLS_CA_CERT: z.string().min(1).optional(),
    TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
    /** Total time one API request may take before it answers 503 service_unavailable. */
    REQUEST_TIMEOUT_SECONDS: z.coerce.number().min(1).max(120).default(15),
    /** Bound on each Temporal call made while serving a request (also capped by the request's deadline). */
    TEMPORAL_CALL_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(60).default(5),
    /** Bound on waiting for a database connection (pool or new connection). */
    DATABASE_CONNECT_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(60).default(5),
    /** Bound on one SQL statement. */
    DATABASE_STATEMENT_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(300).default(10),
    /** Seconds after which an Idempotency-Key claim whose request stopped refreshing it (process died) is taken over. */
    IDEMPOTENCY_ABANDONED_CLAIM_SECONDS: z.coerce.number().int().min(5).max(3600).default(120),
    /** Worker: seconds between sweeps of the workflow-start relay (starts what the API could not). */
    WORKFLOW_START_SWEEP_SECONDS: z.coerce.number().int().min(1).max(3600).default(5),
    LOG_LEVEL: z.enum(logLevels).default('info'),
    /** `json` (production, log shippers) or `pretty` (human-readable lines; `npm run dev` sets it). */
    LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
    /**
     * Port of the Prometheus endpoint (`GET /metrics`), apart from the partner API; 0: any free port (logged);
     * unset: no metrics endpoint.
     */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /** Address the metrics endpoint listens on. */
    METRICS_HOST: z.string().min(1).default('0.0.0.0'),
    /**
     * Worker: loopback port of the Temporal SDK's own Prometheus exporter, served again on METRICS_PORT's /metrics
     * (default METRICS_PORT + 1, or any free port when METRICS_PORT is 0).
     */
    TEMPORAL_SDK_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    /** OTLP/HTTP base URL of a trace collector (spans go to <url>/v1/traces); unset: no tracing, nothing leaves. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /**
     * Share of new traces kept (a trace started by a partner's `traceparent` follows its sampled flag). A tenth by
     * default: every span of every settlement costs the worker about half again its CPU (docs/observability.md).
     */
    TRACES_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(0.1),
    /** Base URL partners reach this API at; used to build links such as verification links. */
    PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** Folder of the local-disk document store. */
    DOCUMENT_STORAGE_DIR: z.string().min(1).default('.data/documents'),
    /** Sandbox only: seconds before the simulated provider approves a customer under review. */
    SANDBOX_VERIFICATION_DELAY_SECONDS: z.coerce
      .number()
      .int()
      .min(0)
      .max(86400 * 30)
      .default(10),
    /** Seconds a webhook receiver has to answer one delivery attempt. */
    WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(30).default(10),
    /** Seconds between the outbox relay's sweeps (it is woken by NOTIFY at once; the sweep is the fallback). */
    WEBHOOK_RELAY_SWEEP_SECONDS: z.coerce.number().int().min(1).max(3600).default(5),
    /** First pause between webhook attempts; doubles after each failed attempt. */
    WEBHOOK_RETRY_INITIAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
    /** Longest pause between webhook attempts. */
    WEBHOOK_RETRY_MAX_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86400).default(3600),
    /** Worker: pre-bundled workflow code (`npm run build` writes dist/workflow-bundle.js, used when this is unset). */
    WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
    /** Service fee of every quote, in basis points of the sender amount. */
    QUOTE_SERVICE_FEE_BPS: z.coerce.number().int().min(0).max(MAX_SERVICE_FEE_BPS).default(50),
    /** Overrides of the allowed amount ranges, e.g. `BRL:1-1000,USD:10-25000`. */
    AMOUNT_RANGES: z.string().optional(),
    /** Hex seed (32 to 64 bytes, a BIP-32 master seed) wallet keys are derived from; required in production. */
    WALLET_KEY_SEED: z
      .string()
      .regex(
        /^([0-9a-fA-F]{2}){32,64}$/,
        'must be at least 64 hex digits (32 bytes) and at most 128 (64 bytes: a BIP-32 seed)',
      )
      .optional(),
    /**
     * Ethereum (any EVM chain by its RPC): the node payout confirmations are checked on. Unset: ethereum payout hashes
     * cannot be checked (the sandbox then takes a well-formed hash, production refuses). The sandbox fills the token
     * contracts and the collection address of its own chain (src/providers/evm/sandbox-chain.ts); production names
     * them all.
     */
    ETHEREUM_RPC_URL: z.url().optional(),
    /**
     * A liquidity provider's REST API (docs/liquidity-provider.md): set, partner quotes are priced from its indicative
     * price less FX_BUFFER_BPS and each settlement leg executes at its firm quote (FX gain/loss booked).
     */
    LIQUIDITY_PROVIDER_URL: z.url().optional(),
    /** Production: the network fee per chain in stablecoin units, JSON, e.g. {"ethereum":"1.00"} (docs/production.md). */
    NETWORK_FEES: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined) return undefined;
        try {
          const value = JSON.parse(text) as unknown;
          if (
            value &&
            typeof value === 'object' &&
            Object.values(value).every((fee) => /^\d+(\.\d+)?$/.test(String(fee)))
          ) {
            return value as Record<string, string>;
          }
        } catch {
          // reported below
        }
        ctx.addIssue({
          code: 'custom',
          message: 'must be a JSON object of chain to decimal fee, e.g. {"ethereum":"1.00"}',
        });
        return z.NEVER;
      }),
    FX_BUFFER_BPS: z.coerce.number().int().min(0).max(1000).default(30),
    FX_BAND_BPS: z.coerce.number().int().min(1).max(5000).default(100),
    FX_MAX_PRICE_AGE_SECONDS: z.coerce.number().min(1).max(3600).default(30),
    /**
     * Sanctions lists screened against (docs/screening.md): `source=url` pairs separated by commas, source one of
     * ofac_sdn, ofac_consolidated, un, eu, uk; url https://, file:// or an absolute path. Set, screening is connected.
     */
    SCREENING_LISTS: z.string().optional(),
    SCREENING_REVIEW_THRESHOLD: z.coerce.number().min(0.5).max(1).default(0.88),
    SCREENING_REPORT_THRESHOLD: z.coerce.number().min(0.5).max(1).default(0.8),
    /** A new version with fewer entries than this fraction of the current one is refused as suspicious. */
    SCREENING_MIN_ENTRY_RATIO: z.coerce.number().min(0).max(1).default(0.5),
    SCREENING_REFRESH_MINUTES: z.coerce.number().int().min(1).max(1440).default(60),
    /** Loaded versions kept per list besides those a screening names; older ones are pruned after a refresh. */
    SCREENING_KEEP_VERSIONS: z.coerce.number().int().min(1).max(1000).default(3),
    /** A bank's API Pix (docs/pix.md): set, pix deposits are charges (cob) there and its webhook reports them. */
    PIX_API_URL: z.url().optional(),
    PIX_CLIENT_ID: z.string().optional(),
    PIX_CLIENT_SECRET: z.string().optional(),
    PIX_CLIENT_CERT_FILE: z.string().optional(),
    PIX_CLIENT_KEY_FILE: z.string().optional(),
    PIX_CA_FILE: z.string().optional(),
    /** The service's pix key (a CNPJ) at that bank. */
    PIX_COLLECTION_KEY: z.string().optional(),
    /**
     * The secret path segment of the service's `pix` webhook (docs/pix.md "The webhook"): set, the API serves
     * POST /providers/api-pix/webhook/{secret}/pix and registers <PIX_WEBHOOK_BASE_URL>/providers/api-pix/webhook/{secret}
     * with the bank at start.
     */
    PIX_WEBHOOK_SECRET: z
      .string()
      .min(24)
      .regex(/^[A-Za-z0-9_-]+$/)
      .optional(),
    /** Where the bank reaches the API (defaults to PUBLIC_BASE_URL). */
    PIX_WEBHOOK_BASE_URL: z.url().optional(),
    ETHEREUM_USDC_CONTRACT: evmAddress.optional(),
    ETHEREUM_USDT_CONTRACT: evmAddress.optional(),
    /** Where payouts' stablecoin is sent on ethereum (the service's collection address). */
    ETHEREUM_COLLECTION_ADDRESS: evmAddress.optional(),
    /** The off-ramp's deposit address on ethereum: where leg 2 sends the stablecoin it sells (sandbox: its own). */
    ETHEREUM_OFF_RAMP_ADDRESS: evmAddress.optional(),
    /**
     * Where a wallet-funded payout's fees go on ethereum; unset: the seed's m/44'/60'/0'/0/4 (the signer holds its key).
     */
    ETHEREUM_FEE_ADDRESS: evmAddress.optional(),
    /**
     * How many hot treasury addresses send the settlements' coin on ethereum (each settlement's sends from one, chosen
     * by its transaction): sends from one address share one nonce sequence. Unset: 4 in the sandbox, 1 in production.
     */
    ETHEREUM_TREASURY_ADDRESSES: z.coerce.number().int().min(1).max(64).optional(),
    /** Blocks a transfer must be in (its own counted) before it counts. */
    ETHEREUM_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).default(12),
    /** The ethereum entry's EIP-155 chain id (1: mainnet); transactions are signed for it. Sandbox default: Anvil's. */
    ETHEREUM_CHAIN_ID: z.coerce.number().int().min(1).optional(),
    /** Further RPC URLs of the ethereum entry, comma-separated: tried in order after ETHEREUM_RPC_URL. */
    ETHEREUM_FALLBACK_RPC_URLS: z.string().optional(),
    /**
     * Every EVM chain as JSON, one entry per chain (docs/configuration.md "EVM chains"); replaces the ETHEREUM_*
     * variables, which are the `ethereum` entry's short form.
     */
    EVM_CHAINS: z.string().optional(),
    /** When the chain watcher credits a deposit: `confirmations` deep (above), or once the node calls it `finalized`. */
    ETHEREUM_WATCH_DEPTH: z.enum(['confirmations', 'finalized']).default('confirmations'),
    /** The block the chain watcher starts from on its first run; unset: 0 in the sandbox, the head in production. */
    ETHEREUM_WATCH_FROM_BLOCK: z.coerce.number().int().min(0).optional(),
    /** Blocks per `eth_getLogs` request of the chain watcher (RPC providers cap the range). */
    ETHEREUM_WATCH_BLOCK_RANGE: z.coerce.number().int().min(1).max(10_000).default(1000),
    /** Seconds the chain watcher waits between reads once it has caught up with the head. */
    ETHEREUM_WATCH_POLL_SECONDS: z.coerce.number().int().min(1).max(600).default(12),
    /** Minutes a payout's accepted but unconfirmed `tx_hash` may take to confirm before it is refused. */
    PAYOUT_TX_HASH_WAIT_MINUTES: z.coerce.number().int().min(1).max(10_080).default(60),
    /** JSON of the master bank accounts virtual accounts are issued under; required in production. */
    VIRTUAL_ACCOUNT_BANKS: z.string().optional(),
    /** The bank's ISO 20022 host-to-host API (the bank simulator's /iso20022): EUR (SEPA) and USD (wire) payouts. */
    ISO20022_BANK_URL: z.url().optional(),
    /** How long one payout waits for the bank to settle an accepted payment before the activity asks again. */
    /**
     * JSON of the service's own accounts at that bank (src/providers/iso20022/accounts.ts): the debtor of its pain.001s
     * and where deposits are paid. Required with ISO20022_BANK_URL.
     */
    ISO20022_ACCOUNTS: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined) return undefined;
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be JSON (docs/configuration.md)' });
          return z.NEVER;
        }
        const parsed = iso20022AccountsSchema.safeParse(json);
        if (parsed.success) return parsed.data;
        ctx.addIssue({
          code: 'custom',
          message: `must name the bank and its EUR and USD accounts: ${parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`,
        });
        return z.NEVER;
      }),
    ISO20022_SETTLE_WAIT_SECONDS: z.coerce.number().int().min(1).max(300).default(20),
    /** Seconds the bank-reports reader waits between reads of the bank's camt.054 notifications once caught up. */
    ISO20022_REPORT_POLL_SECONDS: z.coerce.number().int().min(1).max(600).default(10),
    /** Production: hours between reminders to operators while a virtual account awaits a decision. */
    VIRTUAL_ACCOUNT_REVIEW_REMINDER_HOURS: z.coerce.number().int().min(1).max(720).default(24),
    /** Production: days after which a virtual account without a decision is rejected. */
    VIRTUAL_ACCOUNT_REVIEW_TIMEOUT_DAYS: z.coerce.number().int().min(1).max(365).default(14),
    /** Sandbox only: let webhook URLs point to loopback and private addresses (local development, tests). */
    WEBHOOK_ALLOW_PRIVATE_URLS: z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .default('false')
      .transform((value) => value === 'true'),
    /** Worker: attempts in flight per partner (per worker process); a slow receiver cannot take every slot. */
    WEBHOOK_PARTNER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(5),
    /** Worker: activity tasks one worker process runs at once. */
    WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(2).max(1000).default(100),
    /**
     * Worker: workflows kept in memory between their tasks (the sticky cache). The SDK's default grows with the
     * heap limit (about 2,300 on a 4 GB heap, most of a gigabyte once full); an evicted workflow is replayed from
     * its history on its next task, which for ours is a few dozen events.
     */
    WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).max(100_000).default(DEFAULT_MAX_CACHED_WORKFLOWS),
    /** 32 bytes (64 hex digits or base64) that encrypt secrets at rest; required in production. */
    SECRETS_ENCRYPTION_KEY: secretKeySchema.optional(),
    /** Earlier keys, comma-separated: still decrypt what they encrypted (key rotation). */
    SECRETS_ENCRYPTION_PREVIOUS_KEYS: z
      .string()
      .transform((text, ctx) => {
        const keys = text
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean);
        const parsed = keys.map((key) => secretKeySchema.safeParse(key));
        if (parsed.some((result) => !result.success)) {
          ctx.addIssue({
            code: 'custom',
            message: 'must be keys of 32 bytes (64 hex digits or base64), comma-separated',
          });
        }
        return parsed.flatMap((result) => (result.success ? [result.data] : []));
      })
      .optional(),
    /**
     * Documents one customer may upload through the hosted verification page, over its whole life (the partner's API
     * is not capped). An individual needs 2 or 3, a business at most 9 before a review; 20 leaves a rejection round.
     */
    HOSTED_UPLOADS_PER_CUSTOMER: z.coerce.number().int().min(1).max(1000).default(20),
    /**
     * Days partners can list an event (GET /v1/events) and its webhook deliveries; older ones are purged by the
     * maintenance schedule. The ledger and transactions are kept forever.
     */
    EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
    /** Hours a hosted verification link stays valid (it is also replaced on every status change). */
    VERIFICATION_LINK_TTL_HOURS: z.coerce.number().int().min(1).max(720).default(168),
    /** Requests per partner per window on the API. */
    RATE_LIMIT_PARTNER_REQUESTS: z.coerce.number().int().min(1).max(1_000_000).default(600),
    /** Requests per client address per window on the unauthenticated routes (hosted verification pages). */
    RATE_LIMIT_PUBLIC_REQUESTS: z.coerce.number().int().min(1).max(1_000_000).default(60),
    /** Length of a rate-limit window, in seconds. */
    RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86400).default(60),
    /**
     * Failed authentications (unknown or revoked API keys) per client address per AUTH_FAILURE_WINDOW_SECONDS; over
     * it the address is answered 429 without its keys being looked up.
     */
    AUTH_FAILURE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_AUTH_FAILURE_LIMIT),
    /** Length of the window of AUTH_FAILURE_LIMIT, in seconds. */
    AUTH_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86400).default(DEFAULT_AUTH_FAILURE_WINDOW_SECONDS),
    /**
     * Worker: hours a transaction may stay `processing`, a leg open or rejected-and-not-refunded, before the
     * reconciliation reports it as stuck money. A provider call's retries take minutes and the outcome polls about
     * two hours (workflows/provider-outcome.ts): twice that.
     */
    RECONCILIATION_PROCESSING_BOUND_HOURS: z.coerce
      .number()
      .min(1)
      .max(24 * 30)
      .default(4),
    /** Worker: hours a transaction may wait in `error` (or an unknown non-final status) for an operator. */
    RECONCILIATION_ERROR_BOUND_HOURS: z.coerce
      .number()
      .min(1)
      .max(24 * 30)
      .default(24),
    /** Worker: hours a deposit may stay `returning` (being sent back) before it is reported as stuck. */
    RECONCILIATION_DEPOSIT_RETURNING_BOUND_HOURS: z.coerce
      .number()
      .min(1)
      .max(24 * 30)
      .default(4),
    /**
     * Worker: hours of provider statement each run reads (ending when it starts); postings of its last
     * (hours - 24) must each have a line. The daily run reads 72: every posting is checked on two runs.
     */
    RECONCILIATION_STATEMENT_LOOKBACK_HOURS: z.coerce
      .number()
      .int()
      .min(48)
      .max(24 * 31)
      .default(72),
    /** Reverse proxies in front of the API that append to X-Forwarded-For; 0 = use the connection's address. */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  })
  .superRefine((values, ctx) => {
    if (values.APP_ENV === 'production' && values.WEBHOOK_ALLOW_PRIVATE_URLS) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOK_ALLOW_PRIVATE_URLS'], message: 'cannot be true in production' });
    }
    if (values.ISO20022_BANK_URL && !values.ISO20022_ACCOUNTS) {
      ctx.addIssue({
        code: 'custom',
        path: ['ISO20022_ACCOUNTS'],
        message: 'is required with ISO20022_BANK_URL: the service’s own accounts at that bank',
      });
    }
    if (values.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS < values.WEBHOOK_RETRY_INITIAL_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['WEBHOOK_RETRY_MAX_INTERVAL_SECONDS'],
        message: 'must be at least WEBHOOK_RETRY_INITIAL_SECONDS',
      });
    }
  });

export type AppEnvironment = 'sandbox' | 'production';

/** Mutual TLS to the Temporal frontend (TEMPORAL_TLS_*). */
export interface TemporalTlsFiles {
  /** PEM of the CA that signed the frontend's certificate; the system's roots when null. */
  caCertFile: string | null;
  /** This client's certificate and key (PEM), presented to the frontend. */
  certFile: string;
  keyFile: string;
  /** The name the frontend's certificate must carry when it differs from the address's host. */
  serverName: string | null;
}

export interface AppConfig {
  appEnv: AppEnvironment;
  port: number;
  databaseUrl: string;
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    callTimeoutMs: number;
    /** Mutual TLS to the frontend (TEMPORAL_TLS_*); null or absent: plaintext. */
    tls?: TemporalTlsFiles | null;
  };
  /** Total time one API request may take. */
  requestTimeoutMs: number;
  database: { connectMs: number; statementMs: number };
  /** A claim not refreshed for this long belongs to a dead request and is taken over. */
  idempotencyAbandonedClaimMs: number;
  workflowStartSweepSeconds: number;
  /** Worker: pre-bundled workflow code, or null to use dist/workflow-bundle.js when present (else bundle at start). */
  workflowBundlePath: string | null;
  logLevel: (typeof logLevels)[number];
  logFormat: 'json' | 'pretty';
  /** Prometheus endpoint and OTLP trace export (docs/observability.md); each off when null. */
  observability: {
    /** temporalSdkPort 0: a free port picked at start. */
    metrics: { port: number; host: string; temporalSdkPort: number } | null;
    tracing: { otlpEndpoint: string; sampleRatio: number } | null;
  };
  publicBaseUrl: string;
  documentStorageDir: string;
  sandboxVerificationDelaySeconds: number;
  webhooks: {
    timeoutSeconds: number;
    relaySweepSeconds: number;
    allowPrivateUrls: boolean;
    partnerConcurrency: number;
    /** Backoff between failed attempts (exponential, doubling), in milliseconds. */
    retry: { initialIntervalMs: number; maximumIntervalMs: number };
  };
  quoteServiceFeeBps: number;
  /** Allowed amount of each currency, on either side of a quote or transaction (inclusive). */
  amountRanges: AmountRanges;
  /** Null in the sandbox unless set: the sandbox then uses its public seed. */
  walletKeySeed: Buffer | null;
  /** Every configured EVM chain by name (one entry each: another EVM chain is configuration, not code). */
  evmChains: Record<string, EvmChainConfig>;
  /** The ethereum node payout hashes are checked on; null when none is configured (evmChains.ethereum). */
  ethereum: {
    rpcUrl: string;
    /** Null in the sandbox unless set: the sandbox chain's own (src/providers/evm/sandbox-chain.ts). */
    tokens: { USDC: string; USDT: string } | null;
    collectionAddress: string | null;
    confirmations: number;
    /** The chain watcher (workflows/chain-watcher.ts). */
    watch: {
      depth: 'confirmations' | 'finalized';
      fromBlock: number | null;
      blockRange: number;
      pollSeconds: number;
    };
  } | null;
  /** How long a payout's accepted `tx_hash` may take to confirm before it is refused. */
  payoutTxHashWaitMinutes: number;
  /** The liquidity provider and the FX policy (src/domain/fx.ts); null: rates and conversions stay the rails'. */
  liquidity: { url: string; bufferBps: number; bandBps: number; maxPriceAgeSeconds: number } | null;
  /** The sanctions lists and the matcher's thresholds; null: no list is configured (docs/screening.md). */
  screening: {
    lists: { source: ListSource; url: string }[];
    thresholds: { review: number; report: number };
    minEntryRatio: number;
    refreshMinutes: number;
    keepVersions: number;
  } | null;
  /** A bank's API Pix; null: pix deposits stay the deposit provider's. */
  pixApi: {
    url: string;
    clientId: string;
    clientSecret: string;
    tls: { certFile: string; keyFile: string; caFile?: string } | null;
    collectionKey: string;
    /** The service's webhook: its secret path segment and the URL registered with the bank; null: not served. */
    webhook: { secret: string; url: string } | null;
  } | null;
  /** Null in the sandbox unless set: the sandbox then uses its fictitious banks. */
  virtualAccountBanks: BankProfiles | null;
  /** The ISO 20022 bank channel; null when none is configured (EUR and USD payouts then stay the sandbox's). */
  /** Production's scheduled network fee per chain (NETWORK_FEES); null: none. */
  networkFees: Record<string, string> | null;
  iso20022: {
    bankUrl: string;
    settleWaitMs: number;
    reportPollSeconds: number;
    /** The service's own accounts at the bank (ISO20022_ACCOUNTS). */
    accounts: Iso20022AccountsSetting;
  } | null;
  virtualAccountReview: { reminderHours: number; timeoutDays: number };
  /** Keys of secrets at rest (src/secrets.ts); the sandbox falls back to a public key when none is set. */
  secrets: { encryptionKey: Buffer; previousEncryptionKeys: Buffer[] };
  verificationLinkTtlHours: number;
  /** Days events and their webhook deliveries are kept (EVENT_RETENTION_DAYS). */
  eventRetentionDays: number;
  /** Documents one customer may upload through the hosted verification page. */
  hostedUploadsPerCustomer: number;
  rateLimits: {
    partnerRequests: number;
    publicRequests: number;
    windowSeconds: number;
    trustProxyHops: number;
    /** Failed authentications per client address per `authFailureWindowSeconds`. */
    authFailures: number;
    authFailureWindowSeconds: number;
  };
  worker: { maxConcurrentActivities: number; maxCachedWorkflows: number };
  /** The daily reconciliation (docs/reconciliation.md): stuck-money bounds and the statement window. */
  reconciliation: { stuckBounds: StuckBounds; statementLookbackHours: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** TEMPORAL_TLS_* alone (also read by scripts that need no other setting): null when unset. */
export function loadTemporalTls(env: NodeJS.ProcessEnv | Record<string, unknown>): TemporalTlsFiles | null {
  const text = (name: string) => (typeof env[name] === 'string' && env[name] !== '' ? (env[name] as string) : null);
  const certFile = text('TEMPORAL_TLS_CLIENT_CERT');
  const keyFile = text('TEMPORAL_TLS_CLIENT_KEY');
  if (Boolean(certFile) !== Boolean(keyFile))
    throw new ConfigError('Invalid configuration: TEMPORAL_TLS_CLIENT_CERT and TEMPORAL_TLS_CLIENT_KEY go together');
  if (!certFile || !keyFile) return null;
  return { certFile, keyFile, caCertFile: text('TEMPORAL_TLS_CA_CERT'), serverName: text('TEMPORAL_TLS_SERVER_NAME') };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // Empty strings count as unset, as they do in most shells' `VAR= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const values = parsed.data;
  const amountRanges = parseAmountRanges(values.AMOUNT_RANGES ?? '');
  if (typeof amountRanges === 'string') throw new ConfigError(`Invalid configuration: AMOUNT_RANGES ${amountRanges}`);
  const virtualAccountBanks = parseBankProfiles(values.VIRTUAL_ACCOUNT_BANKS);
  const evmChains = parseEvmChains(values);
  const temporalTls = loadTemporalTls(values);
  if (values.APP_ENV === 'production') {
    // Sandbox stand-ins must never serve real money: production names its own.
    if (!values.WALLET_KEY_SEED)
      throw new ConfigError('Invalid configuration: WALLET_KEY_SEED is required in production');
    if (!virtualAccountBanks)
      throw new ConfigError('Invalid configuration: VIRTUAL_ACCOUNT_BANKS is required in production');
    if (!values.SECRETS_ENCRYPTION_KEY)
      throw new ConfigError('Invalid configuration: SECRETS_ENCRYPTION_KEY is required in production');
    for (const [name, chain] of Object.entries(evmChains))
      if (!chain.tokens || !chain.collectionAddress || !chain.chainId)
        throw new ConfigError(
          `Invalid configuration: production names the ${name} chain's id, token contracts and collection address (ETHEREUM_CHAIN_ID, ETHEREUM_USDC_CONTRACT, ETHEREUM_USDT_CONTRACT, ETHEREUM_COLLECTION_ADDRESS or EVM_CHAINS)`,
        );
  }
  return {
    appEnv: values.APP_ENV,
    port: values.PORT,
    databaseUrl: values.DATABASE_URL,
    temporal: {
      address: values.TEMPORAL_ADDRESS,
      namespace: values.TEMPORAL_NAMESPACE,
      taskQueue: values.TEMPORAL_TASK_QUEUE,
      callTimeoutMs: Math.round(values.TEMPORAL_CALL_TIMEOUT_SECONDS * 1000),
      tls: temporalTls,
    },
    requestTimeoutMs: Math.round(values.REQUEST_TIMEOUT_SECONDS * 1000),
    database: {
      connectMs: Math.round(values.DATABASE_CONNECT_TIMEOUT_SECONDS * 1000),
      statementMs: Math.round(values.DATABASE_STATEMENT_TIMEOUT_SECONDS * 1000),
    },
    idempotencyAbandonedClaimMs: values.IDEMPOTENCY_ABANDONED_CLAIM_SECONDS * 1000,
    workflowStartSweepSeconds: values.WORKFLOW_START_SWEEP_SECONDS,
    workflowBundlePath: values.WORKFLOW_BUNDLE_PATH ? path.resolve(values.WORKFLOW_BUNDLE_PATH) : null,
    logLevel: values.LOG_LEVEL,
    logFormat: values.LOG_FORMAT,
    observability: {
      metrics:
        values.METRICS_PORT === undefined
          ? null
          : {
              port: values.METRICS_PORT,
              host: values.METRICS_HOST,
              temporalSdkPort:
                values.TEMPORAL_SDK_METRICS_PORT ?? (values.METRICS_PORT === 0 ? 0 : values.METRICS_PORT + 1),
            },
      tracing: values.OTEL_EXPORTER_OTLP_ENDPOINT
        ? {
            otlpEndpoint: values.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''),
            sampleRatio: values.TRACES_SAMPLE_RATIO,
          }
        : null,
    },
    publicBaseUrl: (values.PUBLIC_BASE_URL ?? `http://localhost:${values.PORT}`).replace(/\/+$/, ''),
    documentStorageDir: path.resolve(values.DOCUMENT_STORAGE_DIR),
    sandboxVerificationDelaySeconds: values.SANDBOX_VERIFICATION_DELAY_SECONDS,
    webhooks: {
      timeoutSeconds: values.WEBHOOK_TIMEOUT_SECONDS,
      relaySweepSeconds: values.WEBHOOK_RELAY_SWEEP_SECONDS,
      allowPrivateUrls: values.WEBHOOK_ALLOW_PRIVATE_URLS,
      partnerConcurrency: values.WEBHOOK_PARTNER_CONCURRENCY,
      retry: {
        initialIntervalMs: values.WEBHOOK_RETRY_INITIAL_SECONDS * 1000,
        maximumIntervalMs: values.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS * 1000,
      },
    },
    quoteServiceFeeBps: values.QUOTE_SERVICE_FEE_BPS,
    amountRanges,
    walletKeySeed: values.WALLET_KEY_SEED ? Buffer.from(values.WALLET_KEY_SEED, 'hex') : null,
    evmChains,
    ethereum: evmChains.ethereum
      ? {
          rpcUrl: evmChains.ethereum.rpcUrls[0]!,
          tokens: evmChains.ethereum.tokens,
          collectionAddress: evmChains.ethereum.collectionAddress,
          confirmations: evmChains.ethereum.confirmations,
          watch: {
            depth: values.ETHEREUM_WATCH_DEPTH,
            fromBlock: values.ETHEREUM_WATCH_FROM_BLOCK ?? null,
            blockRange: values.ETHEREUM_WATCH_BLOCK_RANGE,
            pollSeconds: values.ETHEREUM_WATCH_POLL_SECONDS,
          },
        }
      : null,
    payoutTxHashWaitMinutes: values.PAYOUT_TX_HASH_WAIT_MINUTES,
    liquidity: values.LIQUIDITY_PROVIDER_URL
      ? {
          url: values.LIQUIDITY_PROVIDER_URL,
          bufferBps: values.FX_BUFFER_BPS,
          bandBps: values.FX_BAND_BPS,
          maxPriceAgeSeconds: values.FX_MAX_PRICE_AGE_SECONDS,
        }
      : null,
    screening: values.SCREENING_LISTS
      ? {
          lists: parseScreeningLists(values.SCREENING_LISTS),
          thresholds: { review: values.SCREENING_REVIEW_THRESHOLD, report: values.SCREENING_REPORT_THRESHOLD },
          minEntryRatio: values.SCREENING_MIN_ENTRY_RATIO,
          refreshMinutes: values.SCREENING_REFRESH_MINUTES,
          keepVersions: values.SCREENING_KEEP_VERSIONS,
        }
      : null,
    pixApi: values.PIX_API_URL
      ? {
          url: values.PIX_API_URL,
          clientId: values.PIX_CLIENT_ID ?? '',
          clientSecret: values.PIX_CLIENT_SECRET ?? '',
          tls:
            values.PIX_CLIENT_CERT_FILE && values.PIX_CLIENT_KEY_FILE
              ? {
                  certFile: values.PIX_CLIENT_CERT_FILE,
                  keyFile: values.PIX_CLIENT_KEY_FILE,
                  ...(values.PIX_CA_FILE ? { caFile: values.PIX_CA_FILE } : {}),
                }
              : null,
          collectionKey: values.PIX_COLLECTION_KEY ?? '',
          webhook: values.PIX_WEBHOOK_SECRET
            ? {
                secret: values.PIX_WEBHOOK_SECRET,
                url: `${(values.PIX_WEBHOOK_BASE_URL ?? values.PUBLIC_BASE_URL ?? `http://localhost:${values.PORT}`).replace(/\/+$/, '')}/providers/api-pix/webhook/${values.PIX_WEBHOOK_SECRET}`,
              }
            : null,
        }
      : null,
    virtualAccountBanks,
    networkFees: values.NETWORK_FEES ?? null,
    iso20022:
      values.ISO20022_BANK_URL && values.ISO20022_ACCOUNTS
        ? {
            bankUrl: values.ISO20022_BANK_URL,
            accounts: values.ISO20022_ACCOUNTS,
            settleWaitMs: values.ISO20022_SETTLE_WAIT_SECONDS * 1000,
            reportPollSeconds: values.ISO20022_REPORT_POLL_SECONDS,
          }
        : null,
    virtualAccountReview: {
      reminderHours: values.VIRTUAL_ACCOUNT_REVIEW_REMINDER_HOURS,
      timeoutDays: values.VIRTUAL_ACCOUNT_REVIEW_TIMEOUT_DAYS,
    },
    secrets: {
      encryptionKey: values.SECRETS_ENCRYPTION_KEY ?? SANDBOX_SECRETS_KEY,
      previousEncryptionKeys: values.SECRETS_ENCRYPTION_PREVIOUS_KEYS ?? [],
    },
    verificationLinkTtlHours: values.VERIFICATION_LINK_TTL_HOURS,
    eventRetentionDays: values.EVENT_RETENTION_DAYS,
    hostedUploadsPerCustomer: values.HOSTED_UPLOADS_PER_CUSTOMER,
    rateLimits: {
      partnerRequests: values.RATE_LIMIT_PARTNER_REQUESTS,
      publicRequests: values.RATE_LIMIT_PUBLIC_REQUESTS,
      windowSeconds: values.RATE_LIMIT_WINDOW_SECONDS,
      trustProxyHops: values.TRUST_PROXY_HOPS,
      authFailures: values.AUTH_FAILURE_LIMIT,
      authFailureWindowSeconds: values.AUTH_FAILURE_WINDOW_SECONDS,
    },
    worker: {
      maxConcurrentActivities: values.WORKER_MAX_CONCURRENT_ACTIVITIES,
      maxCachedWorkflows: values.WORKER_MAX_CACHED_WORKFLOWS,
    },
    reconciliation: {
      stuckBounds: {
        processingHours: values.RECONCILIATION_PROCESSING_BOUND_HOURS,
        errorHours: values.RECONCILIATION_ERROR_BOUND_HOURS,
        depositReturningHours: values.RECONCILIATION_DEPOSIT_RETURNING_BOUND_HOURS,
      },
      statementLookbackHours: values.RECONCILIATION_STATEMENT_LOOKBACK_HOURS,
    },
  };
}

/** Public, like the sandbox wallet seed: sandbox secrets are only protected by a key of the deployment's own. */
export const SANDBOX_SECRETS_KEY = Buffer.from(
  '73616e64626f782d736563726574732d6b65792d7075626c69632d2d2d2d2d21',
  'hex',
);

/** Defaults overridden by `CUR:min-max` entries separated by commas; returns a problem as a string. */
export function parseAmountRanges(text: string): AmountRanges | string {
  const ranges = Object.fromEntries(
    allCurrencies.map((currency) => {
      const [min, max] = defaultAmountRangeText[currency];
      return [currency, { min: Money.of(currency, min), max: Money.of(currency, max) }];
    }),
  ) as AmountRanges;
  const entries = text.split(',').map((part) => part.trim());
  for (const entry of entries.filter(Boolean)) {
    const match = /^([A-Z]+):([^-]+)-(.+)$/.exec(entry);
    if (!match) return `entry "${entry}" must look like BRL:1-1000`;
    const [, currency, min, max] = match as unknown as [string, string, string, string];
    if (!isCurrency(currency))
      return `entry "${entry}": unknown currency ${currency} (known: ${allCurrencies.join(', ')})`;
    const problem = amountTextProblem(min, currency) ?? amountTextProblem(max, currency);
    if (problem) return `entry "${entry}": bounds ${problem}`;
    const range = { min: Money.parse(currency, min), max: Money.parse(currency, max) };
    if (!range.min.isPositive() || range.min.gt(range.max)) {
      return `entry "${entry}": needs 0 < min <= max`;
    }
    ranges[currency] = range;
  }
  return ranges;
}

function parseBankProfiles(json: string | undefined): BankProfiles | null {
  if (json === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new ConfigError('Invalid configuration: VIRTUAL_ACCOUNT_BANKS must be JSON');
  }
  const parsed = bankProfilesSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`Invalid configuration: VIRTUAL_ACCOUNT_BANKS ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Runs a process entry point; a configuration error prints only its message (it names the variable). */
export function runEntryPoint(name: string, main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) console.error(error.message);
    else console.error(`${name} failed:`, error);
    process.exit(1);
  });
}

/** One EVM chain: everything the adapter needs to read and send on it (src/providers/evm/). */
export interface EvmChainConfig {
  /** EIP-155 chain id; null: the sandbox's Anvil (31337), asked of the node where it matters. */
  chainId: number | null;
  /** Tried in order: the first that answers serves a call. */
  rpcUrls: string[];
  /** The stablecoins' contracts; null in the sandbox: its own chain's (src/providers/evm/sandbox-chain.ts). */
  tokens: { USDC: string; USDT: string } | null;
  collectionAddress: string | null;
  /** The off-ramp's deposit address, where leg 2 sends the stablecoin it sells; null in the sandbox: its own. */
  offRampAddress: string | null;
  /** Where a wallet-funded payout's fees go; null: the seed's fee address (FEE_KEY_REFERENCE). */
  feeAddress: string | null;
  /** Blocks a transfer must be in (its own counted) before it counts. */
  confirmations: number;
  /** Hot treasury addresses (docs/chain.md "Treasury addresses"); null: the environment's default. */
  treasuryAddresses: number | null;
}

const evmChainEntry = z.object({
  chain_id: z.number().int().min(1),
  rpc_urls: z.array(z.url()).min(1),
  tokens: z.object({ USDC: evmAddress, USDT: evmAddress }).optional(),
  collection_address: evmAddress.optional(),
  off_ramp_address: evmAddress.optional(),
  fee_address: evmAddress.optional(),
  confirmations: z.number().int().min(1).max(1000).default(12),
  treasury_addresses: z.number().int().min(1).max(64).optional(),
});

function parseEvmChains(values: {
  EVM_CHAINS?: string;
  ETHEREUM_RPC_URL?: string;
  ETHEREUM_FALLBACK_RPC_URLS?: string;
  ETHEREUM_CHAIN_ID?: number;
  ETHEREUM_USDC_CONTRACT?: string;
  ETHEREUM_USDT_CONTRACT?: string;
  ETHEREUM_COLLECTION_ADDRESS?: string;
  ETHEREUM_OFF_RAMP_ADDRESS?: string;
  ETHEREUM_FEE_ADDRESS?: string;
  ETHEREUM_CONFIRMATIONS: number;
  ETHEREUM_TREASURY_ADDRESSES?: number;
}): Record<string, EvmChainConfig> {
  if (values.EVM_CHAINS) {
    let json: unknown;
    try {
      json = JSON.parse(values.EVM_CHAINS);
    } catch {
      throw new ConfigError('Invalid configuration: EVM_CHAINS is not JSON');
    }
    // A chain's rows (nonces, sends, watcher cursor) name it by the database's blockchain enum: a new EVM chain is a value
    // there and in src/domain/rails.ts, then this entry.
    const parsed = z.partialRecord(z.enum(blockchains), evmChainEntry).safeParse(json);
    if (!parsed.success) throw new ConfigError(`Invalid configuration: EVM_CHAINS ${z.prettifyError(parsed.error)}`);
    return Object.fromEntries(
      Object.entries(parsed.data).map(([name, entry]) => [
        name,
        {
          chainId: entry.chain_id,
          rpcUrls: entry.rpc_urls,
          tokens: entry.tokens ?? null,
          collectionAddress: entry.collection_address ?? null,
          offRampAddress: entry.off_ramp_address ?? null,
          feeAddress: entry.fee_address ?? null,
          confirmations: entry.confirmations,
          treasuryAddresses: entry.treasury_addresses ?? null,
        },
      ]),
    );
  }
  if (!values.ETHEREUM_RPC_URL) return {};
  const fallbacks = (values.ETHEREUM_FALLBACK_RPC_URLS ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  for (const url of fallbacks)
    if (!z.url().safeParse(url).success)
      throw new ConfigError(`Invalid configuration: ETHEREUM_FALLBACK_RPC_URLS has a bad URL ${url}`);
  return {
    ethereum: {
      chainId: values.ETHEREUM_CHAIN_ID ?? null,
      rpcUrls: [values.ETHEREUM_RPC_URL, ...fallbacks],
      tokens:
        values.ETHEREUM_USDC_CONTRACT && values.ETHEREUM_USDT_CONTRACT
          ? { USDC: values.ETHEREUM_USDC_CONTRACT, USDT: values.ETHEREUM_USDT_CONTRACT }
          : null,
      collectionAddress: values.ETHEREUM_COLLECTION_ADDRESS ?? null,
      offRampAddress: values.ETHEREUM_OFF_RAMP_ADDRESS ?? null,
      feeAddress: values.ETHEREUM_FEE_ADDRESS ?? null,
      confirmations: values.ETHEREUM_CONFIRMATIONS,
      treasuryAddresses: values.ETHEREUM_TREASURY_ADDRESSES ?? null,
    },
  };
}

/** `ofac_sdn=https://...,un=file:///...`: each list once, a known source, a URL or an absolute path. */
export function parseScreeningLists(raw: string): { source: ListSource; url: string }[] {
  const lists = raw
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const source = pair.slice(0, at).trim();
      const url = pair.slice(at + 1).trim();
      if (at < 1 || !(loadableListSources as readonly string[]).includes(source)) {
        throw new ConfigError(
          `Invalid configuration: SCREENING_LISTS entry "${pair}" must be <source>=<url>, source one of ${loadableListSources.join(', ')}`,
        );
      }
      if (!/^(https?:\/\/|file:\/\/|\/)/.test(url)) {
        throw new ConfigError(
          `Invalid configuration: SCREENING_LISTS ${source} needs an http(s) or file URL or an absolute path`,
        );
      }
      return { source: source as ListSource, url };
    });
  if (new Set(lists.map((list) => list.source)).size !== lists.length) {
    throw new ConfigError('Invalid configuration: SCREENING_LISTS names a source twice');
  }
  if (lists.length === 0) throw new ConfigError('Invalid configuration: SCREENING_LISTS names no list');
  return lists;
}
