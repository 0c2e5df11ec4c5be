// The catalogue of every error code the API answers with: its HTTP status and when it happens.
// ApiError takes its status from here, the OpenAPI description documents each operation's codes
// from here, and a test checks that the error table of docs/errors.md says the same.

import type { DomainErrorCode } from '../domain/errors';
import { JSON_BODY_LIMIT_MB, MAX_JSON_DEPTH } from './limits';

export const errorCatalogue = {
  validation_error: { status: 400, when: 'Some fields are missing or invalid; `details` lists each one.' },
  invalid_json: {
    status: 400,
    when: `The request body is not valid JSON, or nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
  },
  malformed_request: {
    status: 400,
    when: 'The request is not valid HTTP/1.1 (request line, header syntax, Content-Length or chunked framing); nothing was done.',
  },
  unauthorized: {
    status: 401,
    when: 'The API key is missing, unknown or revoked, or belongs to the other environment (sk_live_ keys in the sandbox, sk_sandbox_ keys in production).',
  },
  not_found: {
    status: 404,
    when: 'The resource does not exist or belongs to another partner; also unknown routes.',
  },
  method_not_allowed: { status: 405, when: 'The path exists but not with this HTTP method.' },
  request_timeout: { status: 408, when: 'The request headers did not arrive in time; nothing was done.' },
  payload_too_large: {
    status: 413,
    when: `The request body is larger than the documented limit (${JSON_BODY_LIMIT_MB} MB for a JSON body, 10 MB for a document).`,
  },
  request_headers_too_large: { status: 431, when: 'The request headers exceed 16 KB; nothing was done.' },
  unsupported_media_type: {
    status: 415,
    when: 'The Content-Type is not the one the operation accepts (application/json, or multipart/form-data for uploads).',
  },
  idempotency_key_in_use: {
    status: 409,
    when: 'Another request with the same Idempotency-Key is still being processed; retry shortly to get its result.',
  },
  idempotency_key_reused: {
    status: 422,
    when: 'The Idempotency-Key was already used in the last 24 hours for a different request (method, path, query or body).',
  },
  customer_rejected: {
    status: 422,
    when: 'The customer was permanently rejected: no further documents, verification checks or external accounts are accepted.',
  },
  customer_already_approved: { status: 422, when: 'The customer is already approved; there is nothing to verify.' },
  customer_verification_in_progress: {
    status: 422,
    when: 'The customer is under review; wait for the result before uploading documents or calling check again.',
  },
  verification_documents_missing: {
    status: 422,
    when: 'check was called before the minimum documents were uploaded; the message names what is missing.',
  },
  customer_not_approved: {
    status: 422,
    when: 'The operation needs an approved customer (wallets, virtual accounts, transactions) and this one is not.',
  },
  pix_key_invalid: {
    status: 422,
    when: 'The pix key has none of the pix key formats (CPF, CNPJ, email, +55 phone, random key), its CPF/CNPJ check digits are wrong, or the pix directory does not know it.',
  },
  pix_directory_unavailable: {
    status: 503,
    when: 'The pix directory could not be asked about the key just now; nothing was created. Retry later.',
  },
  external_account_already_exists: {
    status: 422,
    when: 'The customer already registered this bank account (same rail and account identifiers, whatever its status); the message names it.',
  },
  webhook_config_already_exists: {
    status: 422,
    when: 'The partner already has a webhook configuration (one per partner); change it with PUT /v1/webhook-configs/{id}.',
  },
  webhook_config_missing: {
    status: 422,
    when: 'The operation sends webhooks (redeliver, mock) and the partner has no webhook configuration.',
  },
  webhook_config_disabled: {
    status: 422,
    when: 'The operation sends webhooks (redeliver, mock) and the webhook configuration is disabled.',
  },
  amount_out_of_range: {
    status: 422,
    when: 'An amount (given or computed, on either side) is outside the allowed range of its currency, or does not cover the fees; the message names the range (e.g. 1 to 1000 BRL).',
  },
  quote_expired: { status: 422, when: 'The quote is older than its 5-minute lifetime; request a new quote.' },
  quote_already_used: { status: 422, when: 'The quote was already used by another transaction; a quote is used once.' },
  quote_currency_mismatch: {
    status: 422,
    when: "The quote's currencies or rails do not match the accounts given: the external account's rail and currency must be the quote's receiver side, the wallet's chain the quote's stablecoin chain.",
  },
  external_account_rejected: {
    status: 422,
    when: 'The external account was rejected (screening) and cannot receive payouts; register another one.',
  },
  external_account_under_review: {
    status: 422,
    when: 'The external account is under review (a potential sanctions-list match) and cannot receive payouts until an operator clears it.',
  },
  payin_cannot_be_cancelled: {
    status: 422,
    when: 'Only a pay-in in awaiting_deposit can be cancelled (fiat to fiat is a pay-in to partners); the message names its status.',
  },
  payout_cannot_be_cancelled: {
    status: 422,
    when: 'Only a payout in awaiting_deposit (waiting for its stablecoin) can be cancelled; a payout from a wallet starts processing. The message names its status.',
  },
  payout_cannot_be_confirmed: {
    status: 422,
    when: 'POST /v1/payout/confirm on a payout that is not in awaiting_deposit (already confirmed, from a wallet, cancelled, past its deadline); the message names its status.',
  },
  payin_cannot_be_confirmed: {
    status: 422,
    when: 'POST /v1/payout/confirm on a pay-in or a fiat-to-fiat transaction: only payouts are confirmed (a pay-in is funded by its fiat deposit).',
  },
  payout_return_not_allowed: {
    status: 422,
    when: 'A payout return was reported for a transaction that is not completed (the message names its status), or that was returned before (one return per transaction).',
  },
  payin_cannot_be_returned: {
    status: 422,
    when: 'A payout return was reported for a pay-in: it paid nothing out to a bank.',
  },
  return_amount_exceeds_payout: {
    status: 422,
    when: "A payout return's amount is more than the transaction paid out (its `receiver.amount`), or in another currency.",
  },
  payout_return_reference_conflict: {
    status: 422,
    when: "The bank's return reference was recorded already for another transaction or another amount; the same return again answers the first.",
  },
  customer_mismatch: {
    status: 422,
    when: 'The wallet (or external account) given belongs to another customer than the `customer_id` of the request.',
  },
  eur_virtual_account_3pp_exists: {
    status: 422,
    when: 'The customer already has a EUR virtual account with accepts_third_party_payments true (one is allowed; rejected ones do not count).',
  },
  insufficient_funds: {
    status: 422,
    when: "The wallet's balance in the currency does not cover the amount to debit (a payout from the wallet, or a wallet transfer's amount plus its network fee); nothing was created.",
  },
  wallet_transfer_same_wallet: {
    status: 422,
    when: 'A wallet transfer names the source wallet (or its address) as its destination.',
  },
  wallet_transfer_chain_mismatch: {
    status: 422,
    when: "A wallet transfer's destination is on another chain than the source wallet: a wallet on the other chain, or an address in the other chain's format.",
  },
  virtual_account_cannot_be_cancelled: {
    status: 422,
    when: 'Only a virtual account under review or approved can be cancelled; the message names its status (rejected or cancelled).',
  },
  invalid_cursor: {
    status: 422,
    when: '`after` or `before` is not a cursor this API returned; pass `cursor.after` / `cursor.before` back unchanged.',
  },
  conflicting_list_filters: {
    status: 422,
    when: 'A list was given `after` together with `before`, or an `end_date` earlier than its `start_date`.',
  },
  beneficiary_shares_exceed_100: {
    status: 422,
    when: "The beneficiaries' `share_size` values add up to more than 100 (each one is within 0-100).",
  },
  document_not_applicable: {
    status: 422,
    when: "The document does not apply to this customer: a business document for an individual (or the reverse), or a `beneficiary_id` that is not one of the customer's beneficiaries (or given for an individual).",
  },
  logo_invalid: {
    status: 422,
    when: 'The branding logo is empty or not a PNG, JPEG or WEBP image by its content (SVG and other types are refused).',
  },
  invalid_verification_outcome: {
    status: 422,
    when: "A sandbox verification outcome names a step this customer's type does not have.",
  },
  clabe_bank_code_mismatch: {
    status: 422,
    when: "spei: `bank_code` is not the CLABE's first three digits.",
  },
  quote_type_mismatch: {
    status: 422,
    when: '`quote_id` names a quote of another type than the operation takes (fiat to fiat, pay-in or payout).',
  },
  quote_amount_mismatch: {
    status: 422,
    when: "The amount does not fit the quote: a quote with amounts takes none, a rate-only quote needs one (the message names where), with at most its currency's decimal places.",
  },
  amount_too_precise: {
    status: 422,
    when: "The amount has more decimal places than the currency of the resource it is for (the transaction's sender currency) allows.",
  },
  deposit_reference_mismatch: {
    status: 422,
    when: "A sandbox deposit's `reference` is not the transaction's deposit reference.",
  },
  tx_hash_not_found: {
    status: 422,
    when: "POST /v1/payout/confirm on a checked chain: the chain's node knows no transaction with `tx_hash`.",
  },
  tx_hash_confirmation_timeout: {
    status: 422,
    when: 'POST /v1/payout/confirm on a checked chain: `tx_hash` was accepted while not deep enough, and did not reach the chain’s confirmations within PAYOUT_TX_HASH_WAIT_MINUTES; the payout awaits another hash (or its deadline).',
  },
  tx_hash_failed: {
    status: 422,
    when: 'POST /v1/payout/confirm on a checked chain: the transaction reverted and moved nothing.',
  },
  tx_hash_wrong_token: {
    status: 422,
    when: "POST /v1/payout/confirm on a checked chain: the transaction moved none of the payout's stablecoin (another token, or none).",
  },
  tx_hash_wrong_recipient: {
    status: 422,
    when: "POST /v1/payout/confirm on a checked chain: the payout's stablecoin went to another address than the payout's deposit address.",
  },
  tx_hash_amount_too_low: {
    status: 422,
    when: "POST /v1/payout/confirm on a checked chain: less than the payout's stablecoin amount arrived at its deposit address.",
  },
  tx_hash_already_used: {
    status: 422,
    when: 'POST /v1/payout/confirm: `tx_hash` already funded another payout; a transfer counts once.',
  },
  provider_reference_in_use: {
    status: 409,
    when: "A deposit's `provider_reference` (the bank's own id of the credit) already names a deposit of another transaction or virtual account: one credit funds one thing.",
  },
  tx_hash_chain_mismatch: {
    status: 422,
    when: "`tx_hash` is a transaction hash of the other chain than the payout's stablecoin chain.",
  },
  webhook_url_not_allowed: {
    status: 422,
    when: 'The webhook URL cannot be used: its host is private, loopback, link-local, reserved, `localhost` or a single label, it carries credentials, or (production) it is not https.',
  },
  rate_limited: {
    status: 429,
    when: 'Too many requests in the current window (per partner on the API, per client address on the hosted verification pages), or too many failed authentications (unknown or revoked API keys) from the client address, which then has every authenticated request refused, whatever its key, until the window ends; wait the seconds of `Retry-After`.',
  },
  flow_not_available: {
    status: 422,
    when: 'Production only: the quote or transaction needs a provider this deployment has no adapter for (a fiat rail’s deposits or payouts, a chain, the exchange or screening); `message` names each flow and what is missing. Nothing was created; the sandbox serves every flow.',
  },
  service_unavailable: {
    status: 503,
    when: 'A dependency (database or workflow engine) is down or did not answer within the request deadline. Retry after the `Retry-After` seconds with the same Idempotency-Key: a request that did complete is then replayed, never done twice.',
  },
  internal_error: { status: 500, when: 'Unexpected server fault; nothing internal is revealed. Retry later.' },
} as const satisfies Record<string, { status: number; when: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

// Every refusal of the use cases (src/domain/errors.ts) has its status and text here.
errorCatalogue satisfies Record<DomainErrorCode, { status: number; when: string }>;

export { validationDetailCodes, type ValidationDetailCode } from '../domain/errors';
