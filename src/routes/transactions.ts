// HTTP operations on transactions (SPEC 4.4, 3.3): fiat to fiat, pay-ins, payouts and their
// confirmation, view, cancel, list, and the sandbox's simulated deposits (on a transaction, and on a
// virtual account, which makes a pay-in).
import { durationInProse, fiatRails, listInProse, railDefinitions } from '../domain/rails';
import { listSchema } from '../schemas/pagination';
import { defineRoute, idParam } from '../http/route';
import { toTransaction } from '../presenters/transactions';
import { cancelTransaction } from '../services/transactions/cancel';
import { createFiatToFiat, createPayin, createPayout } from '../services/transactions/create';
import { receiveSandboxDeposit } from '../services/transactions/deposits';
import { receiveSandboxPayoutReturn } from '../services/transactions/payout-returns';
import { payoutReturnSchema, sandboxPayoutReturnRequestSchema } from '../schemas/payout-returns';
import { findTransactionOrThrow, listTransactions } from '../services/transactions/find';
import { confirmPayout } from '../services/transactions/payout-confirmation';
import { receiveSandboxVirtualAccountDeposit } from '../services/transactions/virtual-account-deposits';
import {
  confirmPayoutRequestSchema,
  createFiatToFiatRequestSchema,
  createPayinRequestSchema,
  createPayoutRequestSchema,
  depositSchema,
  sandboxVirtualAccountDepositRequestSchema,
  listTransactionsQuerySchema,
  sandboxDepositRequestSchema,
  transactionSchema,
  updateTransactionRequestSchema,
} from '../schemas/transactions';

const tag = 'Transactions';
const paymentsTag = 'Pay-ins and payouts';
/** What every transaction made from a quote may answer. */
const quoteBasedErrors = [
  'not_found',
  'quote_expired',
  'quote_already_used',
  'customer_not_approved',
  'customer_mismatch',
  'quote_currency_mismatch',
  'quote_type_mismatch',
  'quote_amount_mismatch',
  'flow_not_available',
] as const;

/** `pix, ... and cvu 30 minutes; wire and sepa 2 days; ach 3 days`, from the rail definitions. */
const depositWindowsInProse = [...new Set(fiatRails.map((rail) => railDefinitions[rail].depositWindowMs))]
  .map(
    (ms) =>
      `${listInProse(fiatRails.filter((rail) => railDefinitions[rail].depositWindowMs === ms))} ${durationInProse(ms)}`,
  )
  .join('; ');

const lifecycle = `
**Lifecycle**: \`awaiting_deposit\` (the sender pays per \`sender_deposit_instructions\`, with the reference, before
\`deposit_deadline\`) -> \`processing\` (deposit received; the fiat becomes the stablecoin in the wallet, then the
receiver's fiat paid to the external account) -> \`completed\`. Also: \`cancelled\` (PUT, only while awaiting the
deposit), \`failed\` (no deposit by the deadline: ${depositWindowsInProse}), \`refunded\` (the money went back to the sender in full, fees included: the payout was rejected, the deposit
was not the expected amount, or an operator refunded), \`error\` (a step kept failing; an operator retries it or
refunds, and the transaction goes back to \`processing\`). A transaction never goes backwards.

**Returned** (fiat to fiat and payouts): days after \`completed\`, the receiving bank may send the payout back (a
SEPA or ACH return: closed account, wrong beneficiary): \`returned\` (failure_reason \`payout_returned\`; sandbox: POST
/v1/sandbox/transactions/{id}/payout-return). The service then pays it out again (\`completed\` again, possibly to
another account of the customer) or, for a payout from a wallet, gives the stablecoin back to the wallet
(\`refunded\`).

**Events** (the full transaction as \`event_resource\`): payin.created, payin.processing, payin.completed,
payin.cancelled, payin.failed, payin.refunded, payin.error, payin.returned for fiat to fiat and pay-ins; the same
payout.* events for payouts. Fiat to fiat is a pay-in to partners: its internal payout leg sends no payout.* events.
payin.returned and payout.returned go beyond SPEC 6: subscribe to them to hear of returns.

**Types**: \`fiat_to_fiat\` (both legs), \`payin\` (fiat in, the stablecoin credited to \`wallet_id\`; created by POST
/v1/payin, or by a deposit on a virtual account, which starts \`processing\`), \`payout\` (the stablecoin out as fiat;
from a wallet it starts \`processing\`, else it awaits the stablecoin on chain, confirmed by POST /v1/payout/confirm).

**Deposits**: only exactly the sender amount settles. Another amount is returned in full and the transaction ends
\`refunded\` (failure_reason \`deposit_amount_mismatch\`). A deposit after a cancellation or the deadline, or a second
one, is returned in full and the transaction does not change.`.trim();

