// Sanctions screening's workflows (docs/screening.md):
// - screeningListRefreshWorkflow: started by the `screening-lists` Schedule; loads every configured list, and when a
//   version changed, re-screens everyone (a child rescreeningWorkflow).
// - rescreeningWorkflow: pages through approved customers and external accounts, screens each page in one bounded
//   activity, which opens a review for every new potential match: the subject under review and the intent to start
//   its screeningReviewWorkflow commit together, and the worker's start relay starts it.
// - screeningReviewWorkflow (id screening-review-<resource id>): one subject with a potential match, under review
//   until an operator sends the validated update `decideScreeningReview` (clear or confirm, with a reason). The wait
//   is indefinite by design: it is an operator queue (find them in the Temporal UI with ResourceStatus =
//   "screening_review").
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  currentUpdateInfo,
  defineQuery,
  defineUpdate,
  executeChild,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { waitForOperator } from './operator-wait';
import { boundedActivityOptions } from './retry-policies';
import {
  type ReviewDecisionKind,
  type ScreeningReviewInput,
  screeningReviewWorkflowId,
} from '../src/domain/screening-review';
import { PartnerIdAttribute, ResourceIdAttribute, ResourceStatusAttribute } from '../src/temporal/search-attributes';

const activities = proxyActivities<Activities>(boundedActivityOptions);
// Reading and parsing a full list (tens of MB) takes seconds; the publisher may be slow.
const loading = proxyActivities<Activities>({
  ...boundedActivityOptions,
  startToCloseTimeout: '5 minutes',
  retry: { ...boundedActivityOptions.retry, maximumAttempts: 3 },
});

export type { ScreeningReviewInput, ReviewDecisionKind };

export interface ReviewDecision {
  decision: ReviewDecisionKind;
  reason: string;
  /** Who decided (the identity the operator authenticated as). */
  operator: string;
}

export type ReviewOutcome = 'cleared' | 'confirmed';

export const screeningReviewRefusals = {
  invalidDecision: 'InvalidScreeningDecision',
  alreadyDecided: 'ScreeningReviewDecided',
} as const;

export const decideScreeningReviewUpdate = defineUpdate<ReviewOutcome, [ReviewDecision]>('decideScreeningReview');
export const screeningReviewStateQuery = defineQuery<{
  state: 'open' | ReviewOutcome;
  input: ScreeningReviewInput;
  /** The subject is under review (a re-screening's review puts it there first). */
  subjectUnderReview: boolean;
}>('screeningReviewState');

/** A reason when the decision cannot be taken, else null: clear or confirm, a reason, an operator. */
export function reviewDecisionProblem(decision: ReviewDecision | undefined): string | null {
  if (!decision || (decision.decision !== 'clear' && decision.decision !== 'confirm')) {
    return 'decision must be "clear" or "confirm"';
  }
  if (typeof decision.reason !== 'string' || decision.reason.trim().length === 0) {
    return 'a reason is required (it is kept in the audit trail)';
  }
  if (typeof decision.operator !== 'string' || decision.operator.trim().length === 0) {
    return 'operator is required (who decided)';
  }
  return null;
}

export async function screeningReviewWorkflow(input: ScreeningReviewInput): Promise<ReviewOutcome> {
  let state: 'open' | ReviewOutcome = 'open';
  let decision: (ReviewDecision & { updateId: string }) | null = null;
  let subjectUnderReview = input.opening !== 'rescreening';
  const publish = () =>
    upsertSearchAttributes([
      { key: PartnerIdAttribute, value: input.partnerId },
      { key: ResourceIdAttribute, value: input.resourceId },
      { key: ResourceStatusAttribute, value: state === 'open' ? 'screening_review' : state },
    ]);
  publish();

  setHandler(screeningReviewStateQuery, () => ({ state, input, subjectUnderReview }));
  setHandler(
    decideScreeningReviewUpdate,
    async (incoming) => {
      decision = { ...incoming, updateId: currentUpdateInfo()?.id ?? '' };
      await condition(() => state !== 'open');
      return state as ReviewOutcome;
    },
    {
      validator: (incoming) => {
        const problem = reviewDecisionProblem(incoming);
        if (problem) throw ApplicationFailure.nonRetryable(problem, screeningReviewRefusals.invalidDecision);
        if (decision !== null || state !== 'open') {
          throw ApplicationFailure.nonRetryable(
            `the review was already decided (${state === 'open' ? 'being applied' : state})`,
            screeningReviewRefusals.alreadyDecided,
          );
        }
      },
    },
  );

  if (input.opening === 'rescreening') {
    await activities.openScreeningReview(input);
    subjectUnderReview = true;
  }
  // Indefinite by design: an operator queue, not a timeout (docs/screening.md "Review").
  await waitForOperator(
    () => decision !== null,
    'a screening review awaits an operator decision',
    { resourceId: input.resourceId, workflowId: workflowInfo().workflowId },
    'operator-wait-reminders',
  );
  const taken = decision as unknown as ReviewDecision & { updateId: string };
  await activities.closeScreeningReview({
    ...input,
    workflowId: workflowInfo().workflowId,
    updateId: taken.updateId,
    decision: taken.decision,
    reason: taken.reason,
    operator: taken.operator,
  });
  state = taken.decision === 'clear' ? 'cleared' : 'confirmed';
  publish();
  await condition(allHandlersFinished);
  return state;
}

