/**
 * What the package ships of the repository's text: the example configs without the lines that are
 * true only in a checkout, and the configuration reference INSTALL.md names (issue 30: a packaged
 * example pointed at simulation/bin, and INSTALL.md at a docs/configuration.md the tarball lacked).
 */

/** Marks an example's comment line that holds only in a Driftline checkout (the simulator, say). */
export const CHECKOUT_ONLY = '(checkout only)';

/** An example config as the package ships it: every line marked {@link CHECKOUT_ONLY} left out. */
export function packagedExample(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.includes(CHECKOUT_ONLY))
    .join('\n');
}

/** Files of the checkout the package ships as they are (relative paths, the same in both). */
export const SHIPPED_DOCS = ['docs/configuration.md'] as const;
