// The OpenTelemetry workflow interceptors as bundled with our workflow code (scripts/bundle-workflows.ts). Runs in the
// workflow sandbox: deterministic code only.
//
// A workflow is traced when it was started with trace context (a client with tracing on puts it in the start's
// headers); any other workflow, and every workflow that ran before tracing existed, passes through untouched and pays
// nothing (the package's tracer is made only for a traced run). Once traced, the package's interceptors do the work,
// without the extra `await` they add when replaying histories of their older versions (we have none): the behaviour
// they have for every history recorded with their current version.
import {
  extractContextFromHeaders,
  headersWithContext,
  instrument,
  TRACE_HEADER,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
  SPAN_DELIMITER,
  SpanName,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  ActivityInput,
  ContinueAsNew,
  ContinueAsNewInput,
  Next,
  SignalInput,
  SignalWorkflowInput,
  UpdateInput,
  StartChildWorkflowExecutionInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  workflowInfo,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
  QueryInput,
  LocalActivityInput,
  DisposeInput,
  WorkflowInternalsInterceptor,
  GetLogAttributesInput,
  GetMetricTagsInput,
} from '@temporalio/workflow';

/** Whether this run was started with trace context (module state is per workflow run in the sandbox). */
let traced = false;

class InboundTracing extends OpenTelemetryInboundInterceptor {
  override execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.WORKFLOW_EXECUTE}${SPAN_DELIMITER}${workflowInfo().workflowType}`,
      fn: () => next(input),
      context: extractContextFromHeaders(input.headers),
      acceptableErrors: (error) => error instanceof ContinueAsNew,
    });
  }
}

class OutboundTracing extends OpenTelemetryOutboundInterceptor {
  override scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.ACTIVITY_START}${SPAN_DELIMITER}${input.activityType}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
    });
  }

  override startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.CHILD_WORKFLOW_START}${SPAN_DELIMITER}${input.workflowType}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
    });
  }

  override continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.CONTINUE_AS_NEW}${SPAN_DELIMITER}${input.options.workflowType}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
      acceptableErrors: (error) => error instanceof ContinueAsNew,
    });
  }

  override signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.WORKFLOW_SIGNAL}${SPAN_DELIMITER}${input.signalName}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
    });
  }
}

// The package's handlers are async functions even when they pass through, which delays their result: an untraced
// run calls the next interceptor directly.
class Inbound implements WorkflowInboundCallsInterceptor {
  private tracing?: InboundTracing;
  private get traced(): InboundTracing {
    return (this.tracing ??= new InboundTracing());
  }

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    traced = TRACE_HEADER in input.headers;
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
  private tracing?: OutboundTracing;
  private get traced(): OutboundTracing {
    return (this.tracing ??= new OutboundTracing());
  }

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return traced ? this.traced.scheduleActivity(input, next) : next(input);
  }

  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return traced ? this.traced.scheduleLocalActivity(input, next) : next(input);
  }

  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return traced ? this.traced.startChildWorkflowExecution(input, next) : next(input);
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return traced ? this.traced.continueAsNew(input, next) : next(input);
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return traced ? this.traced.signalWorkflow(input, next) : next(input);
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
    return traced ? new OpenTelemetryInternalsInterceptor().dispose(input, next) : next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new Inbound()],
  outbound: [new Outbound()],
  internals: [new Internals()],
});
