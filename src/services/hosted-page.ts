// What the hosted verification page needs of a customer: its documents and steps, its partner's brand and how
// many uploads the page has taken. Read here so the route stays free of queries.
import { countHostedUploads, CustomerRow, readCustomerWithReviewInputs } from '../persistence/customers';
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
