// One workflow per virtual account (id: virtual-account-<id>), started when the account is created.
// It owns the account's status after creation (SPEC 3.2):
//   sandbox:    created approved (deposit details filled by the API in the creation transaction);
//               the workflow only publishes its state and completes.
//   production: under_review until an operator signals `virtualAccountDecision`:
//               approved -> deposit details issued, event virtual_account.approved
//               rejected -> event virtual_account.rejected
// While no decision comes, operators are reminded every `reminderHours`; after `timeoutDays` the
// account is rejected (reason review_timeout) so the partner gets an answer and may ask again.
// The partner may cancel an account under review (update `cancelVirtualAccount`, from PUT
// /v1/virtual-accounts/{id}): the workflow stops reminding, cancels it (virtual_account.cancelled)
// and completes. A decision and a cancellation arriving together have one outcome: the first taken.
// (An approved account's workflow has completed; the API cancels it under the account's row lock.)
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { boundedActivityOptions } from './retry-policies';
import type { VirtualAccountStatus } from '../src/schemas/virtual-accounts';
import {
  CustomerIdAttribute,
  PartnerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
} from '../src/temporal/search-attributes';

export interface VirtualAccountWorkflowInput {
  virtualAccountId: string;
  partnerId: string;
  customerId: string;
  /** As created: approved in the sandbox, under_review in production. */
  status: VirtualAccountStatus;
  review: { reminderHours: number; timeoutDays: number };
  /** Sandbox only: the review's decision, taken at once (the `simulate` of the creation request). */
  sandboxDecision?: VirtualAccountDecision;
}

export type VirtualAccountDecision = { outcome: 'approved' } | { outcome: 'rejected'; reason?: string };

/** Reason recorded when nobody decided within the review timeout. */
export const REVIEW_TIMEOUT_REASON = 'review_timeout';

/** The operator's decision on a review; answers the status it led to. */
export const virtualAccountDecisionUpdate = defineUpdate<VirtualAccountStatus, [VirtualAccountDecision]>(
  'virtualAccountDecision',
);
/** The partner's cancellation of an account under review; answers the status it led to (`cancelled`). */
export const cancelVirtualAccountUpdate = defineUpdate<VirtualAccountStatus>('cancelVirtualAccount');
export const virtualAccountRefusals = {
  invalidDecision: 'InvalidVirtualAccountDecision',
  alreadyDecided: 'VirtualAccountAlreadyDecided',
} as const;

export interface VirtualAccountState {
  status: VirtualAccountStatus;
  remindersSent: number;
  /** Workflow time at which an undecided review is rejected; null once decided. */
  reviewDeadline: string | null;
}
export const virtualAccountStateQuery = defineQuery<VirtualAccountState>('virtualAccountState');

const activities = proxyActivities<Activities>(boundedActivityOptions);

/** Returns a reason when a signalled decision is malformed, else null. */
export function virtualAccountDecisionProblem(decision: unknown): string | null {
  if (typeof decision !== 'object' || decision === null) return 'a decision is an object with an outcome';
  const { outcome, reason } = decision as { outcome?: unknown; reason?: unknown };
  if (outcome !== 'approved' && outcome !== 'rejected') return 'outcome must be approved or rejected';
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 500)) {
    return 'reason must be a string of at most 500 characters';
  }
  if (outcome === 'approved' && reason !== undefined) return 'an approval has no reason';
  return null;
}

export async function virtualAccountWorkflow(input: VirtualAccountWorkflowInput): Promise<VirtualAccountStatus> {
  let status = input.status;
  let decision: VirtualAccountDecision | undefined;
  let cancelling = false;
  let remindersSent = 0;
  const hour = 3600 * 1000;
  // The review runs from the workflow's start (the account's creation).
  const startedAt = workflowInfo().startTime.getTime();
  const deadline = startedAt + input.review.timeoutDays * 24 * hour;

  const publishStatus = () =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: CustomerIdAttribute, value: input.customerId },
      { key: ResourceIdAttribute, value: input.virtualAccountId },
      { key: ResourceStatusAttribute, value: status },
    ]);
  publishStatus();

  setHandler(virtualAccountStateQuery, () => ({
    status,
    remindersSent,
    reviewDeadline: status === 'under_review' ? new Date(deadline).toISOString() : null,
  }));

  let decided = false;
  setHandler(
    virtualAccountDecisionUpdate,
    async (incoming) => {
      // Validators of updates delivered together all run before their handlers: the first handler wins.
      refuseUnlessUndecided();
      decision = incoming;
      await condition(() => decided);
      return status;
    },
    {
      validator: (incoming) => {
        const problem = virtualAccountDecisionProblem(incoming);
        if (problem) throw ApplicationFailure.nonRetryable(problem, virtualAccountRefusals.invalidDecision);
        refuseUnlessUndecided();
      },
    },
  );
  setHandler(
    cancelVirtualAccountUpdate,
    async () => {
      refuseUnlessUndecided();
      cancelling = true;
      await condition(() => decided);
      return status;
    },
    { validator: () => refuseUnlessUndecided() },
  );

  function refuseUnlessUndecided(): void {
    if (status !== 'under_review' || decision || cancelling) {
      const pending = decision ? ' with a decision pending' : cancelling ? ' with a cancellation pending' : '';
      throw ApplicationFailure.nonRetryable(
        `The virtual account is ${status}${pending}; it was already decided.`,
        virtualAccountRefusals.alreadyDecided,
      );
    }
  }

  if (status !== 'under_review') return status;
  // A decision that reached the workflow with its start waited for its handler, which setHandler ran above: keep it
  // (overwritten, its update waited for a decision the workflow no longer had).
  if (patched('virtual-account-decision-with-start')) decision ??= input.sandboxDecision;
  else decision = input.sandboxDecision;

  while (!decision && !cancelling) {
    const nextReminder = startedAt + (remindersSent + 1) * input.review.reminderHours * hour;
    const wakeAt = Math.min(nextReminder, deadline);
    if (await condition(() => decision !== undefined || cancelling, Math.max(wakeAt - Date.now(), 1))) break;
    if (Date.now() >= deadline) {
      decision = { outcome: 'rejected', reason: REVIEW_TIMEOUT_REASON };
      break;
    }
    remindersSent += 1;
    await activities.remindVirtualAccountReview(
      input.virtualAccountId,
      remindersSent,
      remindersSent * input.review.reminderHours,
    );
  }

  const chosen = decision;
  status = !chosen
    ? await activities.cancelVirtualAccount(input.virtualAccountId)
    : chosen.outcome === 'approved'
      ? await activities.approveVirtualAccount(input.virtualAccountId)
      : await activities.rejectVirtualAccount(input.virtualAccountId, chosen.reason ?? null);
  publishStatus();
  decided = true;
  // Let the operator's update reply before the workflow completes.
  await condition(allHandlersFinished);
  return status;
}
