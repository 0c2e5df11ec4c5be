// The OpenTelemetry workflow interceptors as bundled with our workflow code (scripts/bundle-workflows.ts). Runs in the
// workflow sandbox: deterministic code only.
//
// Tracing wraps scheduling (activities, children, signals, the run itself) in an async span, which moves those
// commands after others of the same task: a workflow that ran without tracing (an update that schedules an activity)
// would fail to replay with it (test/workflow-histories.test.ts). So tracing is a patch (docs/workflow-versioning.md):
// a workflow that got to the patch without it keeps running untraced, and the package's own interceptors' compatibility
// yields (for histories of their older versions, which we never had) are left out.
import {
  extractContextFromHeaders,
  headersWithContext,
  instrument,
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
  patched,
} from '@temporalio/workflow';

/** The patch id of tracing in workflows. */
export const TRACING_PATCH = 'opentelemetry-tracing';

class InboundTracing extends OpenTelemetryInboundInterceptor {
  override execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    if (!patched(TRACING_PATCH)) return next(input);
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.WORKFLOW_EXECUTE}${SPAN_DELIMITER}${workflowInfo().workflowType}`,
      fn: () => next(input),
      context: extractContextFromHeaders(input.headers),
      acceptableErrors: (error) => error instanceof ContinueAsNew,
    });
  }

  // The package's handlers are async functions even when they pass through, which delays the handler's result.
  override handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    return patched(TRACING_PATCH) ? super.handleSignal(input, next) : next(input);
  }

  override handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    return patched(TRACING_PATCH) ? super.handleUpdate(input, next) : next(input);
  }
}

class OutboundTracing extends OpenTelemetryOutboundInterceptor {
  override scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    if (!patched(TRACING_PATCH)) return next(input);
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
    if (!patched(TRACING_PATCH)) return next(input);
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.CHILD_WORKFLOW_START}${SPAN_DELIMITER}${input.workflowType}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
    });
  }

  override continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    if (!patched(TRACING_PATCH)) return next(input);
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.CONTINUE_AS_NEW}${SPAN_DELIMITER}${input.options.workflowType}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
      acceptableErrors: (error) => error instanceof ContinueAsNew,
    });
  }

  override signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    if (!patched(TRACING_PATCH)) return next(input);
    return instrument({
      tracer: this.tracer,
      spanName: `${SpanName.WORKFLOW_SIGNAL}${SPAN_DELIMITER}${input.signalName}`,
      fn: () => next({ ...input, headers: headersWithContext(input.headers) }),
    });
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new InboundTracing()],
  outbound: [new OutboundTracing()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
