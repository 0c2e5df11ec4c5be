// The settlement report: a partner's transactions that reached a final status on one UTC day, one row each, as CSV
// (opens in a spreadsheet as is) or JSON, streamed a batch at a time (docs/reconciliation.md has the columns).
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { Money, currencyOf } from '../domain/money';
import type { Database, DatabaseClient } from '../persistence/database';
import { settlementBatch, type SettlementRow } from '../persistence/reports';
import { fxExecutionsOf, type FxExecutionRow } from '../persistence/fx-executions';
import { type SettlementReportColumn, settlementReportColumns } from '../schemas/reports';

/** Rows read per query: bounded memory whatever the day's volume. */
const BATCH = 500;

/** The report's columns, in order (CSV header = JSON keys); what each means is in src/schemas/reports.ts. */
export const settlementColumns = Object.keys(settlementReportColumns) as SettlementReportColumn[];

export type SettlementReportRow = Record<SettlementReportColumn, string | null>;

const amount = (currency: string | null, value: { toString(): string } | null) =>
  currency && value !== null ? Money.of(currencyOf(currency), value.toString()).toString() : null;

/**
 * A row as reported. Fees are what the transaction kept, as the ledger has them: the quote's when it completed, 0
 * when it was refunded (the refund gives them back), cancelled or failed (nothing was charged). The amounts of the
 * legs are the quote's; what the deposit, the refund and a sell-back moved is the ledger's, in the sender currency.
 */
export function toSettlementReportRow(
  row: SettlementRow,
  timestamp: (date: Date) => string,
  fx: readonly FxExecutionRow[] = [],
): SettlementReportRow {
  const leg = (step: string) => fx.find((execution) => execution.step === step);
  const [leg1, leg2] = [leg('fiat_to_stablecoin'), leg('stablecoin_to_fiat')];
  const rate = (index: number) => row.rates[index]?.toFixed(8) ?? null;
  const [senderQuotation, receiverQuotation] =
    row.type === 'fiat_to_fiat' ? [rate(0), rate(1)] : row.type === 'payin' ? [rate(0), null] : [null, rate(0)];
  const kept = (fee: { toString(): string }) => amount(row.senderCurrency, row.status === 'completed' ? fee : '0');
  return {
    transaction_id: row.id,
    type: row.type,
    customer_id: row.customerId,
    status: row.status,
    failure_reason: row.failureReason,
    sender_currency: row.senderCurrency,
    sender_amount: amount(row.senderCurrency, row.senderAmount),
    sender_payment_rail: row.senderPaymentRail,
    stablecoin_currency: row.stablecoinCurrency,
    stablecoin_amount: amount(row.stablecoinCurrency, row.stablecoinAmount),
    stablecoin_payment_rail: row.stablecoinPaymentRail,
    receiver_currency: row.receiverCurrency,
    receiver_amount: amount(row.receiverCurrency, row.receiverAmount),
    receiver_payment_rail: row.receiverPaymentRail,
    sender_quotation: senderQuotation,
    receiver_quotation: receiverQuotation,
    fee_currency: row.senderCurrency,
    service_fee: kept(row.serviceFee),
    partner_fee: kept(row.partnerFee),
    network_fee: kept(row.networkFee),
    deposit_received: amount(row.senderCurrency, row.depositReceived),
    returned_to_sender: amount(row.senderCurrency, row.returnedToSender),
    sell_back_proceeds: amount(row.senderCurrency, row.sellBackProceeds),
    fx_gain_loss: amount(row.senderCurrency, row.fxGainLoss),
    created_at: timestamp(row.createdAt),
    finalized_at: timestamp(row.finalizedAt),
    sender_executed_rate: leg1 ? leg1.price : null,
    sender_fx_result: leg1 ? leg1.result.toString() : null,
    receiver_executed_rate: leg2 ? leg2.price : null,
    receiver_fx_result: leg2 ? leg2.result.toString() : null,
  };
}

/** Spreadsheets read `2026-11-25 14:03:07` as a date and time (UTC); ISO 8601 with `T` and `Z` they keep as text. */
const spreadsheetTime = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
const isoTime = (date: Date) => date.toISOString();

/**
 * The report of `date` (YYYY-MM-DD, the UTC day) for a partner. The first batch is read before answering (a database
 * that cannot answer fails the request, not the stream); the rest are read as the client takes the body.
 */
export async function settlementReport(
  db: DatabaseClient,
  partnerId: string,
  date: string,
  format: 'csv' | 'json',
): Promise<{ contentType: string; filename: string; body: Readable }> {
  const from = new Date(`${date}T00:00:00.000Z`);
  const to = new Date(from.getTime() + 24 * 3600 * 1000);
  const batch = (after: SettlementRow | undefined) =>
    settlementBatch(db, {
      partnerId,
      from,
      to,
      after: after ? { finalizedAt: after.finalizedAt, eventId: after.eventId } : null,
      limit: BATCH,
    });
  // Each batch with its rows' FX executions (one more query per batch, by the transactions' ids).
  const withFx = async (read: SettlementRow[]) => {
    const executions = await fxExecutionsOf(
      db,
      read.map((row) => row.id),
    );
    return read.map((row) => ({ row, fx: executions.filter((execution) => execution.transactionId === row.id) }));
  };
  const first = await withFx(await batch(undefined));
  async function* rows(): AsyncGenerator<{ row: SettlementRow; fx: FxExecutionRow[] }> {
    let rowsRead = first;
    while (rowsRead.length > 0) {
      yield* rowsRead;
      if (rowsRead.length < BATCH) return;
      rowsRead = await withFx(await batch(rowsRead[rowsRead.length - 1]!.row));
    }
  }
  if (format === 'json') {
    async function* json(): AsyncGenerator<string> {
      yield `{"date":${JSON.stringify(date)},"time_zone":"UTC","items":[`;
      let separator = '';
      for await (const { row, fx } of rows()) {
        yield separator + JSON.stringify(toSettlementReportRow(row, isoTime, fx));
        separator = ',';
      }
      yield ']}';
    }
    return { contentType: 'application/json', filename: `settlements-${date}.json`, body: Readable.from(json()) };
  }
  const csv = stringify({ header: true, columns: [...settlementColumns], record_delimiter: 'windows' });
  const source = Readable.from(
    (async function* () {
      for await (const { row, fx } of rows()) yield toSettlementReportRow(row, spreadsheetTime, fx);
    })(),
  );
  source.on('error', (error) => csv.destroy(error));
  source.pipe(csv);
  return { contentType: 'text/csv; charset=utf-8', filename: `settlements-${date}.csv`, body: csv };
}
