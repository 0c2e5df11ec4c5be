// One workflow per customer (id: customer-verification-<customerId>), started when the customer is
// created. It owns the customer's status after creation (SPEC 3.1):
//   pending -> under_review             on submitForVerification (POST check or the hosted page)
//   under_review -> approved | partially_rejected | rejected   on a decision
//   partially_rejected -> under_review  on submitForVerification after new documents
// Decisions come from the provider's automatic result (sandbox: approved after a delay), from the
// operator update `verificationDecision` (refused with a reason when invalid or not under review), or from the
// sandbox update `setSandboxVerificationOutcome`.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { screeningReviewWorkflow } from './screening';
import { screeningReviewWorkflowId } from '../src/domain/screening-review';
import type { Activities } from '../activities';
import { boundedActivityOptions } from './retry-policies';
import { RejectedStep, rejectionCodes, stepsFor, VerificationDecision } from '../src/domain/verification';
import type { CustomerStatus } from '../src/schemas/customers';
import {
  CustomerIdAttribute,
  PartnerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
} from '../src/temporal/search-attributes';

export interface CustomerVerificationInput {
  customerId: string;
  partnerId: string;
  customerType: 'individual' | 'business';
}

export type SubmitForVerificationResult = { accepted: true } | { accepted: false; missing: string[] };

/** Error types the updates reject with; the API maps each to its error code. */
export const verificationRefusals = {
  rejected: 'CustomerRejected',
  approved: 'CustomerAlreadyApproved',
  underReview: 'VerificationInProgress',
  invalidDecision: 'InvalidVerificationDecision',
  notUnderReview: 'CustomerNotUnderReview',
} as const;

export const submitForVerificationUpdate = defineUpdate<SubmitForVerificationResult>('submitForVerification');
/** The operator's decision on a review; answers the status it led to. */
export const verificationDecisionUpdate = defineUpdate<CustomerStatus, [VerificationDecision]>('verificationDecision');
export const setSandboxVerificationOutcomeUpdate = defineUpdate<CustomerStatus, [VerificationDecision]>(
  'setSandboxVerificationOutcome',
);
export const verificationStateQuery = defineQuery<{ status: CustomerStatus; decisionPending: boolean }>(
  'verificationState',
);

const activities = proxyActivities<Activities>(boundedActivityOptions);

/** Returns a reason when a decision cannot apply to this customer type, else null. */
export function decisionProblem(
  decision: VerificationDecision,
  customerType: 'individual' | 'business',
): string | null {
  const outcomes = ['approved', 'partially_rejected', 'rejected'];
  if (!decision || !outcomes.includes(decision.outcome)) return `outcome must be one of ${outcomes.join(', ')}`;
  const steps: RejectedStep[] = Array.isArray(decision.rejected_steps) ? decision.rejected_steps : [];
  if (decision.outcome === 'approved' && steps.length > 0) return 'an approval cannot name rejected steps';
  if (decision.outcome !== 'approved' && steps.length === 0)
    return `${decision.outcome} needs at least one rejected step`;
  const known = stepsFor(customerType);
  for (const step of steps) {
    if (!known.includes(step.name))
      return `step ${String(step.name)} is not a ${customerType} step (${known.join(', ')})`;
    if (!Array.isArray(step.rejection_code) || step.rejection_code.length === 0)
      return `step ${step.name} needs a rejection_code`;
    const unknown = step.rejection_code.find((code) => !(rejectionCodes as readonly string[]).includes(code));
    if (unknown) return `unknown rejection code ${unknown}`;
  }
  return null;
}

