// Starts what the browser tests look at, once per run: the service and the example remote on the browser
// tests' ports (8840–8849).
import type { TestProject } from "vitest/node";
import { startLocalService } from "../../../scripts/lib/local-service.ts";

export const BROWSER_TOKEN = "browser-token";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    remoteUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const service = await startLocalService({ tool: "the browser tests", ports: { base: 8840, range: [8840, 8849] }, tenant: "browser", token: BROWSER_TOKEN });
  project.provide("baseUrl", service.url);
  project.provide("remoteUrl", service.remoteUrl);
  return () => service.stop();
}
