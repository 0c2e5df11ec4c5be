import { ErrorCode, errorCatalogue, ValidationDetailCode } from './error-codes';

export interface ValidationDetail {
  code: ValidationDetailCode;
  /** Dotted path of the field, e.g. `address.country` or `beneficiaries.0.share_size`. */
  param: string;
  message: string;
}

/** What a 503 advises when nothing better is known: long enough for a restart, short enough to feel live. */
export const DEFAULT_RETRY_AFTER_SECONDS = 2;

/** The one error type of the API. Its HTTP status comes from the error catalogue. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  /** Sent as `Retry-After` (503 and 429 answers). */
  retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ValidationDetail[],
  ) {
    super(message);
    this.status = errorCatalogue[code].status;
  }

  toBody(): { error: { code: ErrorCode; message: string; details?: ValidationDetail[] } } {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }

  static notFound(resource: string, id?: string): ApiError {
    return new ApiError('not_found', id ? `No ${resource} with id '${id}'.` : `No such ${resource}.`);
  }

  static validation(details: ValidationDetail[]): ApiError {
    const summary = details.map((detail) => `${detail.param}: ${detail.message}`).join('; ');
    return new ApiError('validation_error', `Invalid request: ${summary}`, details);
  }

  /** A dependency (database, workflow engine) could not serve the request in time: retryable. */
  static unavailable(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}): ApiError {
    const error = new ApiError('service_unavailable', message);
    error.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
    if (options.cause !== undefined) (error as { cause?: unknown }).cause = options.cause;
    return error;
  }

  static invalidParam(param: string, message: string): ApiError {
    return ApiError.validation([{ code: 'invalid_param', param, message }]);
  }
}
