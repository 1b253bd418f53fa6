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
