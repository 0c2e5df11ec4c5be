// What the hosted verification page needs of a customer: the customer of its link, its documents and steps, its
// partner's brand and how many uploads the page has taken. Read here so the route stays free of queries.
import {
  countHostedUploads,
  CustomerRow,
  findCustomerByTokenHash,
  readCustomerLinkState,
  readCustomerWithReviewInputs,
} from '../persistence/customers';
import { DomainError } from '../domain/errors';
import { hashVerificationToken, isWellFormedToken, verificationToken } from '../domain/verification-links';
import type { HostedPageInput } from '../domain/hosted-page';
import type { ApiServices } from '../app-services';
import { pageBrandOf } from './branding';

export interface HostedPageData {
  input: HostedPageInput;
  brand: { displayName: string | null; hasLogo: boolean; hasAccent: boolean };
  uploadsLeft: boolean;
}

export async function hostedPageDataOf(services: ApiServices, customer: CustomerRow): Promise<HostedPageData> {
  const full = await readCustomerWithReviewInputs(services.prisma, customer.id);
  const uploads = await countHostedUploads(services.prisma, customer.id);
  return {
    input: {
      type: full.type,
      status: full.status,
      beneficiaries: full.beneficiaries.map((b) => ({
        id: b.id,
        name: `${b.firstName} ${b.lastName}`,
        shareSize: b.shareSize.toString(),
      })),
      documents: full.documents,
      steps: full.verificationSteps,
    },
    brand: await pageBrandOf(services.prisma, customer.partnerId),
    uploadsLeft: uploads < services.config.hostedUploadsPerCustomer,
  };
}

/** The customer of a valid link; not_found for unknown, replaced and expired links alike. */
export async function customerByToken(services: ApiServices, token: string): Promise<CustomerRow> {
  const customer = isWellFormedToken(token)
    ? await findCustomerByTokenHash(services.prisma, hashVerificationToken(token))
    : null;
  if (!customer || customer.verificationLinkExpiresAt.getTime() <= Date.now()) {
    throw new DomainError(
      'not_found',
      'No such verification link: it may have expired or been replaced. Ask for a new link.',
    );
  }
  return customer;
}

/** True while the customer has uploaded fewer documents through the page than HOSTED_UPLOADS_PER_CUSTOMER. */
export async function hostedUploadsLeft(services: ApiServices, customerId: string): Promise<boolean> {
  return (await countHostedUploads(services.prisma, customerId)) < services.config.hostedUploadsPerCustomer;
}

/** The token of the customer's current link (every status change replaces it). */
export async function currentLinkToken(services: ApiServices, customerId: string): Promise<string> {
  const current = await readCustomerLinkState(services.prisma, customerId);
  return verificationToken(services.config.secrets.encryptionKey, current.id, current.verificationLinkVersion);
}
