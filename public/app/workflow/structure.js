// The shape of a workflow for its graph: each step's kind and the steps it depends on, as the view gives them
// (the plan's, defaults applied), with any name that is not a step of this workflow dropped so the layout never
// meets a dangling edge; a map's item counts, a child workflow step's child and a worker step's pool ride along
// for the node to draw.

/** `[{ id, status, kind, dependsOn, items?, child?, pool? }]` in the view's order. */
export function workflowStructure(view) {
  const ids = new Set(view.steps.map((step) => step.id));
  return view.steps.map((step) => ({
    id: step.id,
    status: step.status,
    kind: step.kind ?? "action",
    dependsOn: (step.dependsOn ?? []).filter((id) => ids.has(id) && id !== step.id),
    ...(step.items ? { items: step.items } : {}),
    ...(step.child ? { child: step.child } : {}),
    ...(step.pool ? { pool: step.pool } : {}),
  }));
}
