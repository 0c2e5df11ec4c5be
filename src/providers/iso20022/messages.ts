// ISO 20022 messages exchanged with a bank: pain.001.001.09 (credit transfer initiation, sent), pain.002.001.10
// (payment status report), camt.054.001.08 (debit/credit notification) and camt.053.001.08 (end-of-day statement).
// Built and read with fast-xml-parser (never by concatenating strings); amounts are the money type's decimals, written
// with the currency's own decimals and read back as Money. The bank simulator uses the same codec for the messages it
// sends, so that both sides write what the other reads.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { validateXML } from 'xmllint-wasm';
import { Money, currencyOf } from '../../domain/money';

export const PAIN001 = 'pain.001.001.09';
export const PAIN002 = 'pain.002.001.10';
export const CAMT054 = 'camt.054.001.08';
export const CAMT053 = 'camt.053.001.08';

const namespace = (message: string) => `urn:iso:std:iso:20022:tech:xsd:${message}`;

/** A message that is not what its type says (wrong root, missing element, bad amount). */
export class Iso20022FormatError extends Error {
  override name = 'Iso20022FormatError';
}

/**
 * The EndToEndId of an operation: ISO limits it to 35 characters and an idempotency key (`<uuid>:<step>`) is longer, so
 * it is a digest of the key: the same key always gives the same id, and the bank's reports carry it back unchanged.
 */
export function endToEndIdOf(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey).digest('base64url').slice(0, 32);
}

/** An account as ISO names it: an IBAN, or another scheme's number (US account numbers). */
export type AccountId = { iban: string } | { number: string };
/** A bank: a BIC, or a clearing-system member id (US ABA routing number). */
export type AgentId = { bic: string } | { abaRoutingNumber: string };

export interface Party {
  name: string;
  account: AccountId;
  agent: AgentId;
}

/** SEPA credit transfer, US wire (Fedwire, urgent) or ACH (CCD, not urgent). */
export type Scheme = 'sepa' | 'wire' | 'ach';

export interface CreditTransfer {
  endToEndId: string;
  amount: Money;
  creditor: Party;
  remittance?: string;
}

export interface Pain001 {
  messageId: string;
  createdAt: Date;
  scheme: Scheme;
  /** YYYY-MM-DD */
  executionDate: string;
  debtor: Party;
  transfers: CreditTransfer[];
}

/** ACCP accepted (settles later), ACSC settled, RJCT rejected with an ISO reason code (AC01, AM04, ...). */
export type TransactionStatus = 'ACCP' | 'ACSC' | 'RJCT';

export interface StatusLine {
  endToEndId: string;
  status: TransactionStatus;
  reason?: string;
}

export interface Pain002 {
  messageId: string;
  createdAt: Date;
  originalMessageId: string;
  statuses: StatusLine[];
}

/** One booked movement of the account, as camt.054 notifies it and camt.053 lists it. */
export interface Entry {
  /** The bank's own reference of the entry (NtryRef / AcctSvcrRef), unique per movement. */
  reference: string;
  amount: Money;
  direction: 'CRDT' | 'DBIT';
  /** YYYY-MM-DD */
  bookingDate: string;
  /** The end-to-end id the movement carries: ours for transfers and their returns, the payer's for credits. */
  endToEndId?: string;
  /** A return: the ISO return reason (AC04, MS03, ...); the entry reverses the transfer of `endToEndId`. */
  returnReason?: string;
  /** The other side of the movement (the payer of a credit, the creditor of a transfer). */
  counterpartyName?: string;
  /** The other side's account and bank (RltdPties/DbtrAcct and RltdAgts/DbtrAgt of a credit): where a refund goes. */
  counterpartyAccount?: AccountId;
  counterpartyAgent?: AgentId;
  remittance?: string;
}

export interface Camt054 {
  messageId: string;
  createdAt: Date;
  account: AccountId;
  entries: Entry[];
}

