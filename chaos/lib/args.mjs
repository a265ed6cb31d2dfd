// Command-line flags of `npm run chaos -- …`, with the default soak and the --quick preset for CI.
import { checkFaultTable, DEFAULT_REMOTE_FAULTS } from "./faults.mjs";

export const SERVER_FAULT_KEYS = ["agentDiesAfterClaim", "dropHeartbeats", "abortAfterPersist", "alarmThrows", "enqueueFails", "indexWriteFails", "consumerThrows"];

/** Probabilities of the Worker-side faults (the FAULTS var, honoured only with DEV_HOOKS=true). */
export const DEFAULT_SERVER_FAULTS = Object.freeze({
  consumerThrows: 0.05,
  agentDiesAfterClaim: 0.05,
  indexWriteFails: 0.05,
  enqueueFails: 0.05,
  abortAfterPersist: 0.02,
  alarmThrows: 0.02,
  dropHeartbeats: 0.02,
});

const PORT_RANGE = [8810, 8819];

/**
 * Default bound on the whole run: the regular soak's, plus time per burst workflow for the engine to work
 * through them (measured on 2 loaded cores, with margin) and for the harness to read them at the end.
 */
const BURST_SECONDS_PER_WORKFLOW = { soak: 0.12, quick: 0.2 };
export const DEFAULT_BURST = { soak: 2000, quick: 300 };

export const USAGE = `npm run chaos -- [flags]

  --quick               CI preset: 30 workflows, 5 concurrent, a burst of ${DEFAULT_BURST.quick}, bound 90 s + ${BURST_SECONDS_PER_WORKFLOW.quick} s per burst workflow
  --workflows N         workflows to run (default 200)
  --concurrency C       workflows in flight at once (default 10)
  --burst N             extra 3-step workflows (no scheduleToStartMs) started at once while the soak runs (default ${DEFAULT_BURST.soak}; 0 = none)
  --burst-clients C     concurrent clients starting the burst (default 32)
  --seed S              seed of the workload and the remote's faults (default 1)
  --max-seconds T       bound on the whole run, start-up and checks included
                        (default 180 s + ${BURST_SECONDS_PER_WORKFLOW.soak} s per burst workflow)
  --no-restart          skip the mid-run restart of Shepherd
  --fault NAME=P        set one fault probability (repeatable). Remote: ${Object.keys(DEFAULT_REMOTE_FAULTS).join(", ")}
                        (decline is per action key, the others per attempt). Server: ${SERVER_FAULT_KEYS.join(", ")}
  --no-remote-faults    the remote answers every request at once
  --no-server-faults    FAULTS={} (the Worker injects nothing)
  --allow-skips         exit 0 even when a check was skipped because its API is missing
  --keep                keep the temp dir (copied project, persisted state, logs)
  --port-base P         Shepherd on P, inspector on P+1, remote on P+2 (within ${PORT_RANGE[0]}–${PORT_RANGE[1]}; default ${PORT_RANGE[0]})
  --help`;

export function parseArgs(argv) {
  const options = {
    workflows: 200,
    concurrency: 10,
    burst: DEFAULT_BURST.soak,
    burstClients: 32,
    seed: "1",
    maxSeconds: 180,
    restart: true,
    allowSkips: false,
    keep: false,
    portBase: PORT_RANGE[0],
    remoteFaults: { ...DEFAULT_REMOTE_FAULTS },
    serverFaults: { ...DEFAULT_SERVER_FAULTS },
    preset: "soak",
    help: false,
  };
  const explicit = new Set();
  const value = (i, flag) => {
    if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
    return argv[i + 1];
  };
  const integer = (text, flag, min) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`${flag} must be an integer ≥ ${min} (got ${text})`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const take = () => value(i++, flag);
    switch (flag) {
      case "--quick": options.preset = "quick"; break;
      case "--workflows": options.workflows = integer(take(), flag, 1); explicit.add("workflows"); break;
      case "--concurrency": options.concurrency = integer(take(), flag, 1); explicit.add("concurrency"); break;
      case "--burst": options.burst = integer(take(), flag, 0); explicit.add("burst"); break;
      case "--burst-clients": options.burstClients = integer(take(), flag, 1); break;
      case "--seed": options.seed = String(take()); break;
      case "--max-seconds": options.maxSeconds = integer(take(), flag, 30); explicit.add("maxSeconds"); break;
      case "--no-restart": options.restart = false; break;
      case "--allow-skips": options.allowSkips = true; break;
      case "--keep": options.keep = true; break;
      case "--port-base": options.portBase = integer(take(), flag, PORT_RANGE[0]); break;
      case "--no-remote-faults": for (const k of Object.keys(options.remoteFaults)) options.remoteFaults[k] = 0; break;
      case "--no-server-faults": for (const k of Object.keys(options.serverFaults)) options.serverFaults[k] = 0; break;
      case "--fault": {
        const [name, p] = take().split("=");
        const probability = Number(p);
        if (name in options.remoteFaults) options.remoteFaults[name] = probability;
        else if (SERVER_FAULT_KEYS.includes(name)) options.serverFaults[name] = probability;
        else throw new Error(`unknown fault ${name}`);
        break;
      }
      case "--help": case "-h": options.help = true; break;
      default: throw new Error(`unknown flag ${flag}`);
    }
  }
  if (options.preset === "quick") {
    if (!explicit.has("workflows")) options.workflows = 30;
    if (!explicit.has("concurrency")) options.concurrency = 5;
    if (!explicit.has("maxSeconds")) options.maxSeconds = 90;
    if (!explicit.has("burst")) options.burst = DEFAULT_BURST.quick;
  }
  if (!explicit.has("maxSeconds")) options.maxSeconds += Math.ceil(options.burst * BURST_SECONDS_PER_WORKFLOW[options.preset]);
  if (options.portBase + 2 > PORT_RANGE[1]) throw new Error(`--port-base must leave three ports within ${PORT_RANGE[0]}–${PORT_RANGE[1]}`);
  checkFaultTable(options.remoteFaults, Object.keys(options.remoteFaults));
  checkFaultTable(options.serverFaults, SERVER_FAULT_KEYS);
  const transient = ["slow", "hang", "executeAndTimeout", "http503", "http429"].reduce((sum, k) => sum + options.remoteFaults[k], 0);
  if (transient > 1) throw new Error(`the per-attempt remote fault probabilities add up to ${transient} (> 1)`);
  return options;
}