const createFiatToFiatRoute = defineRoute({
  method: 'post',
  path: '/v1/fiat-to-fiat',
  operationId: 'createFiatToFiat',
  tag,
  summary: 'Initiate a fiat-to-fiat transaction',
  description:
    'Uses a fiat-to-fiat quote (once) to move fiat from a sender to the customer’s external account in another ' +
    'currency; the stablecoin in between is held on `wallet_id`. Answers 201 with the transaction in ' +
    '`awaiting_deposit` and its `sender_deposit_instructions`; event payin.created.\n\n' +
    '**Checks**, each refusing with nothing created and the quote still usable: the quote is a fiat-to-fiat quote of ' +
    'yours (404; another type: 400 on quote_id), not expired (`quote_expired`), not used (`quote_already_used`); the ' +
    'customer is yours and approved (`customer_not_approved`); wallet and external account are yours (404) and the ' +
    'customer’s (`customer_mismatch`); the wallet is on the quote’s stablecoin chain and the external account on its ' +
    'receiver rail (`quote_currency_mismatch`); the external account is not rejected (`external_account_rejected`) nor under review ' +
    '(`external_account_under_review`); ' +
    'a rate-only quote needs `sender.amount` or `receiver.amount` (priced with the locked rates; ' +
    '`amount_out_of_range`), a quote with amounts takes none.\n\n' +
    lifecycle,
  body: createFiatToFiatRequestSchema,
  response: { status: 201, description: 'The transaction, awaiting the deposit.', schema: transactionSchema },
  errors: [
    ...quoteBasedErrors,
    'external_account_rejected',
    'external_account_under_review',
    'amount_out_of_range',
    'service_unavailable',
  ],
  async handler({ body, partner, services }) {
    return createFiatToFiat(services, partner.id, body);
  },
});

const payinChecks =
  '**Checks**, each refusing with nothing created and the quote still usable: the quote is a pay-in quote of yours ' +
  '(404; another type: 400 on quote_id), not expired (`quote_expired`), not used (`quote_already_used`); the customer ' +
  'is yours and approved (`customer_not_approved`); the wallet is yours (404), the customer’s (`customer_mismatch`) ' +
  'and on the quote’s receiver chain (`quote_currency_mismatch`); a rate-only quote needs `sender.amount` ' +
  '(`amount_out_of_range`), a quote with amounts takes none.';

const createPayinRoute = defineRoute({
  method: 'post',
  path: '/v1/payin',
  operationId: 'createPayin',
  tag: paymentsTag,
  summary: 'Initiate a pay-in (fiat to stablecoin)',
  description:
    'Uses a pay-in quote (once): the sender pays fiat per `sender_deposit_instructions` (with the reference, before ' +
    '`deposit_deadline`); the stablecoin is credited to `wallet_id`’s balance. Answers 201 with the transaction (type ' +
    '`payin`) in `awaiting_deposit`; event payin.created. The deposit moves it to `processing` (payin.processing), ' +
    'the conversion to `completed` (payin.completed, the wallet’s balance grows by `stablecoin.amount`). Cancel, ' +
    'deadline, wrong amount, error and operator decisions as for fiat to fiat (GET /v1/transactions/{id}).\n\n' +
    payinChecks,
  body: createPayinRequestSchema,
  response: { status: 201, description: 'The pay-in, awaiting the deposit.', schema: transactionSchema },
  errors: [...quoteBasedErrors, 'amount_out_of_range', 'service_unavailable'],
  async handler({ body, partner, services }) {
    return createPayin(services, partner.id, body);
  },
});

