// The bank's ISO 20022 host-to-host API (docs/iso20022.md says why HTTPS and not SFTP): the service posts a pain.001,
// gets the pain.002 in the answer, and polls the bank's reports (pain.002 once settled, camt.054 for credits and
// returns) and the day's camt.053. Transfers settle later (ISO20022_SETTLE_MS); scenario controls under /_scenarios
// make it reject, lose an answer, go down, report a credit (twice on demand) or return a settled transfer.
// Its state is one JSON file in the stateDir, written before each answer: a restart is an outage, not amnesia.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import coBody from 'co-body';
import { Money, currencyOf } from '../../../src/domain/money';
import {
  Iso20022FormatError,
  buildCamt053,
  buildCamt054,
  buildPain002,
  parsePain001,
  type AccountId,
  type AgentId,
  type Entry,
  type StatusLine,
} from '../../../src/providers/iso20022/messages';
import type { BankChannel, BankSimulatorOptions } from '../channel';
import { simulatorServiceAccounts } from './accounts';

/** The service's accounts at this bank, one per currency. */
export const serviceAccounts: Record<'EUR' | 'USD', AccountId> = {
  EUR: { iban: simulatorServiceAccounts.EUR.iban },
  USD: { number: simulatorServiceAccounts.USD.account_number },
};

interface Transfer {
  endToEndId: string;
  messageId: string;
  currency: 'EUR' | 'USD';
  amount: string;
  creditorName: string;
  /** The account debited, as the pain.001 named it. */
  debtorAccount?: AccountId;
  /** Where the money goes: the account and bank the pain.001 named. */
  creditorAccount?: AccountId;
  creditorAgent?: AgentId;
  remittance?: string;
  status: 'ACCP' | 'ACSC' | 'RJCT';
  reason?: string;
  acceptedAt: string;
  returned?: string;
}

interface StoredEntry {
  reference: string;
  currency: 'EUR' | 'USD';
  amount: string;
  direction: 'CRDT' | 'DBIT';
  bookedAt: string;
  endToEndId?: string;
  returnReason?: string;
  counterpartyName?: string;
  counterpartyAccount?: AccountId;
  counterpartyAgent?: AgentId;
  remittance?: string;
}

interface Report {
  sequence: number;
  type: 'pain.002' | 'camt.054';
  xml: string;
}

interface Scenarios {
  /** Reject the next transfers with these ISO reason codes, one each. */
  rejectNext: string[];
  /** Accept the next pain.001 and lose its answer (the caller sees a 504). */
  loseNextStatus: number;
  /** Until then every request answers 503. */
  downUntil: string | null;
  /** Per payment (end-to-end id): reject it with this reason, or lose its next answers (the sandbox's `simulate`). */
  rejectIds?: Record<string, string>;
  loseIds?: Record<string, number>;
  /** Returns asked for later (`afterSeconds`): made when due by the settling timer. */
  pendingReturns?: Array<{ endToEndId: string; reason: string; dueAt: string }>;
}

interface State {
  sequence: number;
  transfers: Record<string, Transfer>;
  entries: StoredEntry[];
  reports: Report[];
  scenarios: Scenarios;
}

const emptyState = (): State => ({
  sequence: 0,
  transfers: {},
  entries: [],
  reports: [],
  scenarios: { rejectNext: [], loseNextStatus: 0, downUntil: null },
});

function asCurrency(code: string): 'EUR' | 'USD' {
  if (code !== 'EUR' && code !== 'USD') throw new Iso20022FormatError(`this bank keeps no ${code} account`);
  return code;
}

const day = (iso: string) => iso.slice(0, 10);

/**
 * The payer's account and bank of a scenario credit: `payerIban` and `payerBic` (EUR) or `payerAccount` and
 * `payerRouting` (USD), or a default payer of the currency.
 */
function payerAccountOf(
  currency: 'EUR' | 'USD',
  body: Record<string, unknown>,
): { counterpartyAccount: AccountId; counterpartyAgent: AgentId } {
  if (currency === 'EUR') {
    return {
      counterpartyAccount: { iban: String(body.payerIban ?? 'FR7630006000011234567890189') },
      counterpartyAgent: { bic: String(body.payerBic ?? 'AGRIFRPPXXX') },
    };
  }
  return {
    counterpartyAccount: { number: String(body.payerAccount ?? '987654321000') },
    counterpartyAgent: { abaRoutingNumber: String(body.payerRouting ?? '026009593') },
  };
}

