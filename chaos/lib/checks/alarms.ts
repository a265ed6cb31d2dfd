// Supervision never lapsed: no workflow's alarm was more than 5 s overdue, sampled during the run (lib/alarms.ts)
// and read for every workflow at the end, and none was lost or left behind.
import { mapPool, sleep } from "../../../scripts/lib/async.ts";
import { judgeAlarm, OVERDUE_LIMIT_MS, probeDevRoute } from "../alarms.ts";
import type { AlarmSamples, DevRouteProbe } from "../alarms.ts";
import type { ShepherdClient } from "../client.ts";
import type { DevWorkflow } from "../api-shapes.ts";
import type { Final } from "../finals.ts";
import { fail, pass, skipped } from "./check.ts";
import type { Check } from "./check.ts";

type Seen = Pick<DevWorkflow, "status" | "alarmAt" | "nextDeadlineAt"> & { id: string };

/** The final reading of every object's alarm. */
interface FinalAlarms {
  overdue: (Seen & { overdueMs: number })[];
  leftovers: Seen[];
  lost: Seen[];
  maxOverdueMs: number;
}

/** No alarm overdue by more than 5 s (sampled during the run and read for every workflow at the end). */
export async function checkAlarms(client: ShepherdClient, finals: Final[], sampled: AlarmSamples | null): Promise<Check> {
  const name = `no alarm > ${OVERDUE_LIMIT_MS / 1000} s overdue`;
  const first = finals.find((f) => f.view);
  if (!first) return fail(name, "no workflow to ask about");
  let probe: DevRouteProbe = await probeDevRoute(client, first.id);
  if (probe.available === null) probe = await sleep(1_000).then(() => probeDevRoute(client, first.id));
  if (probe.available === null) return fail(name, `GET /dev/workflows/{id} answered ${probe.status}`);
  if (!probe.available) return skipped(name, `skipped (no dev route: GET /dev/workflows/{id} answered ${probe.status})`);
  const end = await readFinalAlarms(client, finals);
  const s = sampled ?? { samples: 0, maxOverdueMs: 0, worst: [], lost: [] };
  const failed = end.overdue.length + end.leftovers.length + end.lost.length + s.worst.length + s.lost.length > 0;
  const detail =
    `max overdue ${Math.max(s.maxOverdueMs, end.maxOverdueMs)} ms over ${s.samples} samples during the run + ${finals.length} at the end; ` +
    `${end.overdue.length + s.worst.length} overdue, ${end.lost.length + s.lost.length} lost, ${end.leftovers.length} left on terminal workflows`;
  return (failed ? fail : pass)(name, detail, {
    overdueAtEnd: end.overdue.slice(0, 20),
    overdueDuringRun: s.worst,
    lostAtEnd: end.lost.slice(0, 20),
    lostDuringRun: s.lost,
    leftoverOnTerminal: end.leftovers.slice(0, 20),
  });
}

async function readFinalAlarms(client: ShepherdClient, finals: Final[]): Promise<FinalAlarms> {
  const end: FinalAlarms = { overdue: [], leftovers: [], lost: [], maxOverdueMs: 0 };
  await mapPool(finals, 10, async (f: Final) => {
    const { value: dev } = await client.getDevWorkflow(f.id);
    if (!dev) return;
    f.dev = dev;
    const verdict = judgeAlarm(dev, Date.now());
    end.maxOverdueMs = Math.max(end.maxOverdueMs, verdict.overdueMs);
    if (verdict.overdueMs > OVERDUE_LIMIT_MS) end.overdue.push({ id: f.id, status: dev.status, alarmAt: dev.alarmAt, overdueMs: verdict.overdueMs });
    if (verdict.leftoverAlarm) end.leftovers.push({ id: f.id, status: dev.status, alarmAt: dev.alarmAt });
    if (verdict.lost) end.lost.push({ id: f.id, status: dev.status, nextDeadlineAt: dev.nextDeadlineAt });
  });
  return end;
}
