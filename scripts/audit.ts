// The audit trail of operators' decisions (operator_actions; docs/operations.md "Audit trail"):
//   npm run audit -- [--transaction <id>] [--operator <name>] [--since <ISO date>] [--json]
// One line per decision, oldest first: when, who, the action, on what (workflow and resource), the reason, and the
// update's id (the same update, with the caller's identity, is in the workflow's history). Reads DATABASE_URL (or
// the development database).
import { parseArgs } from 'node:util';
import { listOperatorActions, type OperatorActionRow } from '../src/persistence/operator-actions';
import { CommandUsageError, runOperatorCommand } from './lib/operator-command';

/** The text lines of `rows` (a header first). */
export function auditLines(rows: OperatorActionRow[]): string[] {
  return [
    'recorded_at\toperator\taction\tresource\tworkflow_id\tupdate_id\treason',
    ...rows.map((row) =>
      [
        row.recordedAt.toISOString(),
        row.operator,
        row.action,
        `${row.resourceType} ${row.resourceId}`,
        row.workflowId,
        row.updateId,
        row.reason ?? '',
      ].join('\t'),
    ),
  ];
}

if (require.main === module) {
  runOperatorCommand('audit', async (prisma) => {
    const { values } = parseArgs({
      options: {
        transaction: { type: 'string' },
        operator: { type: 'string' },
        since: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const since = values.since ? new Date(values.since) : undefined;
    if (since && Number.isNaN(since.getTime())) {
      throw new CommandUsageError(
        'usage: npm run audit -- [--transaction ID] [--operator NAME] [--since ISO-DATE] [--json]',
      );
    }
    const rows = await listOperatorActions(prisma, {
      resourceId: values.transaction,
      operator: values.operator,
      since,
    });
    return values.json ? rows.map((row) => JSON.stringify(row)) : auditLines(rows);
  });
}
