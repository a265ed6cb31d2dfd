import { consumeTaskBatch } from "./agents/task-consumer";
import { createApp } from "./api/app";

export { WorkflowScheduler } from "./scheduler/workflow-scheduler";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    if (batch.queue.endsWith("-dlq")) {
      // Dead letters: the attempt's deadlines still stand, so the supervisor retries or fails the step.
      for (const message of batch.messages) {
        console.error(JSON.stringify({ message: "task dead-lettered", body: message.body }));
        message.ack();
      }
      return;
    }
    await consumeTaskBatch(batch, env);
  },
} satisfies ExportedHandler<Env>;
