// The schema's status and type enums hold the values of src/domain (and of src/schemas, for the API's own enums): a value added on one side only fails the typecheck
// here, so rows carry the domain's types without casts.
import type { $Enums } from './generated/prisma/client';
import type { ExternalAccountStatus } from '../domain/external-accounts';
import type { QuoteStatus, QuoteType } from '../domain/quotes';
import type { DepositStatus, LegKind, LegStatus, TransactionStatus, TransactionType } from '../domain/transactions';
import type { WebhookDeliveryTrigger } from '../domain/webhook-retry';
import type { CustomerStatus, CustomerType } from '../domain/customers';
import type { VirtualAccountStatus } from '../domain/virtual-accounts';
import type { DeliveryStatus } from '../domain/webhook-retry';
import type { WalletTransferStatus } from '../domain/wallet-transfers';
import type { ChainDepositStatus, PayoutChainClaimStatus } from '../domain/chains';
import type { Currency } from '../domain/money';
import type { Blockchain, PaymentRail } from '../domain/rails';
import type { DepositRail } from '../providers/deposit-accounts';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Agree<Check extends true> = Check;

export type SchemaEnumsAgreeWithDomain = [
  Agree<Same<$Enums.Currency, Currency>>,
  Agree<Same<$Enums.PaymentRail, PaymentRail>>,
  Agree<Same<$Enums.Blockchain, Blockchain>>,
  Agree<Same<$Enums.DepositRail, DepositRail>>,
  Agree<Same<$Enums.TransactionType, TransactionType>>,
  Agree<Same<$Enums.TransactionStatus, TransactionStatus>>,
  Agree<Same<$Enums.QuoteType, QuoteType>>,
  Agree<Same<$Enums.QuoteStatus, QuoteStatus>>,
  Agree<Same<$Enums.WalletTransferStatus, WalletTransferStatus>>,
  Agree<Same<$Enums.ExternalAccountStatus, ExternalAccountStatus>>,
  Agree<Same<$Enums.CustomerType, CustomerType>>,
  Agree<Same<$Enums.CustomerStatus, CustomerStatus>>,
  Agree<Same<$Enums.VerificationStepState, CustomerStatus>>,
  Agree<Same<$Enums.VirtualAccountStatus, VirtualAccountStatus>>,
  Agree<Same<$Enums.WebhookDeliveryStatus, DeliveryStatus>>,
  Agree<Same<$Enums.TransactionLegKind, LegKind>>,
  Agree<Same<$Enums.TransactionLegStatus, LegStatus>>,
  Agree<Same<$Enums.TransactionDepositStatus, DepositStatus>>,
  Agree<Same<$Enums.WebhookDeliveryTrigger, WebhookDeliveryTrigger>>,
  Agree<Same<$Enums.ChainDepositStatus, ChainDepositStatus>>,
  Agree<Same<$Enums.PayoutChainClaimStatus, PayoutChainClaimStatus>>,
];
