// The service's side of a bank's notifications (src/providers/iso20022/reports.ts): deposits go through
// receiveDepositByReference, returns after completion through receivePayoutReturn, the paths the sandbox endpoints
// take. Built by the worker (and the test harness) and handed to the bank-reports activity, which may not import the
// HTTP side. A use case's refusal (a DomainError: a reference in use, a return that is not allowed) is an answer for an
// operator, not a reason to read the notification again; anything else fails the step, which is retried.
import { DomainError } from '../../domain/errors';
import type { BankReportIntake, IntakeResult } from '../../providers/iso20022/reports';
import type { WriteServices } from '../../temporal/write-then-start';
import { receiveDepositByReference } from './deposits';
import { receivePayoutReturn } from './payout-returns';

async function refusalsAnswered(work: () => Promise<IntakeResult>): Promise<IntakeResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DomainError && error.isRefusal) {
      return { status: 'refused', code: error.code, detail: error.message };
    }
    throw error;
  }
}

export function createBankReportIntake(services: WriteServices): BankReportIntake {
  return {
    deposit: (incoming) =>
      refusalsAnswered(async () => {
        const deposit = await receiveDepositByReference(services, incoming);
        return deposit
          ? { status: 'recorded', id: deposit.id }
          : {
              status: 'unmatched',
              detail: `reference ${JSON.stringify(incoming.reference)} names no transaction in ${incoming.amount.currency}`,
            };
      }),
    payoutReturn: (report) =>
      refusalsAnswered(async () => {
        const recorded = await receivePayoutReturn(services, report);
        return recorded
          ? { status: 'recorded', id: recorded.id }
          : { status: 'unmatched', detail: `return ${report.returnReference} names no payout of the service` };
      }),
  };
}
