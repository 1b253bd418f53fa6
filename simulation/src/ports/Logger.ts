/** The slice of pino the simulation uses; `pino()` satisfies it, tests pass `silentLogger`. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const nothing = () => {};
export const silentLogger: Logger = { debug: nothing, info: nothing, warn: nothing, error: nothing };
