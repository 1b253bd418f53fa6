/** HCL the contract's real-binary cases plan, with the Driftline test provider (simulation/provider). */

export const PROVIDER = `terraform {
  required_providers {
    driftline = { source = "driftline/testobj", version = "0.1.0" }
  }
}
`;

/** A driftline_object; `secret` carries a value that must never leave the site. */
export function obj(label: string, o: { name?: string; shape?: string; extra?: string } = {}): string {
  return `resource "driftline_object" "${label}" {
  name   = "${o.name ?? label}"
  value  = "v1"
  secret = "contract-secret-${o.name ?? label}"
  shape  = "${o.shape ?? 'round'}"
${o.extra ?? ''}}
`;
}

export const SECRET = 'contract-secret-';

/** The fake's scenario: one step repeated (`runs`), then what follows. */
export function scenario(...steps: string[]): string {
  return `seed: 7\nloop: false\nsteps:\n${steps.map((s) => `  - ${s}\n`).join('')}`;
}