export interface Camt053 {
  messageId: string;
  createdAt: Date;
  statementId: string;
  account: AccountId;
  /** YYYY-MM-DD: the day the statement covers. */
  date: string;
  opening: Money;
  closing: Money;
  entries: Entry[];
}

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  format: true,
  suppressEmptyNode: true,
});

const repeated = new Set([
  'CdtTrfTxInf',
  'PmtInf',
  'OrgnlPmtInfAndSts',
  'TxInfAndSts',
  'Ntfctn',
  'Stmt',
  'Ntry',
  'NtryDtls',
  'TxDtls',
  'Bal',
  'StsRsnInf',
  'Ustrd',
]);
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  // Namespace kept: the default xmlns names the message and its version, checked on reading.
  removeNSPrefix: false,
  // Amounts and ids stay text: a number parser would turn 10.10 into 10.1 and long ids into floats.
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (name) => repeated.has(name),
});

function document(message: string, body: Record<string, unknown>): string {
  return builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    Document: { '@_xmlns': namespace(message), ...body },
  }) as string;
}

const isoDateTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
const amountElement = (amount: Money) => ({ '@_Ccy': amount.currency, '#text': amount.toString() });
const accountElement = (account: AccountId) =>
  'iban' in account ? { Id: { IBAN: account.iban } } : { Id: { Othr: { Id: account.number } } };
const agentElement = (agent: AgentId) =>
  'bic' in agent
    ? { FinInstnId: { BICFI: agent.bic } }
    : { FinInstnId: { ClrSysMmbId: { ClrSysId: { Cd: 'USABA' }, MmbId: agent.abaRoutingNumber } } };

function paymentType(scheme: Scheme): Record<string, unknown> {
  switch (scheme) {
    case 'sepa':
      return { SvcLvl: { Cd: 'SEPA' } };
    case 'wire':
      return { InstrPrty: 'HIGH', SvcLvl: { Cd: 'URGP' } };
    case 'ach':
      return { InstrPrty: 'NORM', SvcLvl: { Cd: 'NURG' }, LclInstrm: { Cd: 'CCD' } };
  }
}

export function buildPain001(message: Pain001): string {
  if (message.transfers.length === 0) throw new Iso20022FormatError('a pain.001 needs at least one transfer');
  const currency = message.transfers[0]!.amount.currency;
  const total = message.transfers.reduce((sum, transfer) => sum.plus(transfer.amount), Money.zero(currency));
  return document(PAIN001, {
    CstmrCdtTrfInitn: {
      GrpHdr: {
        MsgId: message.messageId,
        CreDtTm: isoDateTime(message.createdAt),
        NbOfTxs: String(message.transfers.length),
        CtrlSum: total.toString(),
        InitgPty: { Nm: message.debtor.name },
      },
      PmtInf: {
        PmtInfId: message.messageId,
        PmtMtd: 'TRF',
        BtchBookg: 'false',
        NbOfTxs: String(message.transfers.length),
        CtrlSum: total.toString(),
        PmtTpInf: paymentType(message.scheme),
        ReqdExctnDt: { Dt: message.executionDate },
        Dbtr: { Nm: message.debtor.name },
        DbtrAcct: accountElement(message.debtor.account),
        DbtrAgt: agentElement(message.debtor.agent),
        ChrgBr: message.scheme === 'sepa' ? 'SLEV' : 'SHAR',
        CdtTrfTxInf: message.transfers.map((transfer) => ({
          PmtId: { InstrId: transfer.endToEndId, EndToEndId: transfer.endToEndId },
          Amt: { InstdAmt: amountElement(transfer.amount) },
          CdtrAgt: agentElement(transfer.creditor.agent),
          Cdtr: { Nm: transfer.creditor.name },
          CdtrAcct: accountElement(transfer.creditor.account),
          ...(transfer.remittance ? { RmtInf: { Ustrd: [transfer.remittance] } } : {}),
        })),
      },
    },
  });
}

let pain001Schema: string | undefined;

