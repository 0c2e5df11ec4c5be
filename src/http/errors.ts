import { DEFAULT_RETRY_AFTER_SECONDS, DomainError, type ValidationDetail } from '../domain/errors';
import { ErrorCode, errorCatalogue } from './error-codes';

export type { ValidationDetail };

/**
 * The error type of the API's answers. Its HTTP status comes from the error catalogue. The HTTP side throws it; the
 * use cases throw DomainError, which apiErrorOf maps to it.
 */
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

/** The answer for a failure the API knows (an ApiError, or a use case's DomainError), else null. */
export function apiErrorOf(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (!(error instanceof DomainError)) return null;
  const answer = new ApiError(error.code, error.message, error.details);
  if (error.retryAfterSeconds !== undefined) answer.retryAfterSeconds = error.retryAfterSeconds;
  if (error.cause !== undefined) (answer as { cause?: unknown }).cause = error.cause;
  return answer;
}
