/**
 * The slice of a pino logger the agent's parts use: one JSON line per call on stderr in production
 * (`edge-agent run`), silent in tests. Parts log rule names and reasons, never secret values.
 */
export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}
