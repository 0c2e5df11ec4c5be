// Identity verification providers. The workflow asks the provider to review a customer; the
// decision comes back later, either on its own (the sandbox simulation, after a delay) or as a
// signal (production: an operator or a provider callback signals `verificationDecision`).
import type { VerificationDecision } from '../domain/verification';

export interface VerificationSubmission {
  customerId: string;
  customerType: 'individual' | 'business';
  documentIds: string[];
}

export interface SubmissionReceipt {
  /** The provider's reference for this review. */
  reference: string;
  /** A decision the workflow applies by itself after `afterSeconds` unless a signal decides first. */
  automaticDecision: { decision: VerificationDecision; afterSeconds: number } | null;
}

export interface VerificationProvider {
  submit(submission: VerificationSubmission): Promise<SubmissionReceipt>;
}

/** Sandbox: approves every review after a configurable delay (SANDBOX_VERIFICATION_DELAY_SECONDS). */
export class SimulatedVerificationProvider implements VerificationProvider {
  constructor(private readonly delaySeconds: number) {}

  async submit(submission: VerificationSubmission): Promise<SubmissionReceipt> {
    return {
      reference: `sandbox-${submission.customerId}`,
      automaticDecision: { decision: { outcome: 'approved', rejected_steps: [] }, afterSeconds: this.delaySeconds },
    };
  }
}

/** Production without an automated provider: reviews are decided by an operator's signal. */
export class ManualReviewProvider implements VerificationProvider {
  async submit(submission: VerificationSubmission): Promise<SubmissionReceipt> {
    return { reference: `manual-${submission.customerId}`, automaticDecision: null };
  }
}
