// What the CLI's tests run against: the service and the example remote on the CLI tests' ports (8820–8829).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalService } from "../../../scripts/lib/local-service.ts";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
/** Nothing listens here: the "cannot reach the service" case. */
export const UNREACHABLE_URL = "http://127.0.0.1:8828";
export const TENANT_TOKEN = "cli-token";

export interface Service {
  url: string;
  remoteUrl: string;
  stop(): Promise<void>;
}

export function startService(): Promise<Service> {
  return startLocalService({ tool: "the CLI tests", ports: { base: 8820, range: [8820, 8829] }, tenant: "cli", token: TENANT_TOKEN });
}
