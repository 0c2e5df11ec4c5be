// Request and response schemas of transactions (SPEC 4.4, 2.10): fiat to fiat, pay-ins, payouts. Amounts are
// decimal strings; the amount's decimals are checked against the quote's currency by the service
// (the currency is only known once the quote is read).
import { z } from 'zod';
import { parseBrazilianTaxId } from '../domain/brazil';
import { allCurrencies } from '../domain/money';
import { allPaymentRails, blockchains, durationInProse, FiatRail, fiatRails } from '../domain/rails';
import {
  depositWindowMs,
  failureReasons,
  sandboxSimulations,
  transactionStatuses,
  transactionTypes,
} from '../domain/transactions';
import { paginationQuerySchema } from './pagination';
import {
  addressSchema,
  always,
  NON_BLANK_PATTERN,
  positiveAmountOf,
  positiveAmountSchema,
  text,
  timestampSchema,
} from './common';

const amountSchema = positiveAmountSchema;

export const senderDocumentTypes = ['cpf', 'cnpj', 'tax_id', 'national_id', 'passport'] as const;
export type SenderDocumentType = (typeof senderDocumentTypes)[number];

// 3-40 characters, tested on the trimmed number; stated as is, it also says that no space ends it.
const documentNumberPattern = /^[A-Za-z0-9][A-Za-z0-9 ./-]{1,38}[A-Za-z0-9./-]$/;

/** Per document type: cpf and cnpj by their check digits (formats), the others by their pattern. */
const senderDocumentBranches = (types: readonly SenderDocumentType[]) =>
  types.map((type) =>
    type === 'cpf' || type === 'cnpj'
      ? { properties: { type: { const: type }, number: { format: type } } }
      : { properties: { type: { const: type }, number: { pattern: documentNumberPattern.source } } },
  );

export const senderDocumentSchema = z
  .object({
    type: z.enum(senderDocumentTypes).meta({
      description:
        'cpf or cnpj (Brazil, check digits verified), or any country’s tax_id, national_id or passport number.',
    }),
    number: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .meta({
        description:
          'The document number. cpf/cnpj: bare or masked, returned bare. Others: 3-40 letters, digits, spaces, dots, ' +
          'slashes or hyphens, returned upper case.',
        example: '52998224725',
      }),
  })
  .strict()
  .superRefine((document, ctx) => {
    if (typeof document.number !== 'string') return;
    if (document.type === 'cpf' || document.type === 'cnpj') {
      const parsed = parseBrazilianTaxId(document.number);
      if (!parsed || parsed.type !== document.type) {
        ctx.addIssue({ code: 'custom', path: ['number'], message: `is not a valid ${document.type.toUpperCase()}` });
      }
    } else if (!documentNumberPattern.test(document.number)) {
      ctx.addIssue({
        code: 'custom',
        path: ['number'],
        message: 'must be 3-40 letters, digits, spaces, dots, slashes or hyphens',
      });
    }
  })
  .transform((document) => ({
    type: document.type,
    number:
      document.type === 'cpf' || document.type === 'cnpj'
        ? (parseBrazilianTaxId(document.number)?.value ?? document.number)
        : document.number.toUpperCase(),
  }))
  .meta({
    id: 'SenderDocument',
    description: 'A tax id or government-issued document of the sender.',
    oneOf: senderDocumentBranches(senderDocumentTypes),
  });

export const createFiatToFiatRequestSchema = z
  .object({
    quote_id: z.string().meta({ description: 'An active fiat-to-fiat quote of yours (POST /v1/quote/fiat-to-fiat).' }),
    customer_id: z.string().meta({ description: 'An approved customer of yours.' }),
    wallet_id: z.string().meta({
      description:
        'A service-managed wallet of that customer on the quote’s stablecoin chain: it carries the stablecoin between ' +
        'the two legs (held apart from its spendable balance).',
    }),
    sender: z
      .object({
        name: text(140).meta({ description: 'Who pays the fiat in: a person’s full name or a company’s legal name.' }),
        document: senderDocumentSchema,
        amount: amountSchema.optional().meta({
          description:
            'Only with a rate-only quote: what the sender pays, fees included (the receiver amount follows). ' +
            'Not together with receiver.amount.',
        }),
      })
      .strict(),
    receiver: z
      .object({
        external_account_id: z.string().meta({
          description: 'An approved external account of the customer on the quote’s receiver rail.',
        }),
        amount: amountSchema.optional().meta({
          description:
            'Only with a rate-only quote: what the receiver gets (the sender amount follows). Not together with sender.amount.',
        }),
      })
      .strict(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const raw = body as { sender?: { amount?: unknown }; receiver?: { amount?: unknown } };
    if (raw.sender?.amount !== undefined && raw.receiver?.amount !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['receiver', 'amount'],
        message: 'cannot be combined with sender.amount: give the amount on one side only',
      });
    }
  }, always)
  .meta({
    id: 'CreateFiatToFiatRequest',
    not: { properties: { sender: { required: ['amount'] }, receiver: { required: ['amount'] } } },
  });