export async function customerVerificationWorkflow(input: CustomerVerificationInput): Promise<CustomerStatus> {
  let status: CustomerStatus = 'pending';
  let submitting = false;
  /** A decision waiting to be applied to the current review. */
  let decision: VerificationDecision | undefined;
  /** Sandbox: an outcome set in advance for the next review. */
  let presetOutcome: VerificationDecision | undefined;
  let automatic: { decision: VerificationDecision; afterSeconds: number } | null = null;
  let decisionsApplied = 0;

  const publishStatus = () =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: CustomerIdAttribute, value: input.customerId },
      { key: ResourceIdAttribute, value: input.customerId },
      { key: ResourceStatusAttribute, value: status },
    ]);
  publishStatus();

  const refuseUnlessOpen = () => {
    if (status === 'rejected') {
      throw ApplicationFailure.nonRetryable(
        'The customer was rejected; verification cannot be restarted.',
        verificationRefusals.rejected,
      );
    }
    if (status === 'approved') {
      throw ApplicationFailure.nonRetryable('The customer is already approved.', verificationRefusals.approved);
    }
  };

  setHandler(verificationStateQuery, () => ({ status, decisionPending: decision !== undefined }));

  setHandler(
    submitForVerificationUpdate,
    async (): Promise<SubmitForVerificationResult> => {
      submitting = true;
      try {
        const result = await activities.submitCustomerForReview(input.customerId);
        if (!result.accepted) return { accepted: false, missing: result.missing };
        status = 'under_review';
        publishStatus();
        automatic = result.receipt.automaticDecision;
        if (presetOutcome) {
          decision = presetOutcome;
          presetOutcome = undefined;
        }
        return { accepted: true };
      } finally {
        submitting = false;
      }
    },
    {
      validator: () => {
        refuseUnlessOpen();
        if (status === 'under_review' || submitting) {
          throw ApplicationFailure.nonRetryable(
            'Verification is already in progress.',
            verificationRefusals.underReview,
          );
        }
      },
    },
  );

  setHandler(
    verificationDecisionUpdate,
    async (incoming) => {
      const before = decisionsApplied;
      decision = incoming;
      await condition(() => decisionsApplied > before);
      return status;
    },
    {
      validator: (incoming) => {
        const problem = decisionProblem(incoming, input.customerType);
        if (problem) throw ApplicationFailure.nonRetryable(problem, verificationRefusals.invalidDecision);
        if (status !== 'under_review' || decision !== undefined) {
          throw ApplicationFailure.nonRetryable(
            `The customer is ${status}${decision !== undefined ? ' with a decision pending' : ''}; only a customer under review can be decided.`,
            verificationRefusals.notUnderReview,
          );
        }
      },
    },
  );

  setHandler(
    setSandboxVerificationOutcomeUpdate,
    async (outcome) => {
      if (status !== 'under_review') {
        presetOutcome = outcome;
        return status;
      }
      const before = decisionsApplied;
      decision = outcome;
      await condition(() => decisionsApplied > before);
      return status;
    },
    {
      validator: (outcome) => {
        refuseUnlessOpen();
        const problem = decisionProblem(outcome, input.customerType);
        if (problem) throw ApplicationFailure.nonRetryable(problem, verificationRefusals.invalidDecision);
      },
    },
  );

  while (status !== 'approved' && status !== 'rejected') {
    await condition(() => status === 'under_review');
    // Sanctions screening of the customer and its beneficial owners (docs/screening.md): a potential match waits
    // for an operator's review before any decision; a confirmed match rejects the customer.
    if (patched('screening-at-verification')) {
      const screening = await activities.screenCustomer(input.customerId);
      if (screening.potentialMatch) {
        const review = await executeChild(screeningReviewWorkflow, {
          workflowId: screeningReviewWorkflowId(input.customerId),
          args: [
            {
              subjectType: 'customer',
              resourceId: input.customerId,
              partnerId: input.partnerId,
              screeningIds: screening.screeningIds,
              opening: 'verification',
            },
          ],
        });
        if (review === 'confirmed') {
          status = 'rejected';
          decision = undefined;
          decisionsApplied += 1;
          publishStatus();
          break;
        }
      }
    }
    const applied = await nextDecision();
    decision = undefined;
    automatic = null;
    status = await activities.applyVerificationDecision(input.customerId, applied);
    decisionsApplied += 1;
    publishStatus();
  }
  // Let in-flight update handlers reply before the workflow completes.
  await condition(allHandlersFinished);
  return status;

  /** The first of: a signalled or sandbox decision, or the provider's automatic one when its delay passes. */
  async function nextDecision(): Promise<VerificationDecision> {
    const fallback = automatic;
    if (!fallback) {
      await condition(() => decision !== undefined);
      return decision as VerificationDecision;
    }
    const decided =
      fallback.afterSeconds > 0 && (await condition(() => decision !== undefined, `${fallback.afterSeconds} seconds`));
    return decided && decision ? decision : fallback.decision;
  }
}
