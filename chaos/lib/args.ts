// Command-line flags of `npm run chaos -- …`, with the default soak and the --quick preset for CI. Reading and
// checking them is scripts/lib/cli.ts's, as for the bench. The Worker's fault names come from the Worker
// itself (src/dev/fault-names.ts, run by node's type stripping), so a fault added there is a flag here at once.
import { flagSpec, integer, readFlags } from "../../scripts/lib/cli.ts";
import { checkPortBase } from "../../scripts/lib/ports.ts";
import { FAULT_NAMES } from "../../src/dev/fault-names.ts";
import { checkFaultTable, DEFAULT_REMOTE_FAULTS, isRemoteFaultKind, ITEM_FAULT_KINDS, TRANSIENT_KINDS } from "./faults.ts";
import type { RemoteFaults } from "./faults.ts";
import { CHILDREN_PER_MAP, DEFAULT_PARENTS, PARENT_SHAPES } from "./children.ts";
import { DEFAULT_MAP_SIZES, MAX_MAP_ITEMS } from "./map.ts";
import { DEFAULT_POOL_WORKFLOWS, POOL_STEPS } from "./pool.ts";
import { DEFAULT_BULK_WORKFLOWS } from "./bulk.ts";
import { DEFAULT_ARRIVALS } from "./arrivals.ts";

export const SERVER_FAULT_KEYS: readonly string[] = [...FAULT_NAMES];

export type Preset = "soak" | "quick";

/** The run's settings, from the flags and the preset. */
export interface ChaosOptions {
  workflows: number;
  concurrency: number;
  burst: number;
  burstClients: number;
  /** The map phase's maps, by item count (none: no map phase). */
  mapItems: number[];
  /** The parent/child phase's parents, their shapes dealt in turn (0: no phase). */
  parents: number;
  /** The pool phase's workflows of worker steps (0: no phase, and no worker processes). */
  poolWorkflows: number;
  /** The bulk phase's workflows, cancelled by one bulk job across the restart (0: no phase). */
  bulkWorkflows: number;
  /** The arrivals phase's workflows through each door: delayed, batched, queued (0: no phase). */
  arrivals: number;
  seed: string;
  maxSeconds: number;
  restart: boolean;
  allowSkips: boolean;
  keep: boolean;
  portBase: number;
  remoteFaults: RemoteFaults;
  serverFaults: Record<string, number>;
  preset: Preset;
  help: boolean;
}

/**
 * Probabilities of the Worker-side faults (the FAULTS var, honoured only with DEV_HOOKS=true). A fault
 * src/dev/fault-names.ts adds is off in the soak (0) until it gets a probability here.
 */
const SOAK_SERVER_FAULTS: Record<string, number> = {
  consumerThrows: 0.05,
  agentDiesAfterClaim: 0.05,
  indexWriteFails: 0.05,
  enqueueFails: 0.05,
  abortAfterPersist: 0.02,
  alarmThrows: 0.02,
  dropHeartbeats: 0.02,
  // Per child start: a handful of a quick soak's ~40 children find their parent crashed before it recorded them.
  abortAfterChildStart: 0.05,
  // Per workflow a bulk job acts on: a few of the full soak's 2 000 find the job's object reset before it recorded them.
  abortAfterBulkAction: 0.003,
};
for (const name of Object.keys(SOAK_SERVER_FAULTS)) {
  // A fault renamed or removed in src/ must not silently leave the soak.
  if (!SERVER_FAULT_KEYS.includes(name)) throw new Error(`chaos/lib/args.ts sets a probability for ${name}, which src/dev/fault-names.ts no longer has`);
}
export const DEFAULT_SERVER_FAULTS: Readonly<Record<string, number>> = Object.freeze({
  ...SOAK_SERVER_FAULTS,
  ...Object.fromEntries(SERVER_FAULT_KEYS.filter((name) => !(name in SOAK_SERVER_FAULTS)).map((name) => [name, 0])),
});

export const PORT_RANGE: [number, number] = [8810, 8819];
/** Shepherd, its inspector, the remote, the breaker scenario's second host, the noisy neighbour's host. */
const PORT_COUNT = 5;

/**
 * Default bound on the whole run: the regular soak's, plus time per burst workflow for the engine to work
 * through them (measured on 2 loaded cores, with margin) and for the harness to read them at the end.
 */
const BURST_SECONDS_PER_WORKFLOW: Record<Preset, number> = { soak: 0.12, quick: 0.2 };
/** The same per map item: items run 50 at a time beside everything else, and their histories are read at the end. */
const MAP_SECONDS_PER_ITEM: Record<Preset, number> = { soak: 0.01, quick: 0.02 };
/** The same per workflow of the bulk phase: its start, its share of the job, and its reading at the end. */
const BULK_SECONDS_PER_WORKFLOW: Record<Preset, number> = { soak: 0.06, quick: 0.1 };
/**
 * The arrivals phase holds the restart's kill until its sends are made, and waits for its end notices: the time after
 * the restart must still cover a message the kill lost, found 30–90 s later by its queue check.
 */