export type CreateFiatToFiatRequest = z.output<typeof createFiatToFiatRequestSchema>;

export const createPayinRequestSchema = z
  .object({
    quote_id: z
      .string()
      .meta({ description: 'An active pay-in quote of yours (POST /v1/quote, fiat sender, stablecoin receiver).' }),
    customer_id: z.string().meta({ description: 'An approved customer of yours.' }),
    wallet_id: z.string().meta({
      description:
        'A service-managed wallet of that customer on the quote’s receiver chain: the stablecoin is credited to it.',
    }),
    sender: z
      .object({
        name: text(140).meta({ description: 'Who pays the fiat in: a person’s full name or a company’s legal name.' }),
        document: senderDocumentSchema,
        amount: amountSchema.optional().meta({
          description:
            'Only with a rate-only quote: what the sender pays, fees included (priced with the locked rate).',
        }),
      })
      .strict(),
  })
  .strict()
  .meta({ id: 'CreatePayinRequest' });

export type CreatePayinRequest = z.output<typeof createPayinRequestSchema>;

const pixPayoutDestinationSchema = z
  .object({
    key: z.string().trim().min(1).max(100).meta({
      description:
        'The receiver’s pix key (CPF, CNPJ, email, +55 phone or random key), looked up in the pix directory.',
      example: 'ana@example.com',
    }),
    document: senderDocumentSchema.meta({
      description: 'The receiver’s CPF or CNPJ (recorded with the payout).',
      oneOf: senderDocumentBranches(['cpf', 'cnpj']),
    }),
  })
  .strict()
  .superRefine((destination, ctx) => {
    const type = (destination as { document?: { type?: unknown } }).document?.type;
    if (typeof type === 'string' && type !== 'cpf' && type !== 'cnpj') {
      ctx.addIssue({ code: 'custom', path: ['document', 'type'], message: 'must be cpf or cnpj for a pix receiver' });
    }
  })
  .meta({ id: 'PixPayoutDestination' });

export const createPayoutRequestSchema = z
  .object({
    quote_id: z
      .string()
      .meta({ description: 'An active payout quote of yours (POST /v1/quote, stablecoin sender, fiat receiver).' }),
    customer_id: z.string().meta({ description: 'An approved customer of yours.' }),
    external_account_id: z
      .string()
      .optional()
      .meta({
        description:
          'An approved external account of the customer on the quote’s receiver rail. Required, except on the pix rail, ' +
          'where `pix` may be given instead (SPEC 4.2).',
      }),
    pix: pixPayoutDestinationSchema.optional().meta({
      description: 'pix rail only, instead of external_account_id: the receiver’s key and document.',
    }),
    wallet_id: z
      .string()
      .optional()
      .meta({
        description:
          'A service-managed wallet of the customer on the quote’s sender chain. Given: the stablecoin is debited from its ' +
          'balance at once (422 insufficient_funds when short) and the payout is `processing`. Left out: the payout waits ' +
          'in `awaiting_deposit` for the stablecoin per `sender_deposit_instructions` (POST /v1/payout/confirm once sent).',
      }),
    amount: amountSchema.optional().meta({
      description: 'Only with a rate-only quote: the stablecoin sent, fees included (priced with the locked rate).',
    }),
    simulate: z
      .enum(sandboxSimulations)
      .optional()
      .meta({
        description:
          'Sandbox only (refused in production), with wallet_id: a failure to simulate, as the sandbox deposit’s ' +
          '`simulate` (payout_rejected: refunded to the wallet; payout_error: `error` until an operator decides). Without ' +
          'a wallet, give it to POST /v1/payout/confirm.',
      }),
  })
  .strict()
  .superRefine((body, ctx) => {
    const raw = body as { external_account_id?: unknown; pix?: unknown };
    if (raw.external_account_id !== undefined && raw.pix !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['pix'], message: 'cannot be combined with external_account_id: give one' });
    }
    if (raw.external_account_id === undefined && raw.pix === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['external_account_id'],
        message: 'is required (or, on the pix rail, pix with the key and document)',
      });
    }
  }, always)
  .meta({
    id: 'CreatePayoutRequest',
    oneOf: [{ required: ['external_account_id'] }, { required: ['pix'] }],
    dependentRequired: { simulate: ['wallet_id'] },
  });

