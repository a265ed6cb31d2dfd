/**
 * A `workflow` step: starts a child workflow (an ordinary workflow of the same tenant, in its own object) and waits
 * for it to end. The child's object tells this one when it ends, through a durable notice: nothing polls.
 */
import { z } from "zod";
import { WORKFLOW_STATUSES } from "../../contract";
import { DefinitionRefSchema, ID_PATTERN, PayloadSchema } from "../primitives";
import { templatePaths } from "../templates";
import { defineStepKind } from "./step-kind";

/** What the parent's close does to a child still open: cancel it (the default), terminate it, or leave it running. */
export const ON_PARENT_CLOSE = ["cancel", "terminate", "abandon"] as const;
export type OnParentClose = (typeof ON_PARENT_CLOSE)[number];

/** How deep children nest: a workflow no step started is at depth 0, its children at 1, theirs at 2 … up to 8. */
export const MAX_WORKFLOW_DEPTH = 8;

/** Start a child from a published definition or an inline one (exactly one), with a templated input and id. */
export const ChildWorkflowSchema = z
  .strictObject({
    definitionRef: DefinitionRefSchema.optional(),
    /** Checked as a start's own definition is, with the parent's (definition.ts, through `nestedDefinition`). */
    definition: z.record(z.string(), z.unknown()).optional(),
    /** The child's input; templates read like an action's body, when the step starts. */
    input: PayloadSchema.optional(),
    /** The child's id, usually a template; default `<parentId>:<stepId>`. A retry adds `:<attempt>`. */
    id: z.string().min(1).max(2048).optional(),
    /** Default `cancel`. A terminate of the parent terminates the child unless it is `abandon`. */
    onParentClose: z.enum(ON_PARENT_CLOSE).optional(),
  })
  .refine((child) => (child.definitionRef === undefined) !== (child.definition === undefined), {
    message: "a workflow step needs exactly one of definitionRef or definition",
  });

export type ChildWorkflow = z.infer<typeof ChildWorkflowSchema>;

/** Where the child is, as the parent last heard: `starting` until its start is recorded, then its status. */
export const CHILD_STATUSES = ["starting", ...WORKFLOW_STATUSES] as const;
export const ChildRefSchema = z.object({ id: z.string(), status: z.enum(CHILD_STATUSES) });
export type ChildRef = z.infer<typeof ChildRefSchema>;

export const workflowStep = defineStepKind({
  kind: "workflow",
  definition: ChildWorkflowSchema,
  plan: z.object({
    kind: z.literal("workflow"),
    workflow: ChildWorkflowSchema,
    /** The step has a `retry` of its own: a child that did not complete is retried with a fresh one. */
    retriesChild: z.literal(true).optional(),
  }),
  state: z.object({ kind: z.literal("workflow"), child: ChildRefSchema.optional() }),
  planOf: (workflow, step) => ({ kind: "workflow" as const, workflow, ...(step.retry ? { retriesChild: true as const } : {}) }),
  check: (child, stepId) => {
    if (child.id === undefined || templatePaths(child.id).length > 0 || ID_PATTERN.test(child.id)) return undefined;
    return `step "${stepId}": workflow.id must match ${ID_PATTERN.source} or be a template`;
  },
  nestedDefinition: (child) => child.definition,
  waits: {
    status: "waiting",
    blockedReason: "waiting_for_child",
    waitsFor: () => "waits for its child workflow (the step's `child`) to end; the child's object tells this one",
  },
  viewFields: {
    /** The child workflow this step started (or is starting), and its status as last heard. */
    child: ChildRefSchema.extend({ status: z.string() }).optional(),
  },
  view: (step) => (step.child ? { child: step.child } : {}),
});
