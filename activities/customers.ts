// Activities of the customer verification workflow: every status change is persisted here,
// together with its event, in one transaction. Each activity is idempotent (safe to retry).
import { ApplicationFailure } from '@temporalio/activity';
import { recordEvent } from '../src/persistence/events';
import { stepNeedsDocument, stepsFor, VerificationDecision } from '../src/domain/verification';
import { missingBeforeReview, nextVerificationLink, toCustomerForEvent } from '../src/presenters/customers';
import type { CustomerStatus } from '../src/schemas/customers';
import type { SubmissionReceipt } from '../src/providers/verification';
import type { ActivityServices } from './services';
import { type DatabaseTransaction, withDatabaseTransaction } from '../src/persistence/database';
import {
  approveStepsUnderReview,
  CustomerRow,
  findCustomerWithReviewInputs,
  lockCustomer,
  putOpenStepsUnderReview,
  rejectVerificationStep,
  updateCustomerStatus,
} from '../src/persistence/customers';

export type SubmitResult = { accepted: true; receipt: SubmissionReceipt } | { accepted: false; missing: string[] };

async function loadCustomer(tx: DatabaseTransaction, customerId: string) {
  // Row lock: one status change of a customer at a time, even across workers.
  await lockCustomer(tx, customerId);
  const customer = await findCustomerWithReviewInputs(tx, customerId);
  if (!customer) throw ApplicationFailure.nonRetryable(`customer ${customerId} does not exist`, 'CustomerNotFound');
  return customer;
}

async function announce(tx: DatabaseTransaction, row: CustomerRow): Promise<void> {
  await recordEvent(tx, {
    partnerId: row.partnerId,
    type: `customer.${row.status as Exclude<CustomerStatus, 'pending'>}`,
    resourceId: row.id,
    resourceStatus: row.status,
    resource: toCustomerForEvent(row),
  });
}

export function createCustomerActivities({ prisma, config, verificationProvider }: ActivityServices) {
  return {
    /**
     * Starts a review: checks the minimum documents, moves the open steps and the customer to
     * under_review (event customer.under_review), then hands the customer to the provider.
     */
    async submitCustomerForReview(customerId: string): Promise<SubmitResult> {
      const outcome = await withDatabaseTransaction(prisma, async (tx) => {
        const customer = await loadCustomer(tx, customerId);
        if (customer.status === 'under_review') return { accepted: true as const, customer }; // a retry
        if (customer.status !== 'pending' && customer.status !== 'partially_rejected') {
          throw ApplicationFailure.nonRetryable(`customer is ${customer.status}`, 'InvalidCustomerStatus');
        }
        const missing = missingBeforeReview(customer);
        if (missing.length > 0) return { accepted: false as const, missing };

        await putOpenStepsUnderReview(tx, customerId);
        // Every status change replaces the hosted page's link: the old token stops working.
        const updated = await updateCustomerStatus(
          tx,
          customerId,
          'under_review',
          nextVerificationLink(config, customer),
        );
        await announce(tx, updated);
        return { accepted: true as const, customer };
      });
      if (!outcome.accepted) return outcome;
      const receipt = await verificationProvider.submit({
        customerId,
        customerType: outcome.customer.type,
        documentIds: outcome.customer.documents.map((doc) => doc.id),
      });
      return { accepted: true, receipt };
    },

    /** Applies a verification result to the steps under review and to the customer, with its event. */
    async applyVerificationDecision(customerId: string, decision: VerificationDecision): Promise<CustomerStatus> {
      return withDatabaseTransaction(prisma, async (tx) => {
        const customer = await loadCustomer(tx, customerId);
        if (customer.status !== 'under_review') return customer.status; // a retry
        const known = new Set<string>(stepsFor(customer.type));
        for (const step of decision.rejected_steps) {
          if (!known.has(step.name)) continue;
          await rejectVerificationStep(tx, customerId, step.name, {
            state: decision.outcome,
            rejectionCodes: step.rejection_code,
            rejectionDescription: step.rejection_description,
            awaitingDocument: decision.outcome === 'partially_rejected' && stepNeedsDocument(step.name),
          });
        }
        await approveStepsUnderReview(tx, customerId);
        const updated = await updateCustomerStatus(
          tx,
          customerId,
          decision.outcome,
          nextVerificationLink(config, customer),
        );
        await announce(tx, updated);
        return decision.outcome;
      });
    },
  };
}
