// HTTP operations on reports: the day's settlements, for a partner's finance team (docs/reconciliation.md).
import { z } from 'zod';
import { defineRoute } from '../http/route';
import { settlementReportQuerySchema } from '../schemas/reports';
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
    '`YYYY-MM-DD HH:MM:SS` in UTC); JSON (the `SettlementReport` schema, times in ISO 8601) with `format=json` or ' +
    '`Accept: application/json`. Streamed: a day of any size. Fees are what the transaction kept (0 unless ' +
    'completed), so the fee columns add up to what the ledger collected for these transactions. Columns: ' +
    `${settlementColumns.map((column) => `\`${column}\``).join(', ')}.`,
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
