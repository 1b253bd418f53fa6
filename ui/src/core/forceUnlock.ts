import type { StateLock } from '@driftline/protocol';

// Characters a POSIX shell reads literally outside quotes.
const PLAIN = /^[A-Za-z0-9_./@%+=:,-]+$/;

/** `v` as one shell word: as it is when plain, else single-quoted (a `'` inside written `'\''`). */
export function shellWord(v: string): string {
  return PLAIN.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`;
}

/**
 * The command that releases a held state lock at the site (docs/decisions/555-stuck-lock-stays-stuck.md):
 * `terraform force-unlock <id>`, with `-chdir=` the component's working directory and `TF_WORKSPACE` the
 * environment's workspace when the agent said them. `-chdir` goes before the subcommand, as Terraform
 * requires of global options.
 */
export function forceUnlockCommand(lock: StateLock): string {
  return [
    ...(lock.workspace ? [`TF_WORKSPACE=${shellWord(lock.workspace)}`] : []),
    'terraform',
    ...(lock.dir ? [`-chdir=${shellWord(lock.dir)}`] : []),
    'force-unlock',
    shellWord(lock.id),
  ].join(' ');
}
