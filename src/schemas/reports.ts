// The query of the settlement report (GET /v1/reports/settlements); its columns are in the route's description.
import { z } from 'zod';

export const settlementReportQuerySchema = z
  .object({
    date: z.iso
      .date()
      .meta({ description: 'The UTC day (00:00 to 24:00 UTC) the transactions reached their final status.' }),
    format: z
      .enum(['csv', 'json'])
      .optional()
      .meta({ description: '`csv` (the default) or `json`; without it, `Accept: application/json` asks for JSON.' }),
  })
  .strict();
