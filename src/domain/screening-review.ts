// What a screening review is about (workflows/screening.ts screeningReviewWorkflow, activities/screening.ts).

/** payout: the receiver of a payout, screened before it leaves (the settlement workflow holds it meanwhile). */
export type ReviewSubjectType = 'customer' | 'external_account' | 'payout';

export interface ScreeningReviewInput {
  subjectType: ReviewSubjectType;
  /** The customer, external account or transaction (payout). */
  resourceId: string;
  partnerId: string;
  /** The screenings that found the potential match. */
  screeningIds: string[];
  /**
   * verification: a customer's verification workflow waits for this one and decides the customer (clear lets the
   * verification go on; confirm rejects). creation: an external account created under review. rescreening: an
   * approved subject a new list version matched; the review puts it under review and back. payout: a payout held
   * before it leaves; the settlement workflow waits for this one (clear releases the payout, confirm refunds it).
   */
  opening: 'verification' | 'creation' | 'rescreening' | 'payout';
}

export type ReviewDecisionKind = 'clear' | 'confirm';

/** The review opened at creation or verification. */
export const screeningReviewWorkflowId = (resourceId: string) => `screening-review-${resourceId}`;
/** A review a re-screening opened: one per screening, since a subject may be reviewed again after an earlier review. */
export const rescreeningReviewWorkflowId = (resourceId: string, screeningId: string) =>
  `screening-review-${resourceId}-${screeningId}`;

/**
 * Sandbox `simulate` of customers and external accounts (payouts take it among the transactions' simulations):
 * `screening_review` makes the screening a potential match whatever the name, so that a review can be seen end to end.
 */
export const sandboxScreeningSimulations = ['screening_review'] as const;
export type SandboxScreeningSimulation = (typeof sandboxScreeningSimulations)[number];