/** Beside this file under tsx; from dist/ (npm run build compiles TypeScript only) the source tree's copy. */
function schemaPath(file: string): string {
  const beside = path.join(__dirname, 'schemas', file);
  return existsSync(beside) ? beside : path.resolve(__dirname, '../../../../src/providers/iso20022/schemas', file);
}

// One validation at a time per process: each runs libxml2 (WebAssembly) in a worker thread of its own, so concurrent
// payouts held a thread and its memory each (the bench's worker peak rose past its bound).
let validations: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(run: () => Promise<T>): Promise<T> {
  const result = validations.then(run, run);
  validations = result.catch(() => undefined);
  return result;
}

/** Validates a pain.001.001.09 against the official XSD (schemas/SOURCE.md); throws Iso20022FormatError listing why. */
export async function validatePain001(xml: string): Promise<void> {
  pain001Schema ??= readFileSync(schemaPath(`${PAIN001}.xsd`), 'utf8');
  const schema = pain001Schema;
  const result = await oneAtATime(() =>
    validateXML({
      xml: [{ fileName: 'pain001.xml', contents: xml }],
      schema: [{ fileName: `${PAIN001}.xsd`, contents: schema }],
    }),
  );
  if (!result.valid) {
    throw new Iso20022FormatError(
      `pain.001 does not match ${PAIN001}.xsd: ${result.errors.map((error) => error.message).join('; ')}`,
    );
  }
}

export function buildPain002(message: Pain002): string {
  return document(PAIN002, {
    CstmrPmtStsRpt: {
      GrpHdr: { MsgId: message.messageId, CreDtTm: isoDateTime(message.createdAt) },
      OrgnlGrpInfAndSts: { OrgnlMsgId: message.originalMessageId, OrgnlMsgNmId: PAIN001 },
      OrgnlPmtInfAndSts: [
        {
          OrgnlPmtInfId: message.originalMessageId,
          TxInfAndSts: message.statuses.map((line) => ({
            OrgnlEndToEndId: line.endToEndId,
            TxSts: line.status,
            ...(line.reason ? { StsRsnInf: [{ Rsn: { Cd: line.reason } }] } : {}),
          })),
        },
      ],
    },
  });
}

function entryElement(entry: Entry): Record<string, unknown> {
  const side = entry.direction === 'CRDT' ? 'Dbtr' : 'Cdtr';
  const parties = {
    ...(entry.counterpartyName === undefined ? {} : { [side]: { Pty: { Nm: entry.counterpartyName } } }),
    ...(entry.counterpartyAccount ? { [`${side}Acct`]: accountElement(entry.counterpartyAccount) } : {}),
  };
  const related = {
    ...(Object.keys(parties).length > 0 ? { RltdPties: parties } : {}),
    ...(entry.counterpartyAgent ? { RltdAgts: { [`${side}Agt`]: agentElement(entry.counterpartyAgent) } } : {}),
  };
  return {
    NtryRef: entry.reference,
    Amt: amountElement(entry.amount),
    CdtDbtInd: entry.direction,
    ...(entry.returnReason ? { RvslInd: 'false' } : {}),
    Sts: { Cd: 'BOOK' },
    BookgDt: { Dt: entry.bookingDate },
    ValDt: { Dt: entry.bookingDate },
    AcctSvcrRef: entry.reference,
    BkTxCd: {
      Domn: {
        Cd: 'PMNT',
        Fmly: { Cd: entry.direction === 'CRDT' ? 'RCDT' : 'ICDT', SubFmlyCd: entry.returnReason ? 'RRTN' : 'ESCT' },
      },
    },
    NtryDtls: [
      {
        TxDtls: [
          {
            Refs: { AcctSvcrRef: entry.reference, ...(entry.endToEndId ? { EndToEndId: entry.endToEndId } : {}) },
            Amt: amountElement(entry.amount),
            CdtDbtInd: entry.direction,
            ...related,
            ...(entry.remittance ? { RmtInf: { Ustrd: [entry.remittance] } } : {}),
            ...(entry.returnReason ? { RtrInf: { Rsn: { Cd: entry.returnReason } } } : {}),
          },
        ],
      },
    ],
  };
}

