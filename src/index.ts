import { recordDeadLetters } from "./agents/dead-letters";
import { withConsumerFaults } from "./dev/fault-bindings";
import { consumeTaskBatch } from "./agents/task-consumer";
import { createApp } from "./api/app";
import { sweepOverdueWorkflows } from "./supervisor/sweep";
import { pruneMetricsSeries } from "./workflow-index/series-retention";
import { consumeWebhookBatch } from "./webhooks/consumer";
import { consumeStartBatch } from "./starts/start-consumer";
import { recordGivenUpStarts } from "./starts/dead-letter-consumer";

export { AgentHost } from "./agents/agent-host";
export { TargetBreaker } from "./breakers/target-breaker";
export { QueueLagMonitor } from "./admission/queue-lag-monitor";
export { CronSchedule } from "./cron/cron-schedule";
export { WorkflowScheduler } from "./workflow/object";
export { WorkerPool } from "./pools/pool-object";
export { BulkJob } from "./bulk/bulk-job";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    if (batch.queue === "shepherd-webhooks") await consumeWebhookBatch(batch, env);
    else if (batch.queue === "shepherd-starts") await consumeStartBatch(batch, env);
    else if (batch.queue === "shepherd-starts-dlq") await recordGivenUpStarts(batch, env);
    else if (batch.queue === "shepherd-tasks-dlq") await recordDeadLetters(batch, env);
    // Every task queue (shepherd-tasks, shepherd-tasks-1 ...: see TASK_QUEUE_SHARDS) has the same consumer.
    else await withConsumerFaults(consumeTaskBatch)(batch, env);
  },
  async scheduled(controller, env, _ctx) {
    await Promise.all([sweepOverdueWorkflows(env, controller.scheduledTime), pruneMetricsSeries(env, controller.scheduledTime)]);
  },
} satisfies ExportedHandler<Env>;
