/**
 * The one line a program prints (then exits 2) when the address a config key names cannot be bound,
 * instead of Node's EADDRINUSE stack trace; null for any other error (a bug: let it throw).
 */
export function addressInUseProblem(err: unknown, key: string, host: string, port: number): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE')
    return `${key}: port ${port} on ${host} is already in use; stop the program that holds it or set ${key} to a free port`;
  if (code === 'EACCES')
    return `${key}: port ${port} on ${host} needs privileges this process lacks; use a port above 1023 or grant the capability`;
  if (code === 'EADDRNOTAVAIL')
    return `${key}: address ${host} is not one of this machine's; set the host next to ${key} to an address it has, or 0.0.0.0`;
  return null;
}

/** A configuration the program found unusable while starting: its message is the one line to print (exit 2). */
export class ConfigProblem extends Error {
  readonly code = 'CONFIG_PROBLEM';
}

/**
 * Runs `listen` for the address the config key `key` names; an address in use (or not bindable)
 * becomes a {@link ConfigProblem} naming that key and port, anything else is rethrown as it is.
 */
export async function listenAs<T>(
  key: string,
  at: { host: string; port: number },
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (e) {
    const line = addressInUseProblem(e, key, at.host, at.port);
    throw line ? new ConfigProblem(line) : e;
  }
}
