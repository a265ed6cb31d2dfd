// The answers the CLI renders, typed by the client's operations (which take them from the API's own schemas).
import type { ShepherdClient } from "../client/index";

type Answer<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;

export type WorkflowView = Answer<ShepherdClient["get"]>;
export type StepView = WorkflowView["steps"][number];
export type WorkflowStatus = WorkflowView["status"];
export type WorkflowList = Answer<ShepherdClient["list"]>;
export type HistoryPage = Answer<ShepherdClient["history"]>;
export type HistoryEvent = HistoryPage["events"][number];
export type Diagnosis = Answer<ShepherdClient["diagnosis"]>;
export type DefinitionList = Answer<ShepherdClient["definitions"]["list"]>;
export type DefinitionVersionList = Answer<ShepherdClient["definitions"]["versions"]>;
export type PublishedDefinition = Answer<ShepherdClient["definitions"]["get"]>;
export type DefinitionVersion = Answer<ShepherdClient["definitions"]["publish"]>;
export type ScheduleView = Answer<ShepherdClient["schedules"]["get"]>;
export type ScheduleList = Answer<ShepherdClient["schedules"]["list"]>;
export type BulkJobView = Answer<ShepherdClient["bulk"]["get"]>;
export type BulkJobList = Answer<ShepherdClient["bulk"]["list"]>;
export type MapItemsPage = Answer<ShepherdClient["mapItems"]>;
export type AttemptDetail = Answer<ShepherdClient["attempt"]>;
/** The JSON form (the client asks for no other). */
export type Metrics = Exclude<Answer<ShepherdClient["metrics"]>, string>;
export type MetricsSeries = Answer<ShepherdClient["metricsSeries"]>;
export type TargetList = Answer<ShepherdClient["targets"]>;
export type PoolList = Answer<ShepherdClient["pools"]>;
export type DeadLetterList = Answer<ShepherdClient["startDeadLetters"]>;
export type WebhookView = Answer<ShepherdClient["webhooks"]["get"]>;
export type WebhookList = Answer<ShepherdClient["webhooks"]["list"]>;
export type CreatedWebhook = Answer<ShepherdClient["webhooks"]["put"]>;
export type DeliveryList = Answer<ShepherdClient["webhooks"]["deliveries"]>;
