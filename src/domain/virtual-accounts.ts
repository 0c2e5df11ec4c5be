// A virtual account's statuses (the schema's enum is cross-checked against them, src/persistence/enums.ts).
export const virtualAccountStatuses = ['under_review', 'approved', 'rejected', 'cancelled'] as const;
export type VirtualAccountStatus = (typeof virtualAccountStatuses)[number];
