// Preact through htm's tagged templates: components read like JSX without a compile step.
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);
