// HTTP operations on reports: the day's settlements, for a partner's finance team (docs/reconciliation.md).
import { z } from 'zod';
import { defineRoute } from '../http/route';
import { settlementReportColumns, settlementReportQuerySchema } from '../schemas/reports';
import { settlementColumns, settlementReport } from '../services/reports';

const getSettlementReport = defineRoute({
  method: 'get',
  path: '/v1/reports/settlements',
  operationId: 'getSettlementReport',
  tag: 'Reports',
  summary: 'Get the settlement report of a day',
  description:
    'One row per transaction of yours that reached a final status (`completed`, `refunded`, `cancelled`, `failed`) ' +
    'on `date`, a UTC day, in the order they did. CSV by default (a header row, comma-separated, CRLF line ends, UTF-8; ' +
    'it opens in a spreadsheet as is: amounts as plain decimals at the currency’s decimals, times as ' +
    '`YYYY-MM-DD HH:MM:SS` in UTC); JSON (an object with `date`, `time_zone` and `items`, one object per row ' +
    'keyed by the columns, times in ISO 8601) with `format=json` or `Accept: application/json`. Streamed: a day of ' +
    'any size. The leg amounts are the quote’s; the fee columns are what the transaction kept (0 unless completed) ' +
    'and `deposit_received`, `returned_to_sender`, `sell_back_proceeds` and `fx_gain_loss` what really moved, both ' +
    'as the ledger has them, so they add up to what it holds for these transactions. Columns, in order:\n\n' +
    settlementColumns.map((column) => `- \`${column}\`: ${settlementReportColumns[column]}`).join('\n'),
  query: settlementReportQuerySchema,
  response: {
    status: 200,
    description: 'The report (CSV; JSON on request).',
    contentType: 'text/csv',
    schema: z.string(),
  },
  async handler({ query, partner, services, koa }) {
    const format =
      query.format ?? (koa.accepts('text/csv', 'application/json') === 'application/json' ? 'json' : 'csv');
    const report = await settlementReport(services.prisma, partner.id, query.date, format);
    koa.set('Content-Disposition', `attachment; filename="${report.filename}"`);
    koa.type = report.contentType;
    return report.body as never;
  },
});

export const reportRoutes = [getSettlementReport];
