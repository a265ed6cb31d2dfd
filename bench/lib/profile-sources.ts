// A profile taken under `wrangler dev` names positions in the bundle wrangler built: the module `index.js`,
// which lives in the app's .wrangler/tmp/dev-*/ while wrangler dev runs (it is deleted when it stops, so the
// mapping is done right after the profile is taken). This maps every call frame back to the source it came
// from through the bundle's source map, so the saved .cpuprofile and its summary say
// `src/workflow/store.ts:123`. Paths come out relative to the app's directory, or from `node_modules/` on for
// dependencies (the snapshot links them, so esbuild may have seen their real path).
/* global Buffer */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { SourceMap } from "node:module";
import type { SourceMapPayload } from "node:module";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isRecord } from "../../scripts/lib/json.ts";
import type { CallFrame, ProfileNode } from "./cpu-profile.ts";

/** Where wrangler dev puts its bundles, under the app's directory. */
const BUNDLE_DIRS = join(".wrangler", "tmp");

/**
 * The bundle's file for a frame's url: a file: URL or absolute path that exists, or a bare module name
 * found in the newest of the app's bundle directories; undefined for the runtime's own modules.
 */
function bundlePath(url: string, appDir: string): string | undefined {
  if (!url || (/^[a-z][\w+.-]*:/i.test(url) && !url.startsWith("file:"))) return undefined;
  if (url.startsWith("file:")) return existsSync(fileURLToPath(url)) ? fileURLToPath(url) : undefined;
  if (isAbsolute(url)) return existsSync(url) ? url : undefined;
  let dirs: string[];
  try {
    dirs = readdirSync(join(appDir, BUNDLE_DIRS)).map((name) => join(appDir, BUNDLE_DIRS, name));
  } catch {
    return undefined;
  }
  const found = dirs.map((dir) => join(dir, url)).filter((path) => existsSync(path));
  return found.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** A bundle's source map, with what its sources are relative to. */
interface LoadedSourceMap {
  map: SourceMap;
  base: string;
  sourceRoot: string;
}

/** The parsed source map of a bundle: its `sourceMappingURL` comment, else `<bundle>.map`; undefined without one. */
function loadSourceMap(bundle: string): LoadedSourceMap | undefined {
  const text = readFileSync(bundle, "utf8");
  const comment = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text.slice(-1000))?.[1];
  let mapFile: string;
  let payload: SourceMapPayload;
  if (comment?.startsWith("data:")) {
    payload = sourceMapPayload(Buffer.from(comment.slice(comment.indexOf(",") + 1), "base64").toString("utf8"), bundle);
    mapFile = bundle;
  } else {
    mapFile = comment ? resolve(dirname(bundle), comment) : `${bundle}.map`;
    if (!existsSync(mapFile)) return undefined;
    payload = sourceMapPayload(readFileSync(mapFile, "utf8"), mapFile);
  }
  return { map: new SourceMap(payload), base: dirname(mapFile), sourceRoot: payload.sourceRoot ?? "" };
}

/** A source map's JSON; throws, naming where it came from, when it is none. */
function sourceMapPayload(json: string, where: string): SourceMapPayload {
  const payload: unknown = JSON.parse(json);
  if (!isRecord(payload) || typeof payload.mappings !== "string" || !Array.isArray(payload.sources)) throw new Error(`${where}: not a source map`);
  return payload as unknown as SourceMapPayload;
}

/** A source path as the summary shows it: `node_modules/…` for a dependency, else relative to the app. */
export function displayPath(absolutePath: string, appDir: string): string {
  const normalised = absolutePath.replaceAll("\\", "/");
  const modules = normalised.lastIndexOf("/node_modules/");
  if (modules !== -1) return normalised.slice(modules + 1);
  const fromApp = relative(appDir, absolutePath).replaceAll("\\", "/");
  return fromApp.startsWith("..") ? normalised : fromApp;
}

/**
 * Rewrites the profile's call frames in place to their original sources (url, lineNumber, columnNumber,
 * all 0-based as in the protocol); frames without a mapping (runtime built-ins, natives) stay as they are.
 * Returns { bundles, mapped, unmapped }: how many bundles had a map and how many frames were moved.
 */
export function mapProfileToSources(profile: { nodes?: ProfileNode[] }, { appDir }: { appDir: string }): { bundles: number; mapped: number; unmapped: number } {
  const bundles = new Map<string, string | undefined>();
  const maps = new Map<string, LoadedSourceMap | undefined>();
  const stats = { bundles: 0, mapped: 0, unmapped: 0 };
  for (const node of profile.nodes ?? []) {
    const frame = node.callFrame;
    if (!bundles.has(frame.url)) bundles.set(frame.url, bundlePath(frame.url, appDir));
    const bundle = bundles.get(frame.url);
    if (!bundle) continue;
    if (!maps.has(bundle)) {
      maps.set(bundle, loadSourceMap(bundle));
      if (maps.get(bundle)) stats.bundles++;
    }
    const sourceMap = maps.get(bundle);
    if (sourceMap && moveToSource(frame, sourceMap, appDir)) stats.mapped++;
    else stats.unmapped++;
  }
  return stats;
}

/** Points the frame at its original source; false when the map has no source for its position. */
function moveToSource(frame: CallFrame, { map, base, sourceRoot }: LoadedSourceMap, appDir: string): boolean {
  const entry = map.findEntry(Math.max(0, frame.lineNumber), Math.max(0, frame.columnNumber));
  if (!("originalSource" in entry) || !entry.originalSource) return false;
  const source = entry.originalSource.startsWith("file:") ? fileURLToPath(entry.originalSource) : resolve(base, sourceRoot, entry.originalSource);
  frame.url = displayPath(source, appDir);
  frame.lineNumber = entry.originalLine;
  frame.columnNumber = entry.originalColumn;
  return true;
}