const createPayoutRoute = defineRoute({
  method: 'post',
  path: '/v1/payout',
  operationId: 'createPayout',
  tag: paymentsTag,
  summary: 'Initiate a payout (stablecoin to fiat)',
  description:
    'Uses a payout quote (once) to pay the receiver’s bank account in fiat. Answers 201 with the transaction (type ' +
    '`payout`); event payout.created.\n\n' +
    '**With `wallet_id`**: the stablecoin (`sender.amount`, fees included) is debited from the wallet’s balance at ' +
    'once, in the same database transaction as the payout (a balance never goes negative, also under concurrent ' +
    'payouts: 422 `insufficient_funds`, nothing created); the payout starts in `processing`. A rejected or ' +
    'operator-refunded payout gives the whole amount back to the wallet (`refunded`, payout.refunded).\n\n' +
    '**Without `wallet_id`**: the payout waits in `awaiting_deposit` for the stablecoin, sent on chain per ' +
    '`sender_deposit_instructions` (chain, address, amount, deadline: 60 minutes); POST /v1/payout/confirm tells it ' +
    'was sent and moves it to `processing`. Cancel with PUT /v1/transactions/{id} while awaiting ' +
    '(`payout_cannot_be_cancelled` after); no confirmation by the deadline: `failed`. A rejected or operator-refunded ' +
    'payout sends the whole amount back on chain to the address it came from (`refunded`).\n\n' +
    '**Receiver**: `external_account_id` (an approved external account of the customer on the quote’s receiver rail), ' +
    'or on the pix rail `pix` (key and document, SPEC 4.2; the key is checked as external accounts check it: ' +
    '`pix_key_invalid`).\n\n' +
    '**Checks**, each refusing with nothing created and the quote still usable: the quote is a payout quote of yours ' +
    '(404; another type: 400 on quote_id), not expired, not used; the customer approved; wallet and external account ' +
    'the customer’s (`customer_mismatch`); the wallet on the quote’s sender chain and the external account on its ' +
    'receiver rail (`quote_currency_mismatch`); the external account not rejected nor under review; a rate-only quote needs `amount` ' +
    '(`amount_out_of_range`); the balance (`insufficient_funds`).',
  body: createPayoutRequestSchema,
  response: { status: 201, description: 'The payout.', schema: transactionSchema },
  errors: [
    ...quoteBasedErrors,
    'external_account_rejected',
    'external_account_under_review',
    'pix_key_invalid',
    'pix_directory_unavailable',
    'amount_out_of_range',
    'insufficient_funds',
    'service_unavailable',
  ],
  async handler({ body, partner, services }) {
    return createPayout(services, partner.id, body);
  },
});

