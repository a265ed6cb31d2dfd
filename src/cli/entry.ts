// The bundle's entry (scripts/build-cli.ts): `shepherd …` as run by bin/shepherd.mjs.
import { main } from "./main";

// `shepherd list | head` closes the pipe early: that ends the output, it is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

// exitCode rather than exit(): output still buffered for a pipe is written before Node ends.
process.exitCode = await main({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr });
