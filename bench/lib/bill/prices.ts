// Cloudflare's published prices (Workers Paid, beyond the monthly allowances: the marginal price at scale) and the
// peers' own, each with the page it comes from and when it was read. docs/cost.md prints this list.

/** A unit price: `usd` per `per` units of `unit`. */
export interface UnitPrice {
  usd: number;
  per: number;
  unit: string;
}

/** A price list's source: the public page, its source where the page is generated from one, and when it was read. */
export interface PriceSource {
  page: string;
  read: string;
  note?: string;
}

const READ = "2026-11-27";
const DOCS_SOURCE = "the page's source in cloudflare/cloudflare-docs";

export const SOURCES = {
  durableObjects: { page: "https://developers.cloudflare.com/durable-objects/platform/pricing/", read: READ, note: `${DOCS_SOURCE}, src/content/partials/durable-objects/durable-objects-pricing.mdx` },
  workers: { page: "https://developers.cloudflare.com/workers/platform/pricing/", read: READ, note: `${DOCS_SOURCE}, src/content/docs/workers/platform/pricing.mdx` },
  d1: { page: "https://developers.cloudflare.com/d1/platform/pricing/", read: READ, note: `${DOCS_SOURCE}, src/content/partials/workers/d1-pricing.mdx` },
  queues: { page: "https://developers.cloudflare.com/queues/platform/pricing/", read: READ, note: `${DOCS_SOURCE}, src/content/partials/workers/queues_pricing.mdx` },
  workflows: { page: "https://developers.cloudflare.com/workflows/reference/pricing/", read: READ },
  stepFunctions: { page: "https://aws.amazon.com/step-functions/pricing/", read: READ, note: "US East (N. Virginia)" },
  temporalCloud: { page: "https://docs.temporal.io/cloud/pricing", read: READ, note: "Pay-As-You-Go Action tiers" },
} satisfies Record<string, PriceSource>;

/** A unit price as published: the service that bills it and where the price is written. */
export interface ListedPrice extends UnitPrice {
  service: string;
  source: PriceSource;
}

const listed = (service: string, source: PriceSource) => (usd: number, unit: string): ListedPrice => ({ usd, per: 1e6, unit, service, source });
const durableObjects = listed("Durable Objects", SOURCES.durableObjects);
const workers = listed("Workers Standard", SOURCES.workers);

/** What Shepherd (and the floor) run on: Durable Objects with SQLite storage, D1, Queues, a Worker. */
export const CLOUDFLARE = {
  doRequests: durableObjects(0.15, "Durable Object requests (RPC calls, fetches, alarms)"),
  /** Duration bills the 128 MB an object is allocated, whatever it uses, while it is active. */
  doDuration: durableObjects(12.5, "GB-s of Durable Object duration"),
  sqliteRowsRead: durableObjects(0.001, "SQLite rows read"),
  sqliteRowsWritten: durableObjects(1.0, "SQLite rows written (each setAlarm is one)"),
  d1RowsRead: listed("D1", SOURCES.d1)(0.001, "D1 rows read"),
  d1RowsWritten: listed("D1", SOURCES.d1)(1.0, "D1 rows written"),
  queueOps: listed("Queues", SOURCES.queues)(0.4, "queue operations (a message: write, read, delete)"),
  workerRequests: workers(0.3, "Worker requests"),
  cpuMs: workers(0.02, "CPU ms"),
} satisfies Record<string, ListedPrice>;

/** GB per object for duration: Cloudflare's own examples count 128 MB as 0.128 GB. */
export const DO_GB = 0.128;
/** Operations per queue message under 64 KB: one write, one read, one delete. */
export const QUEUE_OPS_PER_MESSAGE = 3;

/** Cloudflare Workflows: Workers Standard's CPU time and requests (invocations); storage per GB-month besides. */
export const WORKFLOWS = {
  requests: listed("Cloudflare Workflows", SOURCES.workflows)(0.3, "requests (Worker requests and Workflow invocations)"),
  cpuMs: listed("Cloudflare Workflows", SOURCES.workflows)(0.02, "CPU ms"),
} satisfies Record<string, ListedPrice>;

/** AWS Step Functions Standard: per state transition (a Task state per step). */
export const STEP_FUNCTIONS_STANDARD: ListedPrice = listed("AWS Step Functions Standard", SOURCES.stepFunctions)(25, "state transitions");

/** Temporal Cloud: per Action, from the first tier's price down to the last published one. */
export const TEMPORAL_CLOUD = {
  firstTier: listed("Temporal Cloud", SOURCES.temporalCloud)(50, "Actions (the first 5M a month)"),
  lastTier: listed("Temporal Cloud", SOURCES.temporalCloud)(25, "Actions (from 100M to 200M a month)"),
} satisfies Record<string, ListedPrice>;

/** Every price the bill and its peers use, in the order docs/cost.md lists them. */
export const PRICE_LIST: readonly ListedPrice[] = [...Object.values(CLOUDFLARE), ...Object.values(WORKFLOWS), STEP_FUNCTIONS_STANDARD, ...Object.values(TEMPORAL_CLOUD)];

/** Dollars per million of `count` units. */
export const perMillion = (count: number, price: UnitPrice): number => (count * price.usd * 1e6) / price.per;
