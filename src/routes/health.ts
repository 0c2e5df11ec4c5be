// Health for load balancers and orchestrators: unauthenticated, no secrets, bounded. `live` says the process
// answers; `ready` says it can serve (database reachable with every migration applied, workflow engine
// reachable). The API starts while Temporal is down (ready answers 503) and recovers by itself.
import { z } from 'zod';
import { ApiError } from '../http/errors';
import { defineRoute } from '../http/route';
import { databaseChecks } from '../services/health';
import { temporalIsReachable } from '../temporal/health';

const tag = 'Health';
const CHECK_TIMEOUT_MS = 2_000;

const checkState = z.enum(['ok', 'unavailable', 'pending']);
const readySchema = z
  .object({
    status: z.literal('ok'),
    checks: z.object({ database: checkState, migrations: checkState, temporal: checkState }),
  })
  .meta({ id: 'Readiness' });

function bounded<T>(work: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), CHECK_TIMEOUT_MS);
  });
  return Promise.race([work.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

const live = defineRoute({
  method: 'get',
  path: '/health/live',
  operationId: 'healthLive',
  tag,
  auth: 'none',
  summary: 'Liveness',
  description: 'Answers 200 while the process can answer at all; checks nothing else.',
  response: { status: 200, description: 'The process is alive.', schema: z.object({ status: z.literal('ok') }) },
  async handler() {
    return { status: 'ok' as const };
  },
});

const ready = defineRoute({
  method: 'get',
  path: '/health/ready',
  operationId: 'healthReady',
  tag,
  auth: 'none',
  summary: 'Readiness',
  description:
    'Answers 200 when the database is reachable with every migration applied and the workflow engine is reachable; ' +
    'otherwise 503 `service_unavailable` (with `Retry-After`) naming what is not ready. Each check is bounded (2 s).',
  response: { status: 200, description: 'Ready to serve.', schema: readySchema },
  errors: ['service_unavailable'],
  async handler({ services }) {
    const [db, temporal] = await Promise.all([
      bounded(databaseChecks(services), { database: 'unavailable', migrations: 'unavailable' }),
      bounded(temporalIsReachable(services.temporal, CHECK_TIMEOUT_MS, { fresh: true }), false),
    ]);
    const checks = {
      database: db.database as z.infer<typeof checkState>,
      migrations: db.migrations as z.infer<typeof checkState>,
      temporal: temporal ? ('ok' as const) : ('unavailable' as const),
    };
    const failing = Object.entries(checks).filter(([, state]) => state !== 'ok');
    if (failing.length > 0) {
      throw ApiError.unavailable(`Not ready: ${failing.map(([name, state]) => `${name} ${state}`).join(', ')}.`);
    }
    return { status: 'ok' as const, checks };
  },
});

export const healthRoutes = [live, ready];