export function buildCamt054(message: Camt054): string {
  return document(CAMT054, {
    BkToCstmrDbtCdtNtfctn: {
      GrpHdr: { MsgId: message.messageId, CreDtTm: isoDateTime(message.createdAt) },
      Ntfctn: [
        {
          Id: message.messageId,
          CreDtTm: isoDateTime(message.createdAt),
          Acct: accountElement(message.account),
          Ntry: message.entries.map(entryElement),
        },
      ],
    },
  });
}

export function buildCamt053(message: Camt053): string {
  const balance = (code: 'OPBD' | 'CLBD', amount: Money) => ({
    Tp: { CdOrPrtry: { Cd: code } },
    Amt: amountElement(amount.isNegative() ? amount.negated() : amount),
    CdtDbtInd: amount.isNegative() ? 'DBIT' : 'CRDT',
    Dt: { Dt: message.date },
  });
  return document(CAMT053, {
    BkToCstmrStmt: {
      GrpHdr: { MsgId: message.messageId, CreDtTm: isoDateTime(message.createdAt) },
      Stmt: [
        {
          Id: message.statementId,
          CreDtTm: isoDateTime(message.createdAt),
          FrToDt: { FrDtTm: `${message.date}T00:00:00Z`, ToDtTm: `${message.date}T23:59:59Z` },
          Acct: accountElement(message.account),
          Bal: [balance('OPBD', message.opening), balance('CLBD', message.closing)],
          Ntry: message.entries.map(entryElement),
        },
      ],
    },
  });
}

// Reading: a missing element is a format error, never an undefined that travels on.
type Node = Record<string, unknown>;

function child(node: unknown, name: string, where: string): Node {
  const value = (node as Node | undefined)?.[name];
  if (value === undefined || value === null || typeof value !== 'object') {
    throw new Iso20022FormatError(`${where}: missing ${name}`);
  }
  return value as Node;
}

function optionalChild(node: unknown, name: string): Node | undefined {
  const value = (node as Node | undefined)?.[name];
  return value !== null && typeof value === 'object' ? (value as Node) : undefined;
}

function text(node: unknown, name: string, where: string): string {
  const value = (node as Node | undefined)?.[name];
  const found = typeof value === 'object' && value !== null ? (value as Node)['#text'] : value;
  if (typeof found !== 'string' || found === '') throw new Iso20022FormatError(`${where}: missing ${name}`);
  return found;
}