const confirmPayoutRoute = defineRoute({
  method: 'post',
  path: '/v1/payout/confirm',
  operationId: 'confirmPayout',
  tag: paymentsTag,
  summary: 'Confirm a payout’s stablecoin was sent',
  description:
    'For a payout created without `wallet_id`: the stablecoin was sent on chain (`tx_hash`: 0x + 64 hex on ethereum, ' +
    'a base58 signature on solana). The payout moves to `processing` (payout.processing) and is paid out; answers 200 ' +
    'with it. A confirmation racing a cancellation or the deadline has one outcome. 422 `payout_cannot_be_confirmed` ' +
    'when the payout is not in `awaiting_deposit` (confirmed already, from a wallet, cancelled, failed); ' +
    '`payin_cannot_be_confirmed` for a pay-in or a fiat-to-fiat transaction (a pay-in to partners; funded by its fiat ' +
    'deposit).\n\n**Checked on chain** where the chain’s node is configured (ethereum: `ETHEREUM_RPC_URL`; the sandbox ' +
    'runs its own node with its USDC and USDT): `tx_hash` must be a transfer of the payout’s stablecoin contract to ' +
    'the payout’s deposit address (`sender_deposit_instructions`) for at least its amount, in enough blocks; each ' +
    'other case answers 422 with its own code (`tx_hash_not_found`, `tx_hash_failed`, `tx_hash_wrong_token`, ' +
    '`tx_hash_wrong_recipient`, `tx_hash_amount_too_low`), and a hash counts for one payout only ' +
    '(`tx_hash_already_used`). A node that cannot be reached answers 503.\n\n**Accepted, then settled.** A hash the ' +
    'node knows but that is not in enough blocks yet (the chain’s confirmations) is accepted: 200 with the payout still ' +
    '`awaiting_deposit`. The service’s chain watcher settles it once deep enough (the payout moves to `processing`, ' +
    'payout.processing), checked exactly as above (a mined transfer of the wrong coin is refused then). A hash not ' +
    'deep enough within `PAYOUT_TX_HASH_WAIT_MINUTES` (60 by default) is refused; from then on a confirm with it ' +
    'answers its refusal code (`tx_hash_confirmation_timeout`, or the code of what the chain shows), and the payout ' +
    'awaits another hash until its deadline. A payout waits on one hash at a time (another answers ' +
    '`payout_cannot_be_confirmed`); confirming the same hash again is harmless. ' +
    'Where the chain is not checked: the sandbox takes a well-formed hash as enough (exactly the amount sent for); ' +
    'production answers 503 and the payout keeps waiting.',
  body: confirmPayoutRequestSchema,
  response: {
    status: 200,
    description: 'The payout: `processing`, or still `awaiting_deposit` while its accepted hash is not deep enough.',
    schema: transactionSchema,
  },
  errors: [
    'not_found',
    'payout_cannot_be_confirmed',
    'payin_cannot_be_confirmed',
    'tx_hash_chain_mismatch',
    'tx_hash_not_found',
    'tx_hash_confirmation_timeout',
    'tx_hash_failed',
    'tx_hash_wrong_token',
    'tx_hash_wrong_recipient',
    'tx_hash_amount_too_low',
    'tx_hash_already_used',
    'service_unavailable',
  ],
  async handler({ body, partner, services }) {
    return confirmPayout(services, partner.id, body);
  },
});

const getTransaction = defineRoute({
  method: 'get',
  path: '/v1/transactions/{id}',
  operationId: 'getTransaction',
  tag,
  summary: 'Get a transaction',
  description: lifecycle,
  params: idParam('id', 'Transaction id.'),
  response: { status: 200, description: 'The transaction.', schema: transactionSchema },
  errors: ['not_found'],
  async handler({ params, partner, services }) {
    return toTransaction(await findTransactionOrThrow(services.prisma, partner.id, params.id as string));
  },
});

const updateTransaction = defineRoute({
  method: 'put',
  path: '/v1/transactions/{id}',
  operationId: 'cancelTransaction',
  tag,
  summary: 'Cancel a transaction',
  description:
    'Body `{"status": "cancelled"}`. Only a transaction in `awaiting_deposit` can be cancelled (otherwise 422 ' +
    '`payin_cannot_be_cancelled` for fiat to fiat and pay-ins, `payout_cannot_be_cancelled` for payouts, naming its ' +
    'status); answers 200 with the cancelled transaction (event payin.cancelled or payout.cancelled). A cancellation ' +
    'and a deposit (or a payout confirmation) arriving together have exactly one outcome: whichever the ' +
    'transaction’s workflow takes first; the other is refused (a deposit is then returned to the sender).',
  params: idParam('id', 'Transaction id.'),
  body: updateTransactionRequestSchema,
  response: { status: 200, description: 'The cancelled transaction.', schema: transactionSchema },
  errors: ['not_found', 'payin_cannot_be_cancelled', 'payout_cannot_be_cancelled', 'service_unavailable'],
  async handler({ params, partner, services }) {
    return cancelTransaction(services, partner.id, params.id as string);
  },
});