const ARRIVAL_SECONDS_PER_WORKFLOW: Record<Preset, number> = { soak: 0.5, quick: 2 };
export const DEFAULT_BURST: Record<Preset, number> = { soak: 2000, quick: 300 };

export const USAGE = `npm run chaos -- [flags]

  --quick               CI preset: 30 workflows, 5 concurrent, a burst of ${DEFAULT_BURST.quick}, maps of ${DEFAULT_MAP_SIZES.quick.join(", ")} items, ${DEFAULT_PARENTS.quick} parents, ${DEFAULT_POOL_WORKFLOWS.quick} pool workflows,
                        ${DEFAULT_BULK_WORKFLOWS.quick} bulk workflows, ${DEFAULT_ARRIVALS.quick} arrivals per door, bound 90 s + ${BURST_SECONDS_PER_WORKFLOW.quick} s per burst workflow
                        + ${MAP_SECONDS_PER_ITEM.quick} s per map item + ${BULK_SECONDS_PER_WORKFLOW.quick} s per bulk workflow + ${ARRIVAL_SECONDS_PER_WORKFLOW.quick} s per arrival
  --workflows N         workflows to run (default 200)
  --concurrency C       workflows in flight at once (default 10)
  --burst N             extra 3-step workflows (no scheduleToStartMs) started at once while the soak runs (default ${DEFAULT_BURST.soak}; 0 = none)
  --burst-clients C     concurrent clients starting the burst (default 32)
  --map-items N,N,…     the map phase: one map workflow per count, its items (default ${DEFAULT_MAP_SIZES.soak.join(",")}; --quick ${DEFAULT_MAP_SIZES.quick.join(",")}; 0 = none)
  --parents N           the parent/child phase: parents of child workflows, shapes dealt in turn (${PARENT_SHAPES.join(", ")};
                        a map of ${CHILDREN_PER_MAP} children) (default ${DEFAULT_PARENTS.soak}; --quick ${DEFAULT_PARENTS.quick}; 0 = none)
  --pool-workflows N    the pool phase: workflows of ${POOL_STEPS.length} worker steps, done by the soak's worker processes
                        (default ${DEFAULT_POOL_WORKFLOWS.soak}; --quick ${DEFAULT_POOL_WORKFLOWS.quick}; 0 = none)
  --bulk-workflows N    the bulk phase: waiting workflows that one bulk job cancels, created just before the restart
                        (default ${DEFAULT_BULK_WORKFLOWS.soak}; --quick ${DEFAULT_BULK_WORKFLOWS.quick}; 0 = none)
  --arrivals N          the arrivals phase: workflows through each door (delayed start, batch, STARTS queue), each with
                        a notify, some long-polled (default ${DEFAULT_ARRIVALS.soak}; --quick ${DEFAULT_ARRIVALS.quick}; 0 = none)
  --seed S              seed of the workload and the remote's faults (default 1)
  --max-seconds T       bound on the whole run, start-up and checks included
                        (default 180 s + ${BURST_SECONDS_PER_WORKFLOW.soak} s per burst workflow + ${MAP_SECONDS_PER_ITEM.soak} s per map item
                        + ${BULK_SECONDS_PER_WORKFLOW.soak} s per bulk workflow + ${ARRIVAL_SECONDS_PER_WORKFLOW.soak} s per arrival)
  --no-restart          skip the mid-run restart of Shepherd
  --fault NAME=P        set one fault probability (repeatable). Remote: ${Object.keys(DEFAULT_REMOTE_FAULTS).join(", ")}
                        (decline is per action key, itemHttp503 and itemHang once per map item's key, the others per attempt). Server: ${SERVER_FAULT_KEYS.join(", ")}
  --no-remote-faults    the remote answers every request at once
  --no-server-faults    FAULTS={} (the Worker injects nothing)
  --allow-skips         exit 0 even when a check was skipped because its API is missing
  --keep                keep the temp dir (copied project, persisted state, logs)
  --port-base P         Shepherd on P, inspector on P+1, remote on P+2, second host on P+3, neighbour's host on P+4 (within ${PORT_RANGE[0]}–${PORT_RANGE[1]}; default ${PORT_RANGE[0]})
  --help`;

const FLAGS = flagSpec({
  values: ["workflows", "concurrency", "burst", "burst-clients", "map-items", "parents", "pool-workflows", "bulk-workflows", "arrivals", "seed", "max-seconds", "port-base"],
  switches: ["quick", "no-restart", "no-remote-faults", "no-server-faults", "allow-skips", "keep"],
  repeatable: ["fault"],
});

/** `--fault NAME=P`: one remote or Worker fault's probability. */
function setFault(options: ChaosOptions, text: string): void {
  const [name = "", p] = text.split("=");
  const probability = Number(p);
  if (isRemoteFaultKind(name)) options.remoteFaults[name] = probability;
  else if (SERVER_FAULT_KEYS.includes(name)) options.serverFaults[name] = probability;
  else throw new Error(`unknown fault ${name}`);
}