function optionalText(node: unknown, name: string): string | undefined {
  const value = (node as Node | undefined)?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function list(node: unknown, name: string): Node[] {
  const value = (node as Node | undefined)?.[name];
  return Array.isArray(value) ? (value as Node[]) : [];
}

function root(xml: string, message: string, element: string): Node {
  const parsed = parser.parse(xml) as Node;
  const doc = child(parsed, 'Document', message);
  if (doc['@_xmlns'] !== namespace(message)) {
    throw new Iso20022FormatError(`expected a ${message} document, got ${String(doc['@_xmlns'])}`);
  }
  return child(doc, element, message);
}

function amountOf(node: Node, name: string, where: string): Money {
  const amount = child(node, name, where);
  const currency = amount['@_Ccy'];
  if (typeof currency !== 'string') throw new Iso20022FormatError(`${where}: ${name} without Ccy`);
  return Money.parse(currencyOf(currency), text(node, name, where));
}

function accountOf(node: Node, where: string): AccountId {
  const id = child(node, 'Id', where);
  const iban = optionalText(id, 'IBAN');
  return iban ? { iban } : { number: text(child(id, 'Othr', where), 'Id', where) };
}

function agentOf(node: Node, where: string): AgentId {
  const institution = child(node, 'FinInstnId', where);
  const bic = optionalText(institution, 'BICFI');
  return bic ? { bic } : { abaRoutingNumber: text(child(institution, 'ClrSysMmbId', where), 'MmbId', where) };
}

function dateOf(node: Node, name: string, where: string): string {
  return text(child(node, name, where), 'Dt', where);
}

export function parsePain001(xml: string): Pain001 {
  const body = root(xml, PAIN001, 'CstmrCdtTrfInitn');
  const header = child(body, 'GrpHdr', 'GrpHdr');
  const payments = list(body, 'PmtInf');
  if (payments.length !== 1) throw new Iso20022FormatError('pain.001: exactly one PmtInf is accepted');
  const payment = payments[0]!;
  const serviceLevel = text(child(child(payment, 'PmtTpInf', 'PmtInf'), 'SvcLvl', 'PmtTpInf'), 'Cd', 'SvcLvl');
  const scheme: Scheme = serviceLevel === 'SEPA' ? 'sepa' : serviceLevel === 'URGP' ? 'wire' : 'ach';
  return {
    messageId: text(header, 'MsgId', 'GrpHdr'),
    createdAt: new Date(text(header, 'CreDtTm', 'GrpHdr')),
    scheme,
    executionDate: dateOf(payment, 'ReqdExctnDt', 'PmtInf'),
    debtor: {
      name: text(child(payment, 'Dbtr', 'PmtInf'), 'Nm', 'Dbtr'),
      account: accountOf(child(payment, 'DbtrAcct', 'PmtInf'), 'DbtrAcct'),
      agent: agentOf(child(payment, 'DbtrAgt', 'PmtInf'), 'DbtrAgt'),
    },
    transfers: list(payment, 'CdtTrfTxInf').map((transfer) => {
      const remittance = list(optionalChild(transfer, 'RmtInf'), 'Ustrd')[0];
      return {
        endToEndId: text(child(transfer, 'PmtId', 'CdtTrfTxInf'), 'EndToEndId', 'PmtId'),
        amount: amountOf(child(transfer, 'Amt', 'CdtTrfTxInf'), 'InstdAmt', 'Amt'),
        creditor: {
          name: text(child(transfer, 'Cdtr', 'CdtTrfTxInf'), 'Nm', 'Cdtr'),
          account: accountOf(child(transfer, 'CdtrAcct', 'CdtTrfTxInf'), 'CdtrAcct'),
          agent: agentOf(child(transfer, 'CdtrAgt', 'CdtTrfTxInf'), 'CdtrAgt'),
        },
        ...(typeof remittance === 'string' ? { remittance } : {}),
      };
    }),
  };
}

export function parsePain002(xml: string): Pain002 {
  const body = root(xml, PAIN002, 'CstmrPmtStsRpt');
  const header = child(body, 'GrpHdr', 'GrpHdr');
  return {
    messageId: text(header, 'MsgId', 'GrpHdr'),
    createdAt: new Date(text(header, 'CreDtTm', 'GrpHdr')),
    originalMessageId: text(child(body, 'OrgnlGrpInfAndSts', 'pain.002'), 'OrgnlMsgId', 'OrgnlGrpInfAndSts'),
    statuses: list(body, 'OrgnlPmtInfAndSts').flatMap((payment) =>
      list(payment, 'TxInfAndSts').map((line) => {
        const status = text(line, 'TxSts', 'TxInfAndSts');
        if (status !== 'ACCP' && status !== 'ACSC' && status !== 'RJCT') {
          throw new Iso20022FormatError(`pain.002: unexpected TxSts ${status}`);
        }
        const reason = optionalText(optionalChild(list(line, 'StsRsnInf')[0], 'Rsn'), 'Cd');
        return {
          endToEndId: text(line, 'OrgnlEndToEndId', 'TxInfAndSts'),
          status,
          ...(reason ? { reason } : {}),
        };
      }),
    ),
  };
}

function entryOf(node: Node): Entry {
  const direction = text(node, 'CdtDbtInd', 'Ntry');
  if (direction !== 'CRDT' && direction !== 'DBIT') throw new Iso20022FormatError(`Ntry: CdtDbtInd ${direction}`);
  const details = list(list(node, 'NtryDtls')[0], 'TxDtls')[0];
  const refs = optionalChild(details, 'Refs');
  const parties = optionalChild(details, 'RltdPties');
  const counterparty = optionalChild(optionalChild(parties, direction === 'CRDT' ? 'Dbtr' : 'Cdtr'), 'Pty');
  const endToEndId = optionalText(refs, 'EndToEndId');
  const returnReason = optionalText(optionalChild(optionalChild(details, 'RtrInf'), 'Rsn'), 'Cd');
  const counterpartyName = optionalText(counterparty, 'Nm');
  const side = direction === 'CRDT' ? 'Dbtr' : 'Cdtr';
  const accountNode = optionalChild(parties, `${side}Acct`);
  const agentNode = optionalChild(optionalChild(details, 'RltdAgts'), `${side}Agt`);
  const remittance = list(optionalChild(details, 'RmtInf'), 'Ustrd')[0];
  return {
    reference: optionalText(node, 'AcctSvcrRef') ?? text(node, 'NtryRef', 'Ntry'),
    amount: amountOf(node, 'Amt', 'Ntry'),
    direction,
    bookingDate: dateOf(node, 'BookgDt', 'Ntry'),
    ...(endToEndId ? { endToEndId } : {}),
    ...(returnReason ? { returnReason } : {}),
    ...(counterpartyName ? { counterpartyName } : {}),
    ...(accountNode ? { counterpartyAccount: accountOf(accountNode, `${side}Acct`) } : {}),
    ...(agentNode ? { counterpartyAgent: agentOf(agentNode, `${side}Agt`) } : {}),
    ...(typeof remittance === 'string' ? { remittance } : {}),
  };
}

export function parseCamt054(xml: string): Camt054 {
  const body = root(xml, CAMT054, 'BkToCstmrDbtCdtNtfctn');
  const header = child(body, 'GrpHdr', 'GrpHdr');
  const notifications = list(body, 'Ntfctn');
  if (notifications.length === 0) throw new Iso20022FormatError('camt.054: no Ntfctn');
  return {
    messageId: text(header, 'MsgId', 'GrpHdr'),
    createdAt: new Date(text(header, 'CreDtTm', 'GrpHdr')),
    account: accountOf(child(notifications[0], 'Acct', 'Ntfctn'), 'Acct'),
    entries: notifications.flatMap((notification) => list(notification, 'Ntry').map(entryOf)),
  };
}

export function parseCamt053(xml: string): Camt053 {
  const body = root(xml, CAMT053, 'BkToCstmrStmt');
  const header = child(body, 'GrpHdr', 'GrpHdr');
  const statement = list(body, 'Stmt')[0];
  if (!statement) throw new Iso20022FormatError('camt.053: no Stmt');
  const balance = (code: string): Money => {
    const found = list(statement, 'Bal').find(
      (node) => optionalText(optionalChild(optionalChild(node, 'Tp'), 'CdOrPrtry'), 'Cd') === code,
    );
    if (!found) throw new Iso20022FormatError(`camt.053: no ${code} balance`);
    const amount = amountOf(found, 'Amt', 'Bal');
    return text(found, 'CdtDbtInd', 'Bal') === 'DBIT' ? amount.negated() : amount;
  };
  return {
    messageId: text(header, 'MsgId', 'GrpHdr'),
    createdAt: new Date(text(header, 'CreDtTm', 'GrpHdr')),
    statementId: text(statement, 'Id', 'Stmt'),
    account: accountOf(child(statement, 'Acct', 'Stmt'), 'Acct'),
    date: text(child(statement, 'FrToDt', 'Stmt'), 'FrDtTm', 'FrToDt').slice(0, 10),
    opening: balance('OPBD'),
    closing: balance('CLBD'),
    entries: list(statement, 'Ntry').map(entryOf),
  };
}