const listTransactionsRoute = defineRoute({
  method: 'get',
  path: '/v1/transactions',
  operationId: 'listTransactions',
  tag,
  summary: 'List transactions',
  description:
    'Every type (fiat_to_fiat, payin, payout), newest first; filters `customer_id` (404 if the customer is not yours), ' +
    '`type`, `status`, `start_date`, `end_date`.',
  query: listTransactionsQuerySchema,
  response: {
    status: 200,
    description: 'A page of transactions.',
    schema: listSchema(transactionSchema, 'TransactionList'),
  },
  errors: ['not_found'],
  async handler({ query, partner, services }) {
    const { rows, cursor } = await listTransactions(services.prisma, partner.id, query, {
      customerId: query.customer_id,
      type: query.type,
      status: query.status,
    });
    return { items: rows.map(toTransaction), cursor };
  },
});

const simulateDeposit = defineRoute({
  method: 'post',
  path: '/v1/sandbox/transactions/{id}/deposit',
  operationId: 'simulateTransactionDeposit',
  tag,
  environments: ['sandbox'],
  summary: 'Simulate the sender’s deposit (sandbox)',
  description:
    'As if the sender’s bank credited `amount` (in the sender currency; for a payout awaiting its stablecoin, the ' +
    'stablecoin, like POST /v1/payout/confirm) with the transaction’s reference. Answers 201 ' +
    'with the deposit: `accepted` (it funds the transaction, now `processing`; settlement then runs by itself), or ' +
    '`returning` (not the expected amount: the transaction is refunded; or the transaction no longer awaits a deposit: ' +
    'it is sent back and the transaction does not change). `simulate` makes this transaction meet a failure later: ' +
    '`payout_rejected` (ends `refunded`), `conversion_error` or `payout_error` (ends in `error`, waiting for an ' +
    'operator; a retry then succeeds), `payout_timeout_after_execution` and `payout_outcome_unknown` (the payout is ' +
    'made and its answer lost: the rail is asked again by the payout’s idempotency key and the transaction never ' +
    'pays twice; see SandboxDepositRequest), `return_error` (a return of this deposit keeps failing: the refund ends ' +
    'in `error`, a late deposit in `return_failed`; an operator retries). A deposit arriving when none is awaited is ' +
    'on the books (held) from that moment until its return. `provider_reference` is the bank’s own id of the credit: ' +
    'the same credit reported again answers the deposit it made the first time and moves nothing (a bank may report ' +
    'a credit twice). Production receives deposits from the banks, with the same effect.',
  params: idParam('id', 'Transaction id.'),
  body: sandboxDepositRequestSchema,
  response: { status: 201, description: 'The deposit and what became of it.', schema: depositSchema },
  errors: [
    'not_found',
    'amount_too_precise',
    'deposit_reference_mismatch',
    'provider_reference_in_use',
    'service_unavailable',
  ],
  async handler({ params, body, partner, services }) {
    return receiveSandboxDeposit(services, partner.id, params.id as string, body);
  },
});

