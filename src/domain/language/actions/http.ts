/** The `http` action: a request to the remote, which answers, or accepts (202) and reports through its task token. */
import { z } from "zod";
import { PayloadSchema } from "../primitives";

const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export const HttpActionSchema = z.strictObject({
  type: z.literal("http"),
  url: z.string().min(1).max(2048),
  method: z.enum(HTTP_METHODS).optional(),
  /** Names are HTTP tokens and values have no control characters (no CR/LF injection): what `fetch` can send. */
  headers: z
    .record(
      z.string().min(1).max(256).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name"),
      z.string().max(8192).regex(/^[\t\x20-\x7e\x80-\xff]*$/, "must be a header value without control characters"),
    )
    .optional(),
  body: PayloadSchema.optional(),
});

export type HttpAction = z.infer<typeof HttpActionSchema>;
