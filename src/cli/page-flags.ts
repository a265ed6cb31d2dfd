import { LIST_PAGE_DEFAULT, LIST_PAGE_MAX } from "../domain/contract";
import { stringFlag, type FlagSpec, type FlagValues } from "./command";
import { definedOnly } from "./flag-values";

/** `--limit` and `--cursor`, of every command that lists a page. */
export const PAGE_FLAGS: Record<string, FlagSpec> = {
  limit: { type: "string", value: "<n>", description: `entries per page (default ${LIST_PAGE_DEFAULT}, at most ${LIST_PAGE_MAX})` },
  cursor: { type: "string", value: "<cursor>", description: "the next page, as the previous one said" },
};

/** The page a list command asks for: only the flags given (the service checks their values and names a bad one). */
export function pageQuery(flags: FlagValues): Record<string, string> {
  return definedOnly({ limit: stringFlag(flags, "limit"), cursor: stringFlag(flags, "cursor") });
}
