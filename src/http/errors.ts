import { ErrorCode, errorCatalogue, ValidationDetailCode } from './error-codes';

export interface ValidationDetail {
  code: ValidationDetailCode;
  /** Dotted path of the field, e.g. `address.country` or `beneficiaries.0.share_size`. */
  param: string;
  message: string;
}

/** The one error type of the API. Its HTTP status comes from the error catalogue. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;

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

  static invalidParam(param: string, message: string): ApiError {
    return ApiError.validation([{ code: 'invalid_param', param, message }]);
  }
}
