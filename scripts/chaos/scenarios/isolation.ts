// Scenario 7, partner isolation: two partners, each with one resource of every kind. For every authenticated
// operation of the OpenAPI document that takes an id (in its path, its query or its body), each partner sends the
// other's ids and, in the same request otherwise, an unknown id of the same form: the two answers must be identical
// (status and body, the id itself aside). Then every list and every read each partner can make (every page) must
// name none of the other partner's ids, and the other partner's rows must be unchanged.
import { randomBytes, randomUUID } from 'node:crypto';
import { WebhookReceiver } from '../../../test/support/webhook-receiver';
import { buildWorld, documentUpload, idsForPathParam, PartnerWorld, validBody } from '../fixtures';
import { HttpOutcome, HttpRequest } from '../http';
import { partnerState } from '../invariants';
import { describeApi, fillPath, Operation } from '../openapi';
import { RunSize, ScenarioReport } from '../report';
import type { ChaosSystem } from '../system';

const uuidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const MAX_PAGES = 50;

/** The other partner's ids a body or query field named `<kind>_id` can take. */
function idsForField(field: string, world: PartnerWorld): string[] | undefined {
  const byField: Record<string, string[]> = {
    customer_id: [world.approvedCustomerId, world.pendingCustomerId],
    wallet_id: [world.walletId, world.solanaWalletId],
    from_wallet_id: [world.solanaWalletId],
    to_wallet_id: [world.walletId],
    external_account_id: [world.externalAccountId, world.speiAccountId],
    virtual_account_id: [world.virtualAccountId],
    quote_id: [world.quoteId, world.fiatToFiatQuoteId, world.payoutQuoteId],
    transaction_id: [world.transactionId],
    event_resource_id: [world.approvedCustomerId, world.externalAccountId, world.virtualAccountId],
    // The event stream resumes after an event: another partner's must answer as an unknown one.
    last_event_id: [world.eventId],
  };
  return byField[field];
}

/** An id nobody has, of the same form as `id` (UUID or verification token). */
function unknownLike(id: string): string {
  return /^[0-9a-f-]{36}$/i.test(id) ? randomUUID() : randomBytes(24).toString('base64url');
}

/** The answer with `id` replaced by a placeholder: what must be equal between another's id and an unknown one. */
function normalised(outcome: HttpOutcome, id: string): string {
  if (outcome.kind === 'network') return `network ${outcome.code}`;
  return `${outcome.status} ${outcome.text.split(id).join('<id>')}`;
}

/** Paths (in a JSON body) of fields named like ids, e.g. `receiver.wallet_id`. */
function idFields(body: unknown, path: string[] = []): string[][] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  return Object.entries(body as Record<string, unknown>).flatMap(([key, value]) =>
    key.endsWith('_id') && typeof value === 'string' ? [[...path, key]] : idFields(value, [...path, key]),
  );
}

function withField(body: Record<string, unknown>, path: string[], value: string): Record<string, unknown> {
  const copy = structuredClone(body);
  let target = copy;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[path[path.length - 1] as string] = value;
  return copy;
}

/** The request of `operation` as `as` with valid parts, its path parameters from `pathIds` (own ids otherwise). */
function requestOf(
  operation: Operation,
  as: PartnerWorld,
  pathIds: Record<string, string>,
  body?: Record<string, unknown>,
): HttpRequest {
  const values = Object.fromEntries(
    operation.pathParams.map((param) => [
      param,
      pathIds[param] ?? (idsForPathParam(operation.template, param, as) ?? [])[0] ?? '',
    ]),
  );
  const request: HttpRequest = { method: operation.method, path: fillPath(operation.template, values) };
  if (operation.bodyType === 'application/json') request.json = body ?? validBody(operation.operationId, as);
  if (operation.bodyType === 'multipart/form-data') {
    const upload = documentUpload({ document_type: 'PROOF_OF_ADDRESS' });
    request.headers = { 'Content-Type': upload.contentType };
    request.body = upload.body;
  }
  return request;
}

/** How the other partner's ids were answered, by status (printed with the summary). */
const statuses = new Map<string, number>();

async function compare(
  report: ScenarioReport,
  as: PartnerWorld,
  what: string,
  foreignId: string,
  build: (id: string) => HttpRequest,
): Promise<void> {
  const unknown = unknownLike(foreignId);
  const foreign = await as.partner.api.send(build(foreignId));
  const nobody = await as.partner.api.send(build(unknown));
  report.cases += 1;
  const status = foreign.kind === 'response' ? String(foreign.status) : 'none';
  statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const [a, b] = [normalised(foreign, foreignId), normalised(nobody, unknown)];
  report.check(
    a === b,
    () => `${what}: another partner's id answers "${a.slice(0, 200)}", an unknown id "${b.slice(0, 200)}"`,
  );
}

/** Every id a partner's reads show: each read operation with its own ids, and every page of every list. */
async function idsSeenBy(world: PartnerWorld, operations: Operation[]): Promise<{ ids: Set<string>; reads: number }> {
  const ids = new Set<string>();
  let reads = 0;
  for (const operation of operations.filter((op) => op.method === 'GET' && op.authenticated)) {
    const base = fillPath(
      operation.template,
      Object.fromEntries(
        operation.pathParams.map((param) => [
          param,
          (idsForPathParam(operation.template, param, world) ?? [''])[0] as string,
        ]),
      ),
    );
    const pages = operation.queryParams.includes('limit');
    let path: string | null = pages ? `${base}?limit=100` : base;
    for (let page = 0; path && page < MAX_PAGES; page += 1) {
      const outcome = await world.partner.api.send({ method: 'GET', path });
      reads += 1;
      if (outcome.kind !== 'response') break;
      for (const match of outcome.text.match(uuidPattern) ?? []) ids.add(match.toLowerCase());
      const after = (outcome.body as { cursor?: { after?: string | null } } | undefined)?.cursor?.after;
      path = pages && after ? `${base}?limit=100&after=${after}` : null;
    }
  }
  return { ids, reads };
}

