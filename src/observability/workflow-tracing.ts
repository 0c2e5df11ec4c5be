// The OpenTelemetry interceptors of a traced workflow run: the package's, without the extra `await` they add when
// replaying histories of their older versions (we have none), the behaviour they have for every history recorded with
// their current version. Loaded by workflow-interceptors.ts only in runs started with trace context: this module
// brings the OpenTelemetry SDK, whose modules every run would otherwise evaluate when it starts. Runs in the workflow
// sandbox: deterministic code only.
import {
  extractContextFromHeaders,
  headersWithContext,
  instrument,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryOutboundInterceptor,
  SPAN_DELIMITER,
  SpanName,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  ActivityInput,
  ContinueAsNew,
  ContinueAsNewInput,
  Next,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  workflowInfo,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

export { OpenTelemetryInternalsInterceptor as InternalsTracing } from '@temporalio/interceptors-opentelemetry/lib/workflow';

export class InboundTracing extends OpenTelemetryInboundInterceptor {
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

export class OutboundTracing extends OpenTelemetryOutboundInterceptor {
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
