// Activities of sanctions screening (workflows/screening.ts, docs/screening.md): loading the configured lists into
// version rows, screening customers and their beneficial owners, pages of a re-screening, and a review's opening
// and closing (the subject's status, its event and the operator's decision in one transaction each).
import type { ActivityServices } from './services';
import { type DatabaseTransaction, withDatabaseTransaction } from '../src/persistence/database';
import {
  currentListVersions,
  customersToScreen,
  customerToScreen,
  type CustomerToScreen,
  entriesClearedForAccount,
  externalAccountsToScreen,
  insertScreening,
  listScreenings,
  pruneListVersions,
  type ScreeningSubjectType,
  type ScreeningTrigger,
  setExternalAccountScreeningStatus,
} from '../src/persistence/screening';
import { listOperatorActions, recordOperatorAction } from '../src/persistence/operator-actions';
import { lockCustomer, readCustomerWithReviewInputs, updateCustomerStatus } from '../src/persistence/customers';
import { recordEvent } from '../src/persistence/events';
import { nextVerificationLink, toCustomerForEvent } from '../src/presenters/customers';
import { toExternalAccount } from '../src/presenters/external-accounts';
import { refreshList } from '../src/screening/refresh';
import { screeningListLoadRefusals } from '../src/observability/metrics';
import type { ListSource } from '../src/screening/entries';
import type { ScreeningResult, ScreeningSubject } from '../src/providers/screening';
import { ListScreening } from '../src/providers/screening-lists';
import { isUnconnected } from '../src/providers/unavailable';
import {
  type ReviewDecisionKind,
  rescreeningReviewWorkflowId,
  type ScreeningReviewInput,
} from '../src/domain/screening-review';
import { insertWorkflowStart } from '../src/persistence/workflow-starts';
import { lockTransactionRow, readTransactionRow } from '../src/persistence/transactions';
import { toTransaction } from '../src/presenters/transactions';
import { eventGroupOf } from '../src/domain/transactions';
import { ApplicationFailure } from '@temporalio/common';
import { RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';

/** The publisher's file may be large and slow; the activity's own timeout is 5 minutes (workflows/screening.ts). */
const FETCH_TIMEOUT_MS = 120_000;

interface Screened {
  subjectType: ScreeningSubjectType;
  subjectId: string;
  subject: ScreeningSubject;
}

const isoDate = (date: Date | null) => (date ? date.toISOString().slice(0, 10) : null);

/** Whom a customer's screening covers: the customer, and a business's beneficial owners. */
function subjectsOf(customer: CustomerToScreen): Screened[] {
  const subjects: Screened[] = [];
  if (customer.type === 'individual') {
    subjects.push({
      subjectType: 'customer',
      subjectId: customer.id,
      subject: {
        name: [customer.firstName, customer.lastName].filter(Boolean).join(' '),
        kind: 'individual',
        dateOfBirth: isoDate(customer.dateOfBirth),
        country: customer.country,
      },
    });
  } else {
    subjects.push({
      subjectType: 'customer',
      subjectId: customer.id,
      subject: { name: customer.businessLegalName ?? '', kind: 'entity', country: customer.country },
    });
  }
  for (const owner of customer.beneficiaries) {
    subjects.push({
      subjectType: 'beneficial_owner',
      subjectId: owner.id,
      subject: {
        name: `${owner.firstName} ${owner.lastName}`,
        kind: 'individual',
        dateOfBirth: isoDate(owner.dateOfBirth),
        country: owner.country,
      },
    });
  }
  return subjects.filter((screened) => screened.subject.name.trim().length > 0);
}

/** The sandbox simulation that makes a screening a potential match whatever the name (docs/screening.md). */
export const SIMULATED_REVIEW = 'screening_review';

export interface CustomerScreeningResult {
  potentialMatch: boolean;
  screeningIds: string[];
}

export function createScreeningActivities({ prisma, config, logger, accountScreening }: ActivityServices) {
  /** Screens each subject and stores each screening with its report; answers the ids of the potential matches. */
  async function screenAll(
    partnerId: string,
    resourceId: string,
    trigger: ScreeningTrigger,
    subjects: Screened[],
    /** Entries (source:id) an operator already cleared for this resource: not a new match. */
    cleared: Set<string> = new Set(),
    /** Sandbox simulate=screening_review: the subject (not its beneficial owners) is a potential match. */
    simulatedReview = false,
  ): Promise<string[]> {
    const matched: string[] = [];
    for (const screened of subjects) {
      const result: ScreeningResult =
        simulatedReview && screened.subjectType === 'customer'
          ? { outcome: 'review', reason: 'sandbox simulate=screening_review', report: { versions: [], matches: [] } }
          : await accountScreening.screen(screened.subject);
      const matches = result.report?.matches ?? [];
      const potential =
        result.outcome !== 'approved' && !matches.every((match) => cleared.has(`${match.source}:${match.entryId}`));
      const id = await insertScreening(prisma, {
        partnerId,
        subjectType: screened.subjectType,
        subjectId: screened.subjectId,
        resourceId,
        trigger,
        name: screened.subject.name,
        outcome: result.outcome === 'approved' ? 'clear' : 'potential_match',
        listVersions: result.report?.versions ?? [],
        matches,
      });
      // A deny-list rejection (sandbox without lists) has no report: it is a potential match too.
      if (potential || (result.outcome !== 'approved' && matches.length === 0)) matched.push(id);
    }
    return matched;
  }

  async function clearedEntries(resourceId: string): Promise<Set<string>> {
    const actions = await listOperatorActions(prisma, { resourceId });
    return new Set(
      actions
        .filter((action) => action.action === 'clear')
        .flatMap((action) => (Array.isArray(action.details.entries) ? (action.details.entries as string[]) : [])),
    );
  }

  async function announceCustomer(
    tx: DatabaseTransaction,
    customerId: string,
    status: 'under_review' | 'approved' | 'rejected',
  ) {
    await lockCustomer(tx, customerId);
    const customer = await readCustomerWithReviewInputs(tx, customerId);
    if (customer.status === status || customer.status === 'rejected') return; // a retry, or already final
    const row = await updateCustomerStatus(tx, customerId, status, nextVerificationLink(config, customer));
    await recordEvent(tx, {
      partnerId: row.partnerId,
      type: `customer.${status}`,
      resourceId: row.id,
      resourceStatus: row.status,
      resource: toCustomerForEvent(row),
    });
  }

  async function announceAccount(
    tx: DatabaseTransaction,
    accountId: string,
    status: 'under_review' | 'approved' | 'rejected',
    reason: string | null,
  ) {
    const row = await setExternalAccountScreeningStatus(tx, accountId, status, reason);
    if (!row) return; // a retry, or already rejected
    await recordEvent(tx, {
      partnerId: row.partnerId,
      type: `external_account.${status}`,
      resourceId: row.id,
      resourceStatus: status,
      resource: toExternalAccount(row),
    });
  }

  /**
   * A re-screening's match: the subject under review with its event, and the intent to start its review workflow, in
   * one transaction (write-then-start: the worker's start relay starts it, src/temporal/workflow-start-relay.ts).
   */
  async function openReview(review: ScreeningReviewInput): Promise<{ resourceId: string; workflowId: string }> {
    const workflowId = rescreeningReviewWorkflowId(review.resourceId, review.screeningIds[0]!);
    await withDatabaseTransaction(prisma, async (tx) => {
      if (review.subjectType === 'customer') await announceCustomer(tx, review.resourceId, 'under_review');
      else await announceAccount(tx, review.resourceId, 'under_review', 'potential sanctions-list match under review');
      await insertWorkflowStart(tx, {
        workflowType: 'screeningReviewWorkflow',
        workflowId,
        args: [review],
        searchAttributes: { PartnerId: review.partnerId, ResourceId: review.resourceId },
      });
    });
    return { resourceId: review.resourceId, workflowId };
  }

  return {
    async configuredScreeningLists(): Promise<{ source: ListSource; url: string }[]> {
      return config.screening?.lists ?? [];
    },

    /** Loads one list into a new version row, or records why not (counted: PaymentsScreeningListLoadRefused). */
    async refreshScreeningList(location: {
      source: ListSource;
      url: string;
    }): Promise<{ source: string; outcome: 'loaded' | 'unchanged' | 'refused'; detail?: string }> {
      const outcome = await refreshList(prisma, location, {
        minEntryRatio: config.screening?.minEntryRatio ?? 0.5,
        fetchTimeoutMs: FETCH_TIMEOUT_MS,
      });
      if (outcome.outcome === 'refused') {
        screeningListLoadRefusals.inc({ source: outcome.source, reason: outcome.reason });
        logger.warn(
          { source: outcome.source, reason: outcome.reason, detail: outcome.detail },
          'sanctions list refused',
        );
        return { source: outcome.source, outcome: 'refused', detail: `${outcome.reason}: ${outcome.detail}` };
      }
      if (outcome.outcome === 'loaded') {
        logger.info(
          { source: outcome.source, checksum: outcome.version.checksum, entries: outcome.version.entryCount },
          'sanctions list version loaded',
        );
        if (accountScreening instanceof ListScreening) await accountScreening.sync();
      }
      return { source: outcome.source, outcome: outcome.outcome };
    },

    /** Old loaded versions of the configured lists, neither recent nor named by a screening, deleted. */
    async pruneScreeningListVersions(): Promise<{ pruned: number }> {
      const lists = config.screening?.lists ?? [];
      const pruned = await pruneListVersions(prisma, {
        sources: lists.map((list) => list.source),
        keep: config.screening?.keepVersions ?? 3,
      });
      if (pruned.length > 0) logger.info({ pruned }, 'old sanctions list versions pruned');
      return { pruned: pruned.length };
    },

    async currentScreeningVersions(): Promise<string[]> {
      return (await currentListVersions(prisma)).map((version) => `${version.source}:${version.checksum}`);
    },

    /** The customer and a business's beneficial owners, screened when the customer submits for verification. */
    async screenCustomer(customerId: string): Promise<CustomerScreeningResult> {
      // Production cannot start without lists (assertProductionReady); a harness that skips that check verifies
      // customers unscreened rather than failing their verification.
      if (isUnconnected(accountScreening)) {
        logger.warn({ customer_id: customerId }, `customer not screened: ${accountScreening.unconnected}`);
        return { potentialMatch: false, screeningIds: [] };
      }
      const customer = await customerToScreen(prisma, customerId);
      const screeningIds = await screenAll(
        customer.partnerId,
        customer.id,
        'verification',
        subjectsOf(customer),
        new Set(),
        customer.sandboxSimulation === SIMULATED_REVIEW,
      );
      return { potentialMatch: screeningIds.length > 0, screeningIds };
    },

    /** One page of a re-screening: the reviews to open for new potential matches, and where the next page starts. */
    async rescreenPage(page: {
      subjectType: 'customer' | 'external_account';
      after: string | null;
      limit: number;
      /** Only these partners' subjects (tests share one database). */
      partnerIds?: string[];
    }): Promise<{ screened: number; next: string | null; reviews: { resourceId: string; workflowId: string }[] }> {
      // Screen against the newest versions now, not when this process would next look.
      if (accountScreening instanceof ListScreening) await accountScreening.sync();
      const reviews: { resourceId: string; workflowId: string }[] = [];
      let ids: string[];
      if (page.subjectType === 'customer') {
        const customers = await customersToScreen(prisma, page.after, page.limit, page.partnerIds);
        ids = customers.map((customer) => customer.id);
        for (const customer of customers) {
          const cleared = await clearedEntries(customer.id);
          const matched = await screenAll(
            customer.partnerId,
            customer.id,
            'rescreening',
            subjectsOf(customer),
            cleared,
          );
          if (matched.length > 0) {
            reviews.push(
              await openReview({
                subjectType: 'customer',
                resourceId: customer.id,
                partnerId: customer.partnerId,
                screeningIds: matched,
                opening: 'rescreening',
              }),
            );
          }
        }
      } else {
        const accounts = await externalAccountsToScreen(prisma, page.after, page.limit, page.partnerIds);
        ids = accounts.map((account) => account.id);
        for (const account of accounts) {
          const name = String(account.details.beneficiary_name ?? '');
          if (!name) continue;
          const cleared = await clearedEntries(account.id);
          const matched = await screenAll(
            account.partnerId,
            account.id,
            'rescreening',
            [{ subjectType: 'external_account', subjectId: account.id, subject: { name } }],
            cleared,
          );
          if (matched.length > 0) {
            reviews.push(
              await openReview({
                subjectType: 'external_account',
                resourceId: account.id,
                partnerId: account.partnerId,
                screeningIds: matched,
                opening: 'rescreening',
              }),
            );
          }
        }
      }
      return { screened: ids.length, next: ids.length < page.limit ? null : ids[ids.length - 1]!, reviews };
    },

    /**
     * The receiver of a payout, right before leg 2 pays out (docs/screening.md "Payout receivers"): the external
     * account's holder, or the holder the pix directory gave for a key given directly. A potential match (entries an
     * operator already cleared for that external account aside) holds the payout: its screening and the event
     * `<payin|payout>.held` are written in one transaction under the transaction's lock; the status stays
     * `processing`. Idempotent: a retry finds the screening written and answers from it.
     */
    async screenPayoutReceiver(transactionId: string): Promise<CustomerScreeningResult> {
      const row = await readTransactionRow(prisma, transactionId);
      if (!row) throw ApplicationFailure.nonRetryable(`transaction ${transactionId} not found`, RESOURCE_NOT_FOUND);
      const details = (row.externalAccount?.details ?? row.receiverDetails ?? {}) as Record<string, unknown>;
      const name = typeof details.beneficiary_name === 'string' ? details.beneficiary_name.trim() : '';
      const simulated = row.sandboxSimulation === SIMULATED_REVIEW;
      if (!simulated && (name.length === 0 || isUnconnected(accountScreening))) {
        if (name.length > 0)
          logger.warn({ transaction_id: transactionId }, 'payout receiver not screened: unconnected');
        return { potentialMatch: false, screeningIds: [] };
      }
      const result = simulated
        ? {
            outcome: 'review' as const,
            reason: 'sandbox simulate=screening_review',
            report: { versions: [], matches: [] },
          }
        : await accountScreening.screen({ name });
      const matches = result.report?.matches ?? [];
      // Most receivers match nothing: the operator's cleared entries are read only when there is a match to excuse.
      const cleared =
        row.externalAccountId && matches.length > 0
          ? await entriesClearedForAccount(prisma, row.externalAccountId)
          : new Set<string>();
      const potential =
        result.outcome !== 'approved' &&
        (matches.length === 0 || !matches.every((match) => cleared.has(`${match.source}:${match.entryId}`)));
      return withDatabaseTransaction(prisma, async (tx) => {
        const locked = await lockTransactionRow(tx, transactionId);
        if (!locked)
          throw ApplicationFailure.nonRetryable(`transaction ${transactionId} not found`, RESOURCE_NOT_FOUND);
        // A retry of this activity: answer from the screening already written (one per payout).
        const [earlier] = (await listScreenings(tx, transactionId)).filter(
          (screening) => screening.trigger === 'payout',
        );
        if (earlier) {
          const held = earlier.outcome === 'potential_match';
          return { potentialMatch: held, screeningIds: held ? [earlier.id] : [] };
        }
        const id = await insertScreening(tx, {
          partnerId: locked.partnerId,
          subjectType: 'payout',
          subjectId: locked.externalAccountId ?? locked.id,
          resourceId: locked.id,
          trigger: 'payout',
          name: name || '(no receiver name)',
          outcome: potential ? 'potential_match' : 'clear',
          listVersions: result.report?.versions ?? [],
          matches,
        });
        if (!potential) return { potentialMatch: false, screeningIds: [] };
        await recordEvent(tx, {
          partnerId: locked.partnerId,
          type: `${eventGroupOf(locked.type)}.held`,
          resourceId: locked.id,
          resourceStatus: locked.status,
          resource: toTransaction(locked),
        });
        return { potentialMatch: true, screeningIds: [id] };
      });
    },

    /** A re-screening's review makes sure its subject is under review (done already when its start was written). */
    async openScreeningReview(input: ScreeningReviewInput): Promise<void> {
      await withDatabaseTransaction(prisma, async (tx) => {
        if (input.subjectType === 'customer') await announceCustomer(tx, input.resourceId, 'under_review');
        else await announceAccount(tx, input.resourceId, 'under_review', 'potential sanctions-list match under review');
      });
    },

    /**
     * The operator's decision, recorded in the audit trail, and its effect in the same transaction: confirm rejects
     * the subject; clear approves an external account or a re-screened customer (a customer in verification goes
     * on with its verification, whose workflow waits for this review).
     */
    async closeScreeningReview(
      closing: ScreeningReviewInput & {
        workflowId: string;
        updateId: string;
        decision: ReviewDecisionKind;
        reason: string;
        operator: string;
      },
    ): Promise<void> {
      const screenings = (await listScreenings(prisma, closing.resourceId)).filter((screening) =>
        closing.screeningIds.includes(screening.id),
      );
      const entries = [
        ...new Set(screenings.flatMap((screening) => screening.matches.map((m) => `${m.source}:${m.entryId}`))),
      ];
      await withDatabaseTransaction(prisma, async (tx) => {
        await recordOperatorAction(tx, {
          workflowId: closing.workflowId,
          updateId: closing.updateId,
          resourceType: `${closing.subjectType}_screening`,
          resourceId: closing.resourceId,
          action: closing.decision,
          operator: closing.operator,
          reason: closing.reason,
          details: {
            screening_ids: closing.screeningIds,
            entries,
            opening: closing.opening,
            // A payout's receiver: what is cleared here is not a new match for the next payout to that account.
            ...(closing.subjectType === 'payout' && screenings[0]?.subjectId !== closing.resourceId
              ? { external_account_id: screenings[0]?.subjectId }
              : {}),
          },
        });
        // A held payout: the settlement workflow waiting for this review releases or refunds it.
        if (closing.subjectType === 'payout') return;
        if (closing.subjectType === 'customer') {
          if (closing.decision === 'confirm') await announceCustomer(tx, closing.resourceId, 'rejected');
          else if (closing.opening === 'rescreening') await announceCustomer(tx, closing.resourceId, 'approved');
        } else {
          const reason = closing.decision === 'confirm' ? `sanctions-list match confirmed: ${closing.reason}` : null;
          await announceAccount(
            tx,
            closing.resourceId,
            closing.decision === 'confirm' ? 'rejected' : 'approved',
            reason,
          );
        }
      });
    },
  };
}
