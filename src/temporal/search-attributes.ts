// Search attributes that let operators find a workflow in the Temporal UI by what it is about,
// e.g. `CustomerId = "..."` or `ResourceStatus = "under_review"`. Deterministic module: workflows import it.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const PartnerIdAttribute = defineSearchAttributeKey('PartnerId', SearchAttributeType.KEYWORD);
export const CustomerIdAttribute = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
export const ResourceIdAttribute = defineSearchAttributeKey('ResourceId', SearchAttributeType.KEYWORD);
export const ResourceStatusAttribute = defineSearchAttributeKey('ResourceStatus', SearchAttributeType.KEYWORD);

export const customSearchAttributes = [
  PartnerIdAttribute,
  CustomerIdAttribute,
  ResourceIdAttribute,
  ResourceStatusAttribute,
];
