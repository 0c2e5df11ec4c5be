// The worker's list store, its refusals counted for the alert (ops/prometheus: PaymentsScreeningListLoadRefused).
import { screeningListLoadRefusals } from '../observability/metrics';
import { ListStore, type ListStoreOptions } from './store';

export function observedListStore(options: Partial<ListStoreOptions> = {}): ListStore {
  return new ListStore({
    ...options,
    onRefused: (refusal) => {
      screeningListLoadRefusals.inc({ source: refusal.source, reason: refusal.reason });
      options.onRefused?.(refusal);
    },
  });
}
