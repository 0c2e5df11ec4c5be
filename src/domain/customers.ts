// A customer's kinds and statuses (the schema's enums are cross-checked against them, src/persistence/enums.ts).
export const customerTypes = ['individual', 'business'] as const;
export const customerStatuses = ['pending', 'under_review', 'approved', 'partially_rejected', 'rejected'] as const;
export type CustomerType = (typeof customerTypes)[number];
export type CustomerStatus = (typeof customerStatuses)[number];
