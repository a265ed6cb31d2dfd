import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import type { TaskMessage } from "../../src/domain/task-message";

export function schedulerStub(id: string, tenant = "default") {
  return env.WORKFLOW_SCHEDULER.getByName(`${tenant}:${id}`);
}

/**
 * Holds back the next `count` queue sends of one workflow's object, as if the agent that received them died
 * before doing anything. Later sends go to the real queue. Call before starting the workflow.
 */
export async function holdBackSends(id: string, count = 1) {
  const held: TaskMessage[] = [];
  await runInDurableObject(schedulerStub(id), (instance) => {
    const queue = (instance as unknown as { env: Env }).env.TASKS;
    const spy = vi.spyOn(queue, "sendBatch");
    for (let i = 0; i < count; i++) {
      spy.mockImplementationOnce(async (messages: Iterable<MessageSendRequest<unknown>>) => {
        for (const message of messages) held.push(message.body as TaskMessage);
        return undefined as unknown as QueueSendBatchResponse;
      });
    }
  });
  return held;
}