/**
 * A payout's receiver, screened right before leg 2 pays out (the settlement workflow, patch
 * `payout-receiver-screening`). A potential match holds the payout (`onHold`: the settlement shows it) until an
 * operator decides its review (a child workflow, id screening-review-<transaction id>): `release` after clear,
 * `refund` after confirm.
 */
export async function screenPayoutBeforeItLeaves(
  input: { transactionId: string; partnerId: string },
  onHold: () => void,
): Promise<'release' | 'refund'> {
  const screening = await activities.screenPayoutReceiver(input.transactionId);
  if (!screening.potentialMatch) return 'release';
  onHold();
  const outcome = await executeChild(screeningReviewWorkflow, {
    workflowId: screeningReviewWorkflowId(input.transactionId),
    args: [
      {
        subjectType: 'payout',
        resourceId: input.transactionId,
        partnerId: input.partnerId,
        screeningIds: screening.screeningIds,
        opening: 'payout',
      },
    ],
  });
  return outcome === 'cleared' ? 'release' : 'refund';
}

export interface RescreeningResult {
  customersScreened: number;
  externalAccountsScreened: number;
  /** The reviews opened (their workflows are started by the start relay, with the subject's status change). */
  reviewsOpened: { resourceId: string; workflowId: string }[];
}

/** Subjects screened per activity: a page is bounded in time (about 1 ms a name) and in its heartbeat-free run. */
const PAGE_SIZE = 200;

export interface RescreeningInput {
  /** The list versions that started it (source:sha256), for the history. */
  versions: string[];
  /** Only these partners' subjects: a test's seam (test files share one database); all when absent. */
  partnerIds?: string[];
}

export async function rescreeningWorkflow(input: RescreeningInput): Promise<RescreeningResult> {
  const result: RescreeningResult = { customersScreened: 0, externalAccountsScreened: 0, reviewsOpened: [] };
  for (const subjectType of ['customer', 'external_account'] as const) {
    let after: string | null = null;
    for (;;) {
      const page: Awaited<ReturnType<Activities['rescreenPage']>> = await activities.rescreenPage({
        subjectType,
        after,
        limit: PAGE_SIZE,
        ...(input.partnerIds ? { partnerIds: input.partnerIds } : {}),
      });
      if (subjectType === 'customer') result.customersScreened += page.screened;
      else result.externalAccountsScreened += page.screened;
      // Each review was opened with its subject's status change; the start relay starts its workflow.
      result.reviewsOpened.push(...page.reviews);
      if (page.next === null) break;
      after = page.next;
    }
  }
  return result;
}

export interface ListRefreshResult {
  outcomes: { source: string; outcome: 'loaded' | 'unchanged' | 'refused'; detail?: string }[];
  rescreening: RescreeningResult | null;
}

/** The Schedule's run: every configured list, then a re-screening when a version changed (`partnerIds`: a test's seam). */
export async function screeningListRefreshWorkflow(input: { partnerIds?: string[] } = {}): Promise<ListRefreshResult> {
  const sources = await activities.configuredScreeningLists();
  const outcomes: ListRefreshResult['outcomes'] = [];
  for (const source of sources) outcomes.push(await loading.refreshScreeningList(source));
  if (!outcomes.some((outcome) => outcome.outcome === 'loaded')) return { outcomes, rescreening: null };
  // Old versions' entries are large: pruned once a new one is in (those a screening names are kept).
  if (patched('screening-version-pruning')) await activities.pruneScreeningListVersions();
  const versions = await activities.currentScreeningVersions();
  const child = await startChild(rescreeningWorkflow, {
    workflowId: `${workflowInfo().workflowId}-rescreening`,
    args: [{ versions, ...(input.partnerIds ? { partnerIds: input.partnerIds } : {}) }],
  });
  return { outcomes, rescreening: await child.result() };
}
