// The requests a fake remote keeps open on purpose: held until the caller gives up (a hang), or paused for a
// while before it answers (a slow remote). All of them are known, so closing the server can end them first.
/* global setTimeout, clearTimeout */
import type { ServerResponse } from "node:http";

export interface HeldRequests {
  /** Keeps `res` open until the caller closes it, or destroys it after ms at most. */
  hold(res: ServerResponse, ms?: number): void;
  /** Waits ms while holding `res`; false when the caller closed it meanwhile. */
  pause(res: ServerResponse, ms: number): Promise<boolean>;
  count(): number;
  /** Ends every held request, so the server can stop. */
  destroyAll(): void;
}

export function heldRequests(): HeldRequests {
  const held = new Set<ServerResponse>();
  return {
    hold(res, ms) {
      held.add(res);
      const timer = ms === undefined ? undefined : setTimeout(() => res.destroy(), ms);
      res.once("close", () => {
        clearTimeout(timer);
        held.delete(res);
      });
    },
    pause(res, ms) {
      held.add(res);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          res.off("close", closed);
          held.delete(res);
          resolve(!res.destroyed);
        }, ms);
        const closed = (): void => {
          clearTimeout(timer);
          held.delete(res);
          resolve(false);
        };
        res.once("close", closed);
      });
    },
    count: () => held.size,
    destroyAll() {
      for (const res of held) res.destroy();
    },
  };
}
