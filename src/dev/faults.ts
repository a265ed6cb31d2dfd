/**
 * Fault injection for local development and tests only: the chaos soak and the fault-matrix tests make
 * the engine fail where real deployments fail. Every fault is off unless the deployment sets
 * `DEV_HOOKS=true`, which only `npm start`, the chaos and bench scripts and the test configuration do;
 * wrangler.toml never does, so a deployed Worker ignores `FAULTS` and every injection.
 */
import { z } from "zod";

import { FAULT_NAMES, type FaultName } from "./fault-names";

export { FAULT_NAMES, type FaultName } from "./fault-names";

/**
 * Probability 0..1 per fault, as `FAULTS` gives it. Tests also use `skip` (let the first n chances pass)
 * and `times` (fire at most n times).
 */
export type FaultSetting = { probability: number; times?: number; skip?: number };

const FaultsSettingSchema = z.partialRecord(z.enum(FAULT_NAMES), z.number().min(0).max(1));

/** Faults set by a test at run time; tests share the isolate with the Worker and its objects. */
const injected = new Map<FaultName, FaultSetting>();
const fired = new Map<FaultName, number>();
let fromEnv: { raw: string | undefined; settings: Map<FaultName, FaultSetting> } | undefined;
let warnedDisabled = false;

export function devHooksEnabled(env: Pick<Env, "DEV_HOOKS">): boolean {
  return env.DEV_HOOKS === "true";
}

function envSettings(raw: string | undefined): Map<FaultName, FaultSetting> {
  if (fromEnv && fromEnv.raw === raw) return fromEnv.settings;
  const settings = new Map<FaultName, FaultSetting>();
  if (raw) {
    let parsed: ReturnType<typeof FaultsSettingSchema.safeParse>;
    try {
      parsed = FaultsSettingSchema.safeParse(JSON.parse(raw));
    } catch {
      parsed = FaultsSettingSchema.safeParse(undefined);
    }
    if (parsed.success) {
      for (const [name, probability] of Object.entries(parsed.data)) settings.set(name as FaultName, { probability: probability ?? 0 });
    } else {
      console.error(JSON.stringify({ message: "FAULTS is not a JSON object of fault name to probability; no faults injected" }));
    }
  }
  fromEnv = { raw, settings };
  return settings;
}

let faultFree: { raw: string | undefined; tenants: Set<string> } | undefined;

/** FAULT_FREE_TENANTS: tenants no fault is injected for (the soak's noisy-neighbour tenant measures fairness, not faults). */
function faultFreeTenants(raw: string | undefined): Set<string> {
  if (faultFree !== undefined && faultFree.raw === raw) return faultFree.tenants;
  const tenants = new Set((raw ?? "").split(",").map((tenant) => tenant.trim()).filter(Boolean));
  faultFree = { raw, tenants };
  return tenants;
}

/**
 * Whether the named fault fires now, for `tenant`'s work when the call site knows whose it is. Always false in a
 * deployment without DEV_HOOKS=true.
 */
export function faultFires(env: Pick<Env, "DEV_HOOKS" | "FAULTS" | "FAULT_FREE_TENANTS">, name: FaultName, tenant?: string): boolean {
  if (tenant !== undefined && faultFreeTenants(env.FAULT_FREE_TENANTS).has(tenant)) return false;
  if (!devHooksEnabled(env)) {
    if ((env.FAULTS || injected.size > 0) && !warnedDisabled) {
      warnedDisabled = true;
      console.error(JSON.stringify({ message: "fault injection refused: DEV_HOOKS is not set (a deployed configuration)" }));
    }
    return false;
  }
  const setting = injected.get(name) ?? envSettings(env.FAULTS).get(name);
  if (!setting) return false;
  if (setting.skip !== undefined && setting.skip > 0) {
    setting.skip -= 1;
    return false;
  }
  if (setting.probability <= 0 || Math.random() >= setting.probability) return false;
  if (setting.times !== undefined) {
    if (setting.times <= 0) return false;
    setting.times -= 1;
  }
  fired.set(name, (fired.get(name) ?? 0) + 1);
  return true;
}

/** How often a fault fired in this isolate since the last `clearInjectedFaults`, so a test can show its fault happened. */
export function timesFired(name: FaultName): number {
  return fired.get(name) ?? 0;
}

/** For tests: make a fault fire (by default once, always). */
export function injectFault(name: FaultName, setting: FaultSetting = { probability: 1, times: 1 }): void {
  injected.set(name, { ...setting });
}

export function clearInjectedFaults(): void {
  injected.clear();
  fired.clear();
}

/** The error an injected fault throws, recognisable in logs and tests. */
export class InjectedFault extends Error {
  constructor(name: FaultName) {
    super(`injected fault: ${name}`);
    this.name = "InjectedFault";
  }
}
