// Reads what one real workflow made the engine do, from its history (and its children's): the shape the
// engine-ceiling workflow copies (scripts/bench/engine/workflows.ts), plus the history's size.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { WorkflowShape } from './engine/workflows';

export interface MeasuredShape extends WorkflowShape {
  workflowId: string;
  /** Events in this workflow's history (children not included). */
  events: number;
  /** Encoded size of this workflow's history, bytes (children not included). */
  bytes: number;
  /** Search-attribute upserts (not copied by the ceiling: a choice of ours, so part of what it measures). */
  upserts: number;
  children: MeasuredShape[];
}

export async function shapeOf(client: Client, workflowId: string): Promise<MeasuredShape> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const shape: MeasuredShape = {
    workflowId,
    events: events.length,
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    activities: 0,
    timers: 0,
    signals: 0,
    updates: 0,
    upserts: 0,
    children: [],
  };
  for (const event of events) {
    if (event.activityTaskScheduledEventAttributes) shape.activities += 1;
    if (event.timerStartedEventAttributes) shape.timers += 1;
    if (event.workflowExecutionSignaledEventAttributes) shape.signals += 1;
    if (event.workflowExecutionUpdateAcceptedEventAttributes) shape.updates += 1;
    if (event.upsertWorkflowSearchAttributesEventAttributes) shape.upserts += 1;
    const child = event.startChildWorkflowExecutionInitiatedEventAttributes;
    if (child?.workflowId) shape.children.push(await shapeOf(client, child.workflowId));
  }
  return shape;
}

/** The ceiling's input: the counts only. */
export function bareShape(shape: MeasuredShape): WorkflowShape {
  return {
    activities: shape.activities,
    timers: shape.timers,
    signals: shape.signals,
    updates: shape.updates,
    children: shape.children.map(bareShape),
  };
}

/** Totals over a workflow and its children. */
export function totals(shape: MeasuredShape): {
  workflows: number;
  activities: number;
  timers: number;
  signals: number;
  updates: number;
  upserts: number;
  events: number;
  bytes: number;
} {
  const result = {
    workflows: 1,
    activities: shape.activities,
    timers: shape.timers,
    signals: shape.signals,
    updates: shape.updates,
    upserts: shape.upserts,
    events: shape.events,
    bytes: shape.bytes,
  };
  for (const child of shape.children) {
    const inner = totals(child);
    for (const key of Object.keys(result) as (keyof typeof result)[]) result[key] += inner[key];
  }
  return result;
}
