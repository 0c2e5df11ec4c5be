// The refusals of the use cases (src/services), whoever calls them: a route answers each with the HTTP status of its
// code in the error catalogue (src/http/error-codes.ts), an activity or the bank-report intake reads the code. The
// codes here are the catalogue's minus those only the HTTP transport raises (framing, authentication, idempotency
// keys); the catalogue must have every one of them (a type check there).

export const domainErrorCodes = [
  'validation_error',
  'not_found',
  'customer_rejected',
  'customer_already_approved',
  'customer_verification_in_progress',
  'verification_documents_missing',
  'customer_not_approved',
  'pix_key_invalid',
  'pix_directory_unavailable',
  'external_account_already_exists',
  'webhook_config_already_exists',
  'webhook_config_missing',
  'webhook_config_disabled',
  'amount_out_of_range',
  'quote_expired',
  'quote_already_used',
  'quote_currency_mismatch',
  'external_account_rejected',
  'external_account_under_review',
  'payin_cannot_be_cancelled',
  'payout_cannot_be_cancelled',
  'payout_cannot_be_confirmed',
  'payin_cannot_be_confirmed',
  'payout_return_not_allowed',
  'payin_cannot_be_returned',
  'return_amount_exceeds_payout',
  'payout_return_reference_conflict',
  'customer_mismatch',
  'eur_virtual_account_3pp_exists',
  'insufficient_funds',
  'wallet_transfer_same_wallet',
  'wallet_transfer_chain_mismatch',
  'virtual_account_cannot_be_cancelled',
  'invalid_cursor',
  'conflicting_list_filters',
  'beneficiary_shares_exceed_100',
  'document_not_applicable',
  'logo_invalid',
  'invalid_verification_outcome',
  'clabe_bank_code_mismatch',
  'quote_type_mismatch',
  'quote_amount_mismatch',
  'amount_too_precise',
  'deposit_reference_mismatch',
  'tx_hash_not_found',
  'tx_hash_confirmation_timeout',
  'tx_hash_failed',
  'tx_hash_wrong_token',
  'tx_hash_wrong_recipient',
  'tx_hash_amount_too_low',
  'tx_hash_already_used',
  'provider_reference_in_use',
  'tx_hash_chain_mismatch',
  'webhook_url_not_allowed',
  'rate_limited',
  'flow_not_available',
  'service_unavailable',
] as const;

export type DomainErrorCode = (typeof domainErrorCodes)[number];

/** The codes that mean "not now": the same request may succeed later. Every other code is a refusal. */
const unavailableCodes: ReadonlySet<DomainErrorCode> = new Set(['service_unavailable', 'pix_directory_unavailable']);

/** Codes of the entries in a validation_error's `details` list. */
export const validationDetailCodes = ['missing_param', 'invalid_param'] as const;
export type ValidationDetailCode = (typeof validationDetailCodes)[number];

export interface ValidationDetail {
  code: ValidationDetailCode;
  /** Dotted path of the field, e.g. `address.country` or `beneficiaries.0.share_size`. */
  param: string;
  message: string;
}

/** What a "not now" advises when nothing better is known: long enough for a restart, short enough to feel live. */
export const DEFAULT_RETRY_AFTER_SECONDS = 2;

/** A use case's refusal (or a dependency it needs being unavailable), by its catalogue code. */
export class DomainError extends Error {
  override name = 'DomainError';
  /** When to try again, for the codes that mean "not now" and for rate limits. */
  retryAfterSeconds?: number;

  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: ValidationDetail[],
  ) {
    super(message);
  }

  /** True for a refusal of the request itself (retrying it gets the same answer), false for "not now". */
  get isRefusal(): boolean {
    return !unavailableCodes.has(this.code);
  }

  static notFound(resource: string, id?: string): DomainError {
    return new DomainError('not_found', id ? `No ${resource} with id '${id}'.` : `No such ${resource}.`);
  }

  static validation(details: ValidationDetail[]): DomainError {
    const summary = details.map((detail) => `${detail.param}: ${detail.message}`).join('; ');
    return new DomainError('validation_error', `Invalid request: ${summary}`, details);
  }

  static invalidParam(param: string, message: string): DomainError {
    return DomainError.validation([{ code: 'invalid_param', param, message }]);
  }

  /** A dependency (a chain's node, the workflow engine) could not serve the use case in time: retryable. */
  static unavailable(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}): DomainError {
    const error = new DomainError('service_unavailable', message);
    error.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
    if (options.cause !== undefined) (error as { cause?: unknown }).cause = options.cause;
    return error;
  }
}
