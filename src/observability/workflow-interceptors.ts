// The workflow interceptors bundled with our workflow code (scripts/bundle-workflows.ts). Runs in the workflow
// sandbox: deterministic code only.
//
// A workflow is traced when it was started with sampled trace context (a client with tracing on puts the context in
// the start's headers, sampled or not); any other workflow, and every workflow that ran before tracing existed, passes
// through untouched and pays nothing: the OpenTelemetry modules (workflow-tracing.ts) are loaded only in a traced run
// (module state is per run in the sandbox), and its activities and children get no trace context, so they make no
// spans either.
import type {
  ActivityInput,
  ContinueAsNewInput,
  DisposeInput,
  GetLogAttributesInput,
  GetMetricTagsInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { defaultPayloadConverter, type Payload } from '@temporalio/workflow';
import type * as WorkflowTracing from './workflow-tracing';

let tracingModule: typeof WorkflowTracing | undefined;
const tracingOf = (): typeof WorkflowTracing =>
  (tracingModule ??= require('./workflow-tracing') as typeof WorkflowTracing);

/** Whether this run was started with sampled trace context. */
let traced = false;
/**
 * The trace context of a run started in a trace that is not sampled, handed on as it came to its activities and
 * children: they stay out of the trace (a new root span would be sampled afresh), with no OpenTelemetry module loaded.
 */
let unsampledContext: Record<string, Payload> = {};

/** The start's headers that carry W3C trace context, and whether that trace is sampled (flags `01`). */
function traceContextOf(headers: Record<string, Payload>): { headers: Record<string, Payload>; sampled: boolean } {
  const found = { headers: {} as Record<string, Payload>, sampled: false };
  for (const [name, payload] of Object.entries(headers)) {
    let traceparent: unknown;
    try {
      traceparent = defaultPayloadConverter.fromPayload<{ traceparent?: unknown }>(payload)?.traceparent;
    } catch {
      continue; // not a header this code reads
    }
    const flags =
      typeof traceparent === 'string'
        ? /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(traceparent)
        : null;
    if (!flags) continue;
    found.headers[name] = payload;
    found.sampled ||= (parseInt(flags[1]!, 16) & 1) === 1;
  }
  return found;
}

/** A call's input with the unsampled trace context added to its headers. */
const withUnsampledContext = <T extends { headers: Record<string, Payload> }>(input: T): T =>
  Object.keys(unsampledContext).length > 0 ? { ...input, headers: { ...input.headers, ...unsampledContext } } : input;

// The package's handlers are async functions even when they pass through, which delays their result: an untraced
// run calls the next interceptor directly.
class Inbound implements WorkflowInboundCallsInterceptor {
  private tracing?: WorkflowTracing.InboundTracing;
  private get traced(): WorkflowTracing.InboundTracing {
    return (this.tracing ??= new (tracingOf().InboundTracing)());
  }

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    const context = traceContextOf(input.headers);
    traced = context.sampled;
    unsampledContext = traced ? {} : context.headers;
    return traced ? this.traced.execute(input, next) : next(input);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    return traced ? this.traced.handleSignal(input, next) : next(input);
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    return traced ? this.traced.handleUpdate(input, next) : next(input);
  }

  // No span for validators and queries: span ids come from the workflow's seeded random numbers, and validators do not
  // run when an accepted update is replayed (queries not at all), so a span made there shifts every later id. A span
  // ended after a replay (an activity's start span, the update's own) would then be exported with an id other than
  // the one its children were given: activities without their parent.
  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>) {
    return next(input);
  }

  handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
    return next(input);
  }
}

class Outbound implements WorkflowOutboundCallsInterceptor {
  private tracing?: WorkflowTracing.OutboundTracing;
  private get traced(): WorkflowTracing.OutboundTracing {
    return (this.tracing ??= new (tracingOf().OutboundTracing)());
  }

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return traced ? this.traced.scheduleActivity(input, next) : next(withUnsampledContext(input));
  }

  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return traced ? this.traced.scheduleLocalActivity(input, next) : next(withUnsampledContext(input));
  }

  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return traced ? this.traced.startChildWorkflowExecution(input, next) : next(withUnsampledContext(input));
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return traced ? this.traced.continueAsNew(input, next) : next(withUnsampledContext(input));
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return traced ? this.traced.signalWorkflow(input, next) : next(withUnsampledContext(input));
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>) {
    return traced ? this.traced.getLogAttributes(input, next) : next(input);
  }

  getMetricTags(input: GetMetricTagsInput, next: Next<WorkflowOutboundCallsInterceptor, 'getMetricTags'>) {
    return traced ? this.traced.getMetricTags(input, next) : next(input);
  }
}

class Internals implements WorkflowInternalsInterceptor {
  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>) {
    return traced ? new (tracingOf().InternalsTracing)().dispose(input, next) : next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new Inbound()],
  outbound: [new Outbound()],
  internals: [new Internals()],
});
