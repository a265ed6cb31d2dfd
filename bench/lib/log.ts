// The bench's progress lines, stamped with the seconds since the run began.

/** When the run began (this module is loaded at the start of the run). */
export const began = Date.now();

export const log = (message: string): void => console.log(`[bench ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}`);