/** Every id of the partner's rows in the database. */
async function idsOwnedBy(system: ChaosSystem, partnerId: string): Promise<Set<string>> {
  const where = { where: { partnerId }, select: { id: true } };
  const rows = await Promise.all([
    system.prisma.customer.findMany(where),
    system.prisma.externalAccount.findMany(where),
    system.prisma.wallet.findMany(where),
    system.prisma.virtualAccount.findMany(where),
    system.prisma.quote.findMany(where),
    system.prisma.transaction.findMany(where),
    system.prisma.walletTransfer.findMany(where),
    system.prisma.event.findMany(where),
    system.prisma.webhookDelivery.findMany(where),
    system.prisma.webhookConfig.findMany(where),
    system.prisma.beneficiary.findMany({ where: { customer: { partnerId } }, select: { id: true } }),
    system.prisma.customerDocument.findMany({ where: { customer: { partnerId } }, select: { id: true } }),
  ]);
  return new Set([partnerId, ...rows.flat().map((row) => row.id.toLowerCase())]);
}

async function probe(
  system: ChaosSystem,
  report: ScenarioReport,
  operations: Operation[],
  as: PartnerWorld,
  other: PartnerWorld,
): Promise<void> {
  for (const operation of operations) {
    if (!operation.authenticated) continue; // health, and hosted pages whose token is the capability
    const label = `${as.partner.partnerId.slice(0, 8)} ${operation.method} ${operation.template}`;
    for (const param of operation.pathParams) {
      const foreignIds = idsForPathParam(operation.template, param, other);
      if (!report.check(foreignIds !== undefined, () => `${label}: no fixture id for {${param}}`)) continue;
      for (const foreignId of foreignIds ?? [])
        await compare(report, as, `${label} {${param}}`, foreignId, (id) => requestOf(operation, as, { [param]: id }));
    }
    for (const param of operation.queryParams.filter((name) => name.endsWith('_id'))) {
      const foreignIds = idsForField(param, other);
      if (!report.check(foreignIds !== undefined, () => `${label}: no fixture id for query ${param}`)) continue;
      for (const foreignId of foreignIds ?? [])
        await compare(report, as, `${label} ?${param}`, foreignId, (id) => {
          const request = requestOf(operation, as, {});
          return { ...request, path: `${request.path}?${param}=${id}` };
        });
    }
    if (operation.bodyType === 'application/json') {
      const body = validBody(operation.operationId, as);
      if (!report.check(body !== undefined, () => `${label}: no valid body template`)) continue;
      for (const path of idFields(body)) {
        const field = path[path.length - 1] as string;
        const foreignIds = idsForField(field, other);
        if (!report.check(foreignIds !== undefined, () => `${label}: no fixture id for body ${path.join('.')}`))
          continue;
        for (const foreignId of foreignIds ?? [])
          await compare(report, as, `${label} body ${path.join('.')}`, foreignId, (id) =>
            requestOf(operation, as, {}, withField(body as Record<string, unknown>, path, id)),
          );
      }
    }
  }
}

export async function isolationScenario(system: ChaosSystem, report: ScenarioReport, _size: RunSize): Promise<void> {
  statuses.clear();
  const receiver = await WebhookReceiver.start();
  try {
    const [first, second] = [
      await buildWorld(system, 'chaos isolation A', receiver.url),
      await buildWorld(system, 'chaos isolation B', receiver.url),
    ];
    const { operations } = await describeApi(system.http);
    const before = await Promise.all([
      partnerState(system, first.partner.partnerId),
      partnerState(system, second.partner.partnerId),
    ]);
    await probe(system, report, operations, first, second);
    await probe(system, report, operations, second, first);

    let reads = 0;
    for (const [as, other] of [
      [first, second],
      [second, first],
    ] as const) {
      const seen = await idsSeenBy(as, operations);
      reads += seen.reads;
      const foreign = await idsOwnedBy(system, other.partner.partnerId);
      report.eventsChecked += await system.prisma.event.count({ where: { partnerId: other.partner.partnerId } });
      for (const id of seen.ids)
        report.check(
          !foreign.has(id),
          () => `partner ${as.partner.partnerId} can read ${id}, which belongs to partner ${other.partner.partnerId}`,
        );
    }
    report.notes.reads = reads;
    report.notes.statuses = [...statuses].map(([status, count]) => `${status}:${count}`).join(',');
    const after = await Promise.all([
      partnerState(system, first.partner.partnerId),
      partnerState(system, second.partner.partnerId),
    ]);
    before.forEach((state, index) => {
      for (const [table, value] of Object.entries(state))
        report.check(
          after[index]?.[table] === value,
          () => `partner ${index === 0 ? 'A' : 'B'}: ${table} changed from ${value} to ${after[index]?.[table]}`,
        );
    });
  } finally {
    await receiver.close();
  }
}
