// Configuration comes only from the environment. Invalid values stop start-up with a message that
// names the variable, so a misconfigured deployment fails at once instead of at first use.
import path from 'node:path';
import { z } from 'zod';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const environmentSchema = z
  .object({
    APP_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
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
    LOG_LEVEL: z.enum(logLevels).default('info'),
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
    /** Sandbox only: let webhook URLs point to loopback and private addresses (local development, tests). */
    WEBHOOK_ALLOW_PRIVATE_URLS: z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .default('false')
      .transform((value) => value === 'true'),
  })
  .superRefine((values, ctx) => {
    if (values.APP_ENV === 'production' && values.WEBHOOK_ALLOW_PRIVATE_URLS) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOK_ALLOW_PRIVATE_URLS'], message: 'cannot be true in production' });
    }
  });

export type AppEnvironment = 'sandbox' | 'production';

export interface AppConfig {
  appEnv: AppEnvironment;
  port: number;
  databaseUrl: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  logLevel: (typeof logLevels)[number];
  publicBaseUrl: string;
  documentStorageDir: string;
  sandboxVerificationDelaySeconds: number;
  webhooks: { timeoutSeconds: number; relaySweepSeconds: number; allowPrivateUrls: boolean };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
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
  return {
    appEnv: values.APP_ENV,
    port: values.PORT,
    databaseUrl: values.DATABASE_URL,
    temporal: {
      address: values.TEMPORAL_ADDRESS,
      namespace: values.TEMPORAL_NAMESPACE,
      taskQueue: values.TEMPORAL_TASK_QUEUE,
    },
    logLevel: values.LOG_LEVEL,
    publicBaseUrl: (values.PUBLIC_BASE_URL ?? `http://localhost:${values.PORT}`).replace(/\/+$/, ''),
    documentStorageDir: path.resolve(values.DOCUMENT_STORAGE_DIR),
    sandboxVerificationDelaySeconds: values.SANDBOX_VERIFICATION_DELAY_SECONDS,
    webhooks: {
      timeoutSeconds: values.WEBHOOK_TIMEOUT_SECONDS,
      relaySweepSeconds: values.WEBHOOK_RELAY_SWEEP_SECONDS,
      allowPrivateUrls: values.WEBHOOK_ALLOW_PRIVATE_URLS,
    },
  };
}

/** Runs a process entry point; a configuration error prints only its message (it names the variable). */
export function runEntryPoint(name: string, main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) console.error(error.message);
    else console.error(`${name} failed:`, error);
    process.exit(1);
  });
}
