/**
 * Tags the agent puts where a variable's value stood in an address (decision 210):
 * `aws_iam_user.u["user-⟨db_password:3f9a1c⟩"]`. The hex is a keyed fingerprint made at the site: equal
 * values show equal tags, and nothing here can turn one back into the value.
 */
const TAG = /\u27E8([A-Za-z_][A-Za-z0-9_-]{0,63}):([0-9a-f]{6})\u27E9/g;

/** The variables whose values are masked in `address`, each once, in order of appearance. */
export function maskedVariables(address: string): string[] {
  if (!address.includes('\u27E8')) return [];
  return [...new Set([...address.matchAll(TAG)].map((m) => m[1] as string))];
}

/** What a hover over a masked address says, or undefined when nothing in it is masked. */
export function maskedTitle(address: string): string | undefined {
  const vars = maskedVariables(address);
  if (vars.length === 0) return undefined;
  const names = vars.map((v) => `var.${v}`).join(', ');
  return `Masked at the site: ⟨name:tag⟩ stands for the value of ${names}, which may be a secret. The tag is a keyed fingerprint: the same value shows the same tag in every run. To show the value, the site's operator names the variable in redaction.publicVariables.`;
}
