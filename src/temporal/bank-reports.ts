// Starts the reader of the ISO 20022 bank's reports (workflows/bank-reports.ts) from every worker at boot when a bank
// is configured: one workflow per bank (its id names it), so a second start finds the running one.
import type { Client } from '@temporalio/client';
import type { AppConfig } from '../config';
import { workflowIds } from './workflow-ids';

export async function ensureBankReportReaders(client: Client, config: AppConfig, taskQueue: string): Promise<string[]> {
  if (!config.iso20022) return [];
  const workflowId = workflowIds.bankReports('iso20022');
  await client.workflow.start('bankReportsWorkflow', {
    workflowId,
    taskQueue,
    args: [{ bank: 'iso20022', after: 0, pollSeconds: config.iso20022.reportPollSeconds }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  return [workflowId];
}