export function iso20022Channel(options: BankSimulatorOptions): BankChannel {
  const file = path.join(options.stateDir, 'iso20022.json');
  const settleMs = Number(process.env.ISO20022_SETTLE_MS ?? 1000);
  const state: State = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as State) : emptyState();
  let timer: NodeJS.Timeout | undefined;

  const save = () => {
    writeFileSync(`${file}.tmp`, JSON.stringify(state));
    renameSync(`${file}.tmp`, file);
  };
  const nextId = (prefix: string) => `${prefix}-${++state.sequence}-${randomUUID().slice(0, 8)}`;
  const toEntry = (stored: StoredEntry): Entry => ({
    reference: stored.reference,
    amount: Money.parse(stored.currency, stored.amount),
    direction: stored.direction,
    bookingDate: day(stored.bookedAt),
    ...(stored.endToEndId ? { endToEndId: stored.endToEndId } : {}),
    ...(stored.returnReason ? { returnReason: stored.returnReason } : {}),
    ...(stored.counterpartyName ? { counterpartyName: stored.counterpartyName } : {}),
    ...(stored.counterpartyAccount ? { counterpartyAccount: stored.counterpartyAccount } : {}),
    ...(stored.counterpartyAgent ? { counterpartyAgent: stored.counterpartyAgent } : {}),
    ...(stored.remittance ? { remittance: stored.remittance } : {}),
  });
  const report = (type: Report['type'], xml: string) => state.reports.push({ sequence: ++state.sequence, type, xml });
  const notify = (stored: StoredEntry) => {
    state.entries.push(stored);
    const messageId = nextId('NTF');
    report(
      'camt.054',
      buildCamt054({
        messageId,
        createdAt: new Date(),
        account: serviceAccounts[stored.currency],
        entries: [toEntry(stored)],
      }),
    );
  };
  const status = (originalMessageId: string, statuses: StatusLine[]) =>
    buildPain002({ messageId: nextId('STS'), createdAt: new Date(), originalMessageId, statuses });

  /** A settled transfer comes back (closed account AC04, reason not given MS03...): notified by camt.054. */
  const returnTransfer = (transfer: Transfer, reason: string) => {
    transfer.returned = reason;
    notify({
      reference: nextId('RTRN'),
      currency: transfer.currency,
      amount: transfer.amount,
      direction: 'CRDT',
      bookedAt: new Date().toISOString(),
      endToEndId: transfer.endToEndId,
      returnReason: transfer.returned,
      counterpartyName: transfer.creditorName,
      ...(transfer.remittance ? { remittance: transfer.remittance } : {}),
    });
  };

  const settle = () => {
    const due = Date.now() - settleMs;
    let changed = false;
    const pending = state.scenarios.pendingReturns ?? [];
    for (const asked of pending.filter((item) => Date.parse(item.dueAt) <= Date.now())) {
      pending.splice(pending.indexOf(asked), 1);
      const transfer = state.transfers[asked.endToEndId];
      if (transfer?.status === 'ACSC' && !transfer.returned) returnTransfer(transfer, asked.reason);
      changed = true;
    }
    for (const transfer of Object.values(state.transfers)) {
      if (transfer.status !== 'ACCP' || Date.parse(transfer.acceptedAt) > due) continue;
      transfer.status = 'ACSC';
      state.entries.push({
        reference: nextId('BOOK'),
        currency: transfer.currency,
        amount: transfer.amount,
        direction: 'DBIT',
        bookedAt: new Date().toISOString(),
        endToEndId: transfer.endToEndId,
        counterpartyName: transfer.creditorName,
        ...(transfer.creditorAccount ? { counterpartyAccount: transfer.creditorAccount } : {}),
        ...(transfer.creditorAgent ? { counterpartyAgent: transfer.creditorAgent } : {}),
        ...(transfer.remittance ? { remittance: transfer.remittance } : {}),
      });
      report('pain.002', status(transfer.messageId, [{ endToEndId: transfer.endToEndId, status: 'ACSC' }]));
      changed = true;
    }
    if (changed) save();
  };

  const routes = new Router();
  // An outage answers every endpoint but the scenario controls.
  routes.use(async (ctx, next) => {
    const down = state.scenarios.downUntil;
    if (down && Date.parse(down) > Date.now() && !ctx.path.includes('/_scenarios')) {
      ctx.status = 503;
      ctx.body = 'the bank’s host-to-host service is unavailable';
      return;
    }
    await next();
  });

  routes.post('/payment-initiations', async (ctx) => {
    let message;
    try {
      message = parsePain001(await coBody.text(ctx.req, { limit: '1mb' }));
    } catch (error) {
      ctx.status = 400;
      ctx.body = error instanceof Error ? error.message : String(error);
      return;
    }
    const statuses: StatusLine[] = message.transfers.map((transfer) => {
      const known = state.transfers[transfer.endToEndId];
      // A repeated end-to-end id is the same payment: its status again, never a second one.
      if (known)
        return {
          endToEndId: known.endToEndId,
          status: known.status,
          ...(known.reason ? { reason: known.reason } : {}),
        };
      const targeted = state.scenarios.rejectIds?.[transfer.endToEndId];
      const reason = targeted ?? state.scenarios.rejectNext.shift();
      const currency = asCurrency(transfer.amount.currency);
      state.transfers[transfer.endToEndId] = {
        endToEndId: transfer.endToEndId,
        messageId: message.messageId,
        currency,
        amount: transfer.amount.toString(),
        creditorName: transfer.creditor.name,
        debtorAccount: message.debtor.account,
        creditorAccount: transfer.creditor.account,
        creditorAgent: transfer.creditor.agent,
        ...(transfer.remittance ? { remittance: transfer.remittance } : {}),
        status: reason ? 'RJCT' : 'ACCP',
        ...(reason ? { reason } : {}),
        acceptedAt: new Date().toISOString(),
      };
      return { endToEndId: transfer.endToEndId, status: reason ? 'RJCT' : 'ACCP', ...(reason ? { reason } : {}) };
    });
    const answer = status(message.messageId, statuses);
    report('pain.002', answer);
    const loseIds = (state.scenarios.loseIds ??= {});
    const targetedLoss = message.transfers.find((transfer) => (loseIds[transfer.endToEndId] ?? 0) > 0);
    const lose = targetedLoss !== undefined || state.scenarios.loseNextStatus > 0;
    if (targetedLoss) loseIds[targetedLoss.endToEndId]! -= 1;
    else if (lose) state.scenarios.loseNextStatus -= 1;
    save();
    if (lose) {
      ctx.status = 504;
      ctx.body = 'gateway timeout';
      return;
    }
    ctx.type = 'application/xml';
    ctx.body = answer;
  });

  /** The reports after `after` (a sequence), oldest first: pain.002 and camt.054 documents. */
  routes.get('/reports', (ctx) => {
    const after = Number(ctx.query.after ?? 0);
    const limit = Math.min(Number(ctx.query.limit ?? 100), 500);
    const reports = state.reports.filter((item) => item.sequence > after).slice(0, limit);
    // `head`: the newest sequence so far, where a reader that wants only what comes next starts.
    ctx.body = { reports, last: reports.at(-1)?.sequence ?? after, head: state.sequence };
  });

  /** The camt.053 of one account (currency) for one day (YYYY-MM-DD). */
  routes.get('/statements/:currency/:date', (ctx) => {
    const currency = asCurrency(ctx.params.currency!);
    const date = ctx.params.date!;
    const signed = (stored: StoredEntry) => {
      const amount = Money.parse(currency, stored.amount);
      return stored.direction === 'CRDT' ? amount : amount.negated();
    };
    const mine = state.entries.filter((stored) => stored.currency === currency);
    const opening = mine
      .filter((stored) => day(stored.bookedAt) < date)
      .reduce((sum, stored) => sum.plus(signed(stored)), Money.zero(currency));
    const lines = mine.filter((stored) => day(stored.bookedAt) === date);
    const closing = lines.reduce((sum, stored) => sum.plus(signed(stored)), opening);
    ctx.type = 'application/xml';
    ctx.body = buildCamt053({
      messageId: nextId('STM'),
      createdAt: new Date(),
      statementId: `${currency}-${date}`,
      account: serviceAccounts[currency],
      date,
      opening,
      closing,
      entries: lines.map(toEntry),
    });
  });

  /** A payment's current status as a pain.002 (404: the bank never received it). */
  routes.get('/payment-status/:endToEndId', (ctx) => {
    const transfer = state.transfers[ctx.params.endToEndId!];
    if (!transfer) {
      ctx.status = 404;
      return;
    }
    ctx.type = 'application/xml';
    ctx.body = status(transfer.messageId, [
      {
        endToEndId: transfer.endToEndId,
        status: transfer.status,
        ...(transfer.reason ? { reason: transfer.reason } : {}),
      },
    ]);
  });

  /** What the bank knows of a transfer (JSON, for tests and operators). */
  routes.get('/_scenarios/transfers/:endToEndId', (ctx) => {
    const transfer = state.transfers[ctx.params.endToEndId!];
    if (!transfer) ctx.status = 404;
    else ctx.body = transfer;
  });

  routes.post('/_scenarios', async (ctx) => {
    const body = (await coBody.json(ctx.req)) as Record<string, unknown>;
    switch (body.kind) {
      case 'reject_next':
        if (typeof body.endToEndId === 'string') {
          (state.scenarios.rejectIds ??= {})[body.endToEndId] = String(body.reason ?? 'AC01');
        } else state.scenarios.rejectNext.push(String(body.reason ?? 'AC01'));
        break;
      case 'lose_next_status':
        if (typeof body.endToEndId === 'string') {
          const loseIds = (state.scenarios.loseIds ??= {});
          loseIds[body.endToEndId] = (loseIds[body.endToEndId] ?? 0) + Number(body.times ?? 1);
        } else state.scenarios.loseNextStatus += 1;
        break;
      case 'down':
        state.scenarios.downUntil = new Date(Date.now() + Number(body.seconds ?? 10) * 1000).toISOString();
        break;
      case 'up':
        state.scenarios.downUntil = null;
        break;
      case 'credit': {
        // An incoming deposit to the service's account; `times: 2` reports the same credit twice.
        const currency = asCurrency(String(body.currency));
        const amount = Money.parse(currencyOf(currency), String(body.amount));
        const credit: StoredEntry = {
          reference: nextId('CRDT'),
          currency,
          amount: amount.toString(),
          direction: 'CRDT',
          bookedAt: new Date().toISOString(),
          endToEndId: String(body.endToEndId ?? randomUUID().replaceAll('-', '')),
          counterpartyName: String(body.payerName ?? 'Payer'),
          ...payerAccountOf(currency, body),
          ...(body.remittance ? { remittance: String(body.remittance) } : {}),
        };
        notify(credit);
        const copies = Number(body.times ?? 1);
        for (let copy = 1; copy < copies; copy += 1) {
          report('camt.054', state.reports.at(-1)!.xml);
        }
        ctx.body = { reference: credit.reference };
        save();
        return;
      }
      case 'return': {
        // A settled transfer comes back (closed account AC04, reason not given MS03...).
        const transfer = state.transfers[String(body.endToEndId)];
        if (!transfer || transfer.status !== 'ACSC' || transfer.returned) {
          ctx.status = 409;
          ctx.body = 'no settled, unreturned transfer with that end-to-end id';
          return;
        }
        if (body.afterSeconds !== undefined) {
          // Later, as a bank returns days after paying: `afterSeconds` from now.
          (state.scenarios.pendingReturns ??= []).push({
            endToEndId: transfer.endToEndId,
            reason: String(body.reason ?? 'AC04'),
            dueAt: new Date(Date.now() + Number(body.afterSeconds) * 1000).toISOString(),
          });
          break;
        }
        returnTransfer(transfer, String(body.reason ?? 'AC04'));
        break;
      }
      default:
        ctx.status = 400;
        ctx.body = `unknown scenario ${String(body.kind)}`;
        return;
    }
    save();
    ctx.body = { ok: true };
  });

  return {
    name: 'iso20022',
    routes,
    start() {
      timer = setInterval(settle, Math.max(100, Math.min(settleMs, 1000)));
    },
    stop() {
      if (timer) clearInterval(timer);
      save();
    },
  };
}
