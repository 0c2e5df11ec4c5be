// OpenAPI `links` from each create operation's response to the operations that take the new resource's id: in the
// path (read, update, sub-resources, sandbox controls) or as a list filter (`customer_id=`), so that generated
// clients and stateful testers can chain a create to what follows it.

/** The collection (path segment before `{id}`) of the resource each create operation makes. */
const createdResource: Record<string, { segment: string; idField: string }> = {
  createCustomer: { segment: 'customers', idField: 'customer_id' },
  createExternalAccount: { segment: 'external-accounts', idField: 'external_account_id' },
  createWallet: { segment: 'wallets', idField: 'wallet_id' },
  createWalletTransfer: { segment: 'wallet-transfers', idField: 'wallet_transfer_id' },
  createVirtualAccount: { segment: 'virtual-accounts', idField: 'virtual_account_id' },
  createQuote: { segment: 'quotes', idField: 'quote_id' },
  createFiatToFiatQuote: { segment: 'quotes', idField: 'quote_id' },
  createFiatToFiat: { segment: 'transactions', idField: 'transaction_id' },
  createPayin: { segment: 'transactions', idField: 'transaction_id' },
  createPayout: { segment: 'transactions', idField: 'transaction_id' },
  createWebhookConfig: { segment: 'webhook-configs', idField: 'webhook_config_id' },
};

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, Json>;
}

const linkName = (operationId: string) => operationId.charAt(0).toUpperCase() + operationId.slice(1);

export function addOperationLinks(document: { paths?: Record<string, unknown> }): void {
  const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.values(item as Record<string, Operation>).map((operation) => ({ path, operation })),
  );
  for (const { operation: create } of operations) {
    const resource = createdResource[create.operationId ?? ''];
    const created = create.responses['201'];
    if (!resource || !created) continue;
    const links: Record<string, Json> = {};
    for (const { path, operation } of operations) {
      const segments = path.split('/');
      const pathParam = (operation.parameters ?? []).find(
        (parameter) =>
          parameter.in === 'path' && segments[segments.indexOf(`{${parameter.name}}`) - 1] === resource.segment,
      );
      const queryParam = (operation.parameters ?? []).find(
        (parameter) => parameter.in === 'query' && parameter.name === resource.idField,
      );
      const parameter = pathParam ?? queryParam;
      if (!parameter || !operation.operationId) continue;
      links[linkName(operation.operationId)] = {
        operationId: operation.operationId,
        parameters: { [`${parameter.in}.${parameter.name}`]: '$response.body#/id' },
        description: `The created resource's \`id\` as \`${parameter.name}\` of ${operation.operationId}.`,
      };
    }
    if (Object.keys(links).length > 0) created.links = links;
  }
}
