import { recordDeadLetters } from "./agents/dead-letters";
import { consumeTaskBatch } from "./agents/task-consumer";
import { createApp } from "./api/app";
import { sweepOverdueWorkflows } from "./supervisor/sweep";

export { AgentHost } from "./agents/agent-host";
export { QueueLagMonitor } from "./queue-lag/monitor";
export { CronSchedule } from "./schedules/cron-schedule";
export { WorkflowScheduler } from "./scheduler/workflow-scheduler";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    if (batch.queue.endsWith("-dlq")) await recordDeadLetters(batch, env);
    else await consumeTaskBatch(batch, env);
  },
  async scheduled(controller, env, _ctx) {
    await sweepOverdueWorkflows(env, controller.scheduledTime);
  },
} satisfies ExportedHandler<Env>;