const simulatePayoutReturn = defineRoute({
  method: 'post',
  path: '/v1/sandbox/transactions/{id}/payout-return',
  operationId: 'simulatePayoutReturn',
  tag,
  environments: ['sandbox'],
  summary: 'Simulate the receiving bank returning a completed payout (sandbox)',
  description:
    'As if the receiving bank sent back the payout of a completed fiat-to-fiat transaction or payout (a SEPA or ACH ' +
    'return, days after it was paid): `amount` (in the receiver currency, at most what was paid out; less when the ' +
    'banks kept charges) came back for `reason_code`. Answers 201 with the return; the transaction is `returned` ' +
    '(failure_reason `payout_returned`; event payin.returned for fiat to fiat, payout.returned for payouts) and the ' +
    'money waits with the service while its operations team decides: paid out again (`completed` again, event ' +
    '.completed) or, for a payout from a wallet, converted back into the stablecoin at the rate of the moment and ' +
    'credited to the wallet (`refunded`, event .refunded).\n\n' +
    'A return is recorded once per `return_reference`: the same reference and amount again answer 201 with the ' +
    'return recorded first (nothing is done twice); with another transaction or amount, 422 ' +
    '`payout_return_reference_conflict`. Refused: a pay-in (`payin_cannot_be_returned`), a transaction that is not ' +
    '`completed` or was returned before (`payout_return_not_allowed`, naming its status), more than was paid out ' +
    '(`return_amount_exceeds_payout`). Production receives returns from the payout rail, with the same effect.',
  params: idParam('id', 'Transaction id.'),
  body: sandboxPayoutReturnRequestSchema,
  response: { status: 201, description: 'The return, as recorded.', schema: payoutReturnSchema },
  errors: [
    'not_found',
    'amount_too_precise',
    'payin_cannot_be_returned',
    'payout_return_not_allowed',
    'return_amount_exceeds_payout',
    'payout_return_reference_conflict',
    'service_unavailable',
  ],
  async handler({ params, body, partner, services }) {
    return receiveSandboxPayoutReturn(services, partner.id, params.id as string, body);
  },
});

const simulateVirtualAccountDeposit = defineRoute({
  method: 'post',
  path: '/v1/sandbox/virtual-accounts/{id}/deposit',
  operationId: 'simulateVirtualAccountDeposit',
  tag: paymentsTag,
  environments: ['sandbox'],
  summary: 'Simulate a deposit on a virtual account (sandbox)',
  description:
    'As if `amount` (in the account’s currency; EUR by SEPA, USD by ACH) arrived on the virtual account’s deposit ' +
    'details from `sender_name`. Answers 201 with the pay-in it makes: a transaction of type `payin` with no quote, ' +
    'created `processing` (event payin.created; `sender.virtual_account_id` names the account), converted at the ' +
    'current rate with the fees a quote would charge (the service fee and one network fee, in the account currency; no ' +
    'partner fee), then `completed` with the stablecoin credited to the account’s wallet (payin.completed).\n\n' +
    '**Refunded instead** (the deposit is recorded and returned in full; `refunded`, payin.refunded): the account is ' +
    'not approved (under review, rejected, cancelled: failure_reason `virtual_account_not_active`), or it is a EUR ' +
    'account without `accepts_third_party_payments` and the sender is not the customer (`third_party_sender`). Name ' +
    'rule: the sender’s name must be the customer’s full name (first and last name; a business’s legal name), ' +
    'compared ignoring case, accents, punctuation and spacing, every word in order ("jose da silva-neto" matches ' +
    '"José da Silva Neto"; "J. Silva" does not). An amount outside the allowed range, or not covering the fees, is ' +
    'refused (422 `amount_out_of_range`) and nothing is created. Production receives these credits from the bank ' +
    'through the same deposit-provider interface as transaction deposits, with the same effect. The same credit ' +
    'reported again (the same `provider_reference`) answers the pay-in it made the first time; nothing is credited twice.',
  params: idParam('id', 'Virtual account id.'),
  body: sandboxVirtualAccountDepositRequestSchema,
  response: { status: 201, description: 'The pay-in the deposit made.', schema: transactionSchema },
  errors: ['not_found', 'amount_out_of_range', 'provider_reference_in_use', 'service_unavailable'],
  async handler({ params, body, partner, services }) {
    return receiveSandboxVirtualAccountDeposit(services, partner.id, params.id as string, body);
  },
});

export const transactionRoutes = [
  createFiatToFiatRoute,
  createPayinRoute,
  createPayoutRoute,
  confirmPayoutRoute,
  simulateVirtualAccountDeposit,
  listTransactionsRoute,
  getTransaction,
  updateTransaction,
  simulateDeposit,
  simulatePayoutReturn,
];
