// W3C trace context kept with work that runs later in another process (a webhook delivery), so that work joins the
// trace of the change that caused it. Without tracing no propagator is registered: nothing is kept, nothing is made.
import { type Attributes, context, propagation, SpanKind, trace } from '@opentelemetry/api';

/** The `traceparent` of the code running now, or null when tracing is off. */
export function currentTraceParent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * Runs `work` in a span of the trace `traceParent` names (kept when the work was queued), linked to the span running
 * now (the activity that does the work). Without a kept trace, `work` runs in the current one.
 */
export function inKeptTrace<T>(
  traceParent: string | null,
  spanName: string,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!traceParent) return work();
  const kept = propagation.extract(context.active(), { traceparent: traceParent });
  const current = trace.getActiveSpan()?.spanContext();
  return trace
    .getTracer('payments')
    .startActiveSpan(
      spanName,
      { kind: SpanKind.INTERNAL, attributes, links: current ? [{ context: current }] : [] },
      kept,
      async (span) => {
        try {
          return await work();
        } finally {
          span.end();
        }
      },
    );
}
