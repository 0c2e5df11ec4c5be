// The audit trail of operators' decisions (operator_actions, append-only for the services' roles): written by the
// workflow that accepted the operator's update, read by `npm run audit`.
import { jsonParameter, sqlOf, type Database } from './internal/database';
import { newId } from '../domain/ids';

export interface OperatorActionInput {
  workflowId: string;
  updateId: string;
  resourceType: string;
  resourceId: string;
  action: string;
  operator: string;
  reason: string | null;
  details: Record<string, unknown>;
}

export interface OperatorActionRow extends OperatorActionInput {
  id: string;
  recordedAt: Date;
}

/** Records one decision; a repeat of the same update (an activity's retry) keeps the first row. */
export async function recordOperatorAction(db: Database, action: OperatorActionInput): Promise<void> {
  await sqlOf(db)
    .insertInto('operatorActions')
    .values({ ...action, id: newId(), details: jsonParameter(action.details) ?? '{}', recordedAt: new Date() })
    .onConflict((conflict) => conflict.columns(['workflowId', 'updateId']).doNothing())
    .execute();
}

/** The decisions on a resource, by an operator, or since a time (each filter optional), oldest first. */
export async function listOperatorActions(
  db: Database,
  filter: { resourceId?: string; operator?: string; since?: Date; limit?: number },
): Promise<OperatorActionRow[]> {
  let query = sqlOf(db).selectFrom('operatorActions').selectAll();
  if (filter.resourceId) query = query.where('resourceId', '=', filter.resourceId);
  if (filter.operator) query = query.where('operator', '=', filter.operator);
  if (filter.since) query = query.where('recordedAt', '>=', filter.since);
  const rows = await query
    .orderBy('recordedAt')
    .orderBy('id')
    .limit(filter.limit ?? 1000)
    .execute();
  return rows.map((row) => ({ ...row, details: (row.details ?? {}) as Record<string, unknown> }));
}