/** A flag's value as parseArgs read it: a string for the flags that take one, true for a switch. */
type FlagValues = Record<string, unknown>;

export function parseArgs(argv: string[]): ChaosOptions {
  const { values, tokens } = readFlags(argv, FLAGS);
  const flags: FlagValues = values;
  const preset: Preset = flags.quick ? "quick" : "soak";
  /** The flag's value when given, else the preset's default. */
  const pick = (flag: string, min: number, soak: number, quick = soak): number => {
    const text = flags[flag];
    return typeof text === "string" ? integer(text, `--${flag}`, min) : preset === "quick" ? quick : soak;
  };
  const burst = pick("burst", 0, DEFAULT_BURST.soak, DEFAULT_BURST.quick);
  const mapItems = typeof flags["map-items"] === "string" ? mapSizes(flags["map-items"]) : [...DEFAULT_MAP_SIZES[preset]];
  const bulkWorkflows = pick("bulk-workflows", 0, DEFAULT_BULK_WORKFLOWS.soak, DEFAULT_BULK_WORKFLOWS.quick);
  const arrivals = pick("arrivals", 0, DEFAULT_ARRIVALS.soak, DEFAULT_ARRIVALS.quick);
  const options: ChaosOptions = {
    workflows: pick("workflows", 1, 200, 30),
    concurrency: pick("concurrency", 1, 10, 5),
    burst,
    burstClients: pick("burst-clients", 1, 32),
    mapItems,
    parents: pick("parents", 0, DEFAULT_PARENTS.soak, DEFAULT_PARENTS.quick),
    poolWorkflows: pick("pool-workflows", 0, DEFAULT_POOL_WORKFLOWS.soak, DEFAULT_POOL_WORKFLOWS.quick),
    bulkWorkflows,
    arrivals,
    seed: typeof flags.seed === "string" ? flags.seed : "1",
    maxSeconds: pick("max-seconds", 30, 180, 90) + (flags["max-seconds"] === undefined ? defaultAllowance(preset, { burst, mapItems, bulkWorkflows, arrivals }) : 0),
    restart: !flags["no-restart"],
    allowSkips: Boolean(flags["allow-skips"]),
    keep: Boolean(flags.keep),
    portBase: pick("port-base", 1, PORT_RANGE[0]),
    remoteFaults: { ...DEFAULT_REMOTE_FAULTS },
    serverFaults: { ...DEFAULT_SERVER_FAULTS },
    preset,
    help: Boolean(flags.help),
  };
  applyFaultFlags(options, tokens);
  checkPortBase(options.portBase, PORT_COUNT, PORT_RANGE);
  checkFaultTable(options.remoteFaults, Object.keys(options.remoteFaults));
  checkFaultTable(options.serverFaults, SERVER_FAULT_KEYS);
  const transient = TRANSIENT_KINDS.reduce((sum, k) => sum + options.remoteFaults[k], 0);
  if (transient > 1) throw new Error(`the per-attempt remote fault probabilities add up to ${transient} (> 1)`);
  const perItem = ITEM_FAULT_KINDS.reduce((sum, k) => sum + options.remoteFaults[k], 0);
  if (perItem > 1) throw new Error(`the per-item remote fault probabilities add up to ${perItem} (> 1)`);
  return options;
}

/** The bound's time beyond the preset's for the burst's workflows, the maps' items and the bulk phase's workflows. */
function defaultAllowance(preset: Preset, sizes: { burst: number; mapItems: readonly number[]; bulkWorkflows: number; arrivals: number }): number {
  const items = sizes.mapItems.reduce((sum, n) => sum + n, 0);
  const bulk = sizes.bulkWorkflows * BULK_SECONDS_PER_WORKFLOW[preset];
  return Math.ceil(sizes.burst * BURST_SECONDS_PER_WORKFLOW[preset] + items * MAP_SECONDS_PER_ITEM[preset] + bulk + sizes.arrivals * ARRIVAL_SECONDS_PER_WORKFLOW[preset]);
}

/** `--map-items 150,250`: a map per count, each 1–${MAX_MAP_ITEMS} items; `0` runs none. */
function mapSizes(text: string): number[] {
  const sizes = text.split(",").map((part) => integer(part.trim(), "--map-items", 0)).filter((n) => n > 0);
  const tooMany = sizes.find((n) => n > MAX_MAP_ITEMS);
  if (tooMany !== undefined) throw new Error(`--map-items: ${tooMany} is more than a map may hold (${MAX_MAP_ITEMS})`);
  return sizes;
}

/** In command-line order: `--no-remote-faults --fault hang=0.2` leaves only hang on. */
function applyFaultFlags(options: ChaosOptions, tokens: readonly { kind: string; name?: string; value?: string | undefined }[]): void {
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    if (token.name === "no-remote-faults") for (const k of Object.keys(options.remoteFaults)) if (isRemoteFaultKind(k)) options.remoteFaults[k] = 0;
    if (token.name === "no-server-faults") for (const k of Object.keys(options.serverFaults)) options.serverFaults[k] = 0;
    if (token.name === "fault") setFault(options, token.value ?? "");
  }
}