export type CreatePayoutRequest = z.output<typeof createPayoutRequestSchema>;

export const confirmPayoutRequestSchema = z
  .object({
    transaction_id: z.string().meta({ description: 'The payout awaiting its stablecoin.' }),
    tx_hash: z
      .string()
      .trim()
      .regex(
        /^(0x[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/,
        'must be an ethereum (0x + 64 hex) or solana (base58 signature) transaction hash',
      )
      .meta({ description: 'The on-chain transaction that sent the stablecoin.', example: `0x${'ab'.repeat(32)}` }),
    simulate: z.enum(sandboxSimulations).optional().meta({
      description: 'Sandbox only: a failure to simulate for this payout, as the sandbox deposit’s `simulate`.',
    }),
  })
  .strict()
  .meta({ id: 'ConfirmPayoutRequest' });

/** The bank's own id of a credit, on the sandbox deposit endpoints (one credit is one deposit). */
const providerReferenceSchema = text(140)
  .optional()
  .meta({
    description:
      'The bank’s own id of this credit (its end-to-end or transaction id), as a bank reports it. A credit reported ' +
      'again with the same provider_reference is recorded once: the answer is what the first report made, and ' +
      'nothing moves again (409 provider_reference_in_use if it named another transaction). Without it every ' +
      'request is a new credit (a retry with the same Idempotency-Key is the same one).',
    example: 'E2E20261126SANDBOX0001',
  });

export const sandboxVirtualAccountDepositRequestSchema = z
  .object({
    // Both virtual-account currencies (USD, EUR) have 2 decimal places.
    amount: positiveAmountOf(2).meta({
      description: 'What arrived, in the account’s currency (USD or EUR), at most 2 decimal places.',
      example: '250.00',
    }),
    sender_name: text(140).meta({
      description:
        'Name of the account holder who paid. On a EUR account without accepts_third_party_payments it must be the ' +
        'customer’s (case, accents, punctuation and spacing ignored), else the deposit is refunded.',
    }),
    reference: z
      .string()
      .trim()
      .max(140)
      .optional()
      .meta({ description: 'The payment reference it carried (recorded).' }),
    provider_reference: providerReferenceSchema,
  })
  .strict()
  .meta({ id: 'SandboxVirtualAccountDepositRequest' });

export const updateTransactionRequestSchema = z
  .object({
    status: z.literal('cancelled').meta({ description: 'The only change a partner can make: cancel.' }),
  })
  .strict()
  .meta({ id: 'UpdateTransactionRequest' });

export const listTransactionsQuerySchema = paginationQuerySchema
  .extend({
    customer_id: z
      .string()
      .optional()
      .meta({ description: "Only this customer's transactions; a customer that is not yours answers 404." }),
    type: z.enum(transactionTypes).optional().meta({ description: 'Only transactions of this type.' }),
    status: z.enum(transactionStatuses).optional().meta({ description: 'Only transactions in this status.' }),
  })
  .strict();

export const sandboxDepositRequestSchema = z
  .object({
    amount: amountSchema.meta({
      description:
        'What arrived, in the sender currency. Exactly the transaction’s sender amount settles; any other amount is ' +
        'returned to the sender in full and the transaction ends `refunded` (failure_reason deposit_amount_mismatch).',
      example: '1000.00',
    }),
    sender_name: text(140).optional().meta({ description: 'Name of the account holder who paid (recorded).' }),
    reference: z
      .string()
      .max(64)
      .optional()
      .meta({
        description:
          'The payment reference the deposit carried. Defaults to the transaction’s; if given it must be that reference ' +
          '(any case, spaces and hyphens allowed).',
      }),
    provider_reference: providerReferenceSchema,
    simulate: z
      .enum(sandboxSimulations)
      .optional()
      .meta({
        description:
          'A failure to simulate for this transaction: `payout_rejected` (the receiver’s bank refuses the payout; the ' +
          'money goes back, `refunded`), `conversion_error` or `payout_error` (that step keeps failing until its retries ' +
          'run out: `error`; an operator’s retry then succeeds), `payout_timeout_after_execution` (the payout is made but ' +
          'its answer is lost; asked again by its idempotency key the rail reports it made: `completed`, paid once), ' +
          '`payout_outcome_unknown` (the payout is made and the rail cannot say so for a while: the transaction stays ' +
          '`processing` while it is asked again, then `error`, where a refund is refused because the receiver may be ' +
          'paid; an operator’s retry asks again and it completes). A refund after the conversion sells the stablecoin ' +
          'back at the exchange’s rate of the moment (the sandbox: 0.5% below the locked rate); the sender gets the ' +
          'deposit back in full. `return_error`: a return of this deposit (a refund, or a late deposit sent back) ' +
          'keeps failing until its retries run out: a refund goes to `error`, a late deposit to `return_failed`; an ' +
          'operator’s retry then succeeds (a pix deposit through the bank simulator: its devolucao is refused, ' +
          'NAO_REALIZADO). Where the sandbox runs the bank simulator (API Pix, a liquidity provider): ' +
          '`pix_notified_twice` and `pix_late_notification` (the payment is made at the bank and recorded at once; the ' +
          'bank’s webhook notifies it twice, or about 20 s later: the same deposit, recorded once), `fx_price_jump` (the ' +
          'provider’s firm price for the first conversion leg jumps beyond the band: nothing is executed, the ' +
          'transaction ends in `error`; an operator’s retry executes at the market). `screening_review`: the receiver ' +
          'is screened as a potential sanctions-list match whatever its name: the payout is held before it leaves ' +
          '(status `processing`, event `payout.held` or `payin.held`) until an operator clears it (it completes) or ' +
          'confirms the match (`refunded`, failure_reason `receiver_sanctions_match`). ' +
          'Where the sandbox runs the ISO ' +
          '20022 bank simulator, a SEPA or wire deposit without `provider_reference` is credited at the bank and ' +
          'recorded at once by the bank’s entry reference; its camt.054 notification follows (the same deposit): ' +
          '`iso_credit_notified_twice` (the bank notifies the credit twice: recorded once), `iso_payout_returned` ' +
          '(the SEPA or wire payout is returned by the bank, reason AC04, seconds after the transaction completed: ' +
          '`returned`, event payin.returned).',
      }),
  })
  .strict()
  .meta({ id: 'SandboxDepositRequest' });

// ---- responses ----

const money = (description: string) =>
  z.object({ amount: z.string(), currency: z.enum(allCurrencies) }).meta({ description });

const feesSchema = z
  .object({
    service_fee: money('The service fee, as the quote locked it.'),
    partner_fee: money('Your fee, as the quote locked it; owed to you.'),
    network_fee: money('One on-chain transfer of the stablecoin, bought at the locked rate.'),
    total: money('The sum of the three; deducted from the sender amount before conversion.'),
  })
  .meta({ id: 'TransactionFees', description: 'Every fee is in the sender currency.' });

const beneficiary = { beneficiary_name: z.string() };
const usBank = {
  bank_account_number: z.string(),
  routing_number: z.string(),
  bank_name: z.string(),
  bank_address: addressSchema,
  ...beneficiary,
};
const deadlineDescription = Object.entries(depositWindowMs)
  .map(([rail, ms]) => `${rail} ${durationInProse(ms)}`)
  .join(', ');

/** Each fiat rail's object in the instructions (its fields are the definition's instructionFields). */
export const railInstructionSchemas = {
  pix: z.object({
    key: z.string(),
    key_type: z.literal('cnpj'),
    bank_name: z.string(),
    copy_paste_code: z.string().meta({ description: 'Pix "copia e cola" (BR Code) with amount and reference.' }),
    ...beneficiary,
  }),
  pix_account: z.object({
    bank_code: z.string(),
    branch_code: z.string(),
    bank_account_number: z.string(),
    account_type: z.literal('checking'),
    beneficiary_document: z.string(),
    bank_name: z.string(),
    ...beneficiary,
  }),
  spei: z.object({ clabe: z.string(), bank_name: z.string(), ...beneficiary }),
  wire: z.object(usBank),
  ach: z.object(usBank),
  sepa: z.object({ iban: z.string(), bic: z.string(), bank_name: z.string(), ...beneficiary }),
  cvu: z.object({ cvu: z.string(), bank_name: z.string(), ...beneficiary }),
} satisfies Record<FiatRail, z.ZodObject>;

const optionalRailInstructions = Object.fromEntries(
  fiatRails.map((rail) => [rail, railInstructionSchemas[rail].optional()]),
) as { [R in FiatRail]: z.ZodOptional<(typeof railInstructionSchemas)[R]> };

export const senderDepositInstructionsSchema = z
  .object({
    payment_rail: z.enum(allPaymentRails),
    currency: z.enum(allCurrencies),
    amount: z.string().meta({ description: 'Exactly what to send; any other amount is returned.' }),
    reference: z.string().meta({
      description:
        'Unique to this transaction: put it in the payment reference (pix: it is the txid inside copy_paste_code; ' +
        'SPEI concepto, SEPA remittance information, wire/ACH memo). It is how the deposit is matched. A payout’s ' +
        'stablecoin is matched by POST /v1/payout/confirm instead.',
      example: 'TX7K2M9QH4RD',
    }),
    deadline: timestampSchema.meta({ description: `Pay before this; by sender rail: ${deadlineDescription}.` }),
    ...optionalRailInstructions,
    ethereum: z
      .object({ address: z.string().meta({ description: 'Send the stablecoin to this address, on this chain.' }) })
      .optional(),
    solana: z
      .object({ address: z.string().meta({ description: 'Send the stablecoin to this address, on this chain.' }) })
      .optional(),
  })
  .meta({
    id: 'SenderDepositInstructions',
    description:
      'Where the sender pays: the object named by payment_rail is present, the others are absent. A payout without a ' +
      'wallet is paid in on its blockchain (`ethereum` or `solana`: the address).',
  });

const bankReceiverSchema = z
  .object({
    external_account_id: z.uuid().nullable().meta({
      description: 'The external account paid; null for a payout to a pix key given in the request.',
    }),
    currency: z.enum(allCurrencies),
    payment_rail: z.enum(fiatRails),
    amount: z.string().meta({ description: 'What the receiver gets.' }),
    account_name: z.string(),
    beneficiary_name: z.string(),
    bank_name: z.string().nullable(),
    account_last4: z.string().meta({
      description: 'Last 4 characters of the account identifier (pix key, CLABE, account number, IBAN, CVU/CBU).',
    }),
  })
  .meta({ id: 'TransactionReceiver', description: 'fiat_to_fiat and payout: the bank account paid.' });

const walletReceiverSchema = z
  .object({
    wallet_id: z.uuid(),
    address: z.string(),
    currency: z.enum(allCurrencies),
    payment_rail: z.enum(blockchains),
    amount: z.string().meta({ description: 'The stablecoin credited to the wallet.' }),
  })
  .meta({ id: 'TransactionWalletReceiver', description: 'payin: the wallet credited.' });

export const transactionSchema = z
  .object({
    id: z.uuid(),
    type: z.enum(transactionTypes).meta({
      description:
        'fiat_to_fiat (fiat in, fiat out), payin (fiat in, the stablecoin credited to a wallet), payout (the stablecoin ' +
        'out as fiat to a bank account).',
    }),
    status: z.enum(transactionStatuses).meta({
      description:
        'awaiting_deposit -> processing -> completed; awaiting_deposit -> cancelled (PUT) or failed (deadline passed); ' +
        'processing -> refunded (payout rejected or wrong amount: money returned) or error (a step kept failing; an ' +
        'operator retries, back to processing, or refunds). Never backwards, except completed -> returned (fiat_to_fiat ' +
        'and payout: the receiving bank sent the payout back), which ends completed again (paid out once more) or ' +
        'refunded. A payout from a wallet and a virtual-account pay-in start in processing. A payout whose receiver is a ' +
        'potential sanctions-list match is held before it leaves: the status stays processing (the contract has no held ' +
        'status), the event payout.held (payin.held for fiat_to_fiat) announces it, and an operator’s review releases it ' +
        '(it goes on to completed) or confirms the match (refunded, failure_reason receiver_sanctions_match).',
    }),
    customer_id: z.uuid(),
    wallet_id: z
      .uuid()
      .nullable()
      .meta({
        description:
          'fiat_to_fiat: the wallet carrying the stablecoin between the legs; payin: the wallet credited; payout: the ' +
          'wallet debited, or null when the stablecoin is sent in.',
      }),
    quote_id: z
      .uuid()
      .nullable()
      .meta({ description: 'The quote used; null for a pay-in from a virtual-account deposit.' }),
    sender: z
      .object({
        name: z.string().nullable().optional().meta({ description: 'Who paid the fiat in (fiat_to_fiat, payin).' }),
        document: z
          .object({ type: z.enum(senderDocumentTypes), number: z.string() })
          .nullable()
          .optional()
          .meta({ description: 'Their document (fiat_to_fiat, payin; null for a virtual-account deposit).' }),
        virtual_account_id: z.uuid().optional().meta({
          description: 'payin from a deposit on a virtual account: that account.',
        }),
        wallet_id: z.uuid().nullable().optional().meta({
          description: 'payout: the wallet debited, or null when the stablecoin is sent in.',
        }),
        currency: z.enum(allCurrencies),
        payment_rail: z.enum(allPaymentRails),
        amount: z.string().meta({ description: 'What the sender pays, fees included.' }),
      })
      .meta({ id: 'TransactionSender' }),
    stablecoin: z
      .object({
        currency: z.enum(allCurrencies),
        payment_rail: z.enum(blockchains),
        amount: z.string().meta({
          description:
            'fiat_to_fiat: the stablecoin the converted amount buys; payin: the stablecoin credited; payout: the stablecoin ' +
            'sold for the receiver’s fiat (sent minus fees).',
        }),
      })
      .meta({ id: 'TransactionStablecoin' }),
    receiver: z.union([bankReceiverSchema, walletReceiverSchema]),
    sender_quotation: z.string().nullable().meta({
      description: 'Locked rate: stablecoin per sender unit (8 decimals); null for payouts.',
    }),
    receiver_quotation: z.string().nullable().meta({
      description: 'Locked rate: receiver currency per stablecoin (8 decimals); null for pay-ins.',
    }),
    fees: feesSchema,
    sender_deposit_instructions: senderDepositInstructionsSchema.nullable().meta({
      description: 'null when no deposit is awaited: a payout from a wallet, a virtual-account pay-in.',
    }),
    deposit_deadline: timestampSchema.nullable().meta({
      description: `Deposits after it are returned; by sender rail: ${deadlineDescription}. null when no deposit is awaited.`,
    }),
    failure_reason: z
      .enum(failureReasons)
      .nullable()
      .meta({
        description:
          'Why it did not complete: deposit_deadline_passed (failed), deposit_amount_mismatch or payout_rejected ' +
          '(refunded), conversion_failed, payout_failed or refund_failed (error), refunded_by_operator (refunded), ' +
          'third_party_sender or virtual_account_not_active (a virtual-account deposit returned: refunded), ' +
          'payout_returned (the receiving bank returned the payout: returned, then refunded if it was not paid again), ' +
          'receiver_sanctions_match (the payout was held for a sanctions review and an operator confirmed the match: ' +
          'refunded, the payout never left).',
      }),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'Transaction' });

export type TransactionResource = z.input<typeof transactionSchema>;

export const depositSchema = z
  .object({
    id: z.uuid(),
    transaction_id: z.uuid(),
    amount: z.string(),
    currency: z.enum(allCurrencies),
    sender_name: z.string().nullable(),
    reference: z.string().nullable(),
    provider_reference: z.string().meta({
      description:
        'The reporting bank’s own id of the credit: one credit is one deposit, however often it is reported.',
    }),
    status: z.enum(['accepted', 'returning', 'returned', 'return_failed']).meta({
      description:
        'accepted: it funds the transaction. returning -> returned: it goes back to the sender in full. ' +
        'return_failed: the return kept failing; the money is held (on the ledger since it arrived) until an ' +
        'operator retries it (-> returning).',
    }),
    return_reason: z
      .enum(['amount_mismatch', 'not_awaiting_deposit', 'third_party_sender', 'virtual_account_not_active'])
      .nullable()
      .meta({
        description:
          'amount_mismatch: not the expected amount (the transaction ends refunded). not_awaiting_deposit: the ' +
          'transaction was cancelled, past its deadline or already funded (its status does not change). ' +
          'third_party_sender, virtual_account_not_active: a virtual-account deposit refused (the pay-in ends refunded).',
      }),
    received_at: timestampSchema,
  })
  .meta({ id: 'Deposit' });

export type DepositResource = z.input<typeof depositSchema>;
