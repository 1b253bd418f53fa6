import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const fixturePath = (rel: string): string =>
  fileURLToPath(new URL(`./fixtures/${rel}`, import.meta.url));
export const fixtureText = (rel: string): string => readFileSync(fixturePath(rel), 'utf8');
export const fixtureJson = (rel: string): unknown => JSON.parse(fixtureText(rel));

/** Every plan JSON fixture (`plans/…`, `terraform-json/…`), as paths relative to the fixtures folder. */
export const fixturePlanFiles = (): string[] =>
  ['plans', 'terraform-json'].flatMap((dir) =>
    readdirSync(fixturePath(dir))
      .filter((f) => f.endsWith('.json'))
      .map((f) => `${dir}/${f}`),
  );

/** Every value planted as a secret in `plans/*.json`: none may appear in any summary. */
export const PLANTED_SECRETS = [
  'Vault-Pa55word-q7Zr',
  'old-Pa55word-k2Lm',
  'tok-billing-8842-secret',
  'tok-search-1177-secret',
  'db-prod.internal.example',
  'db-old.internal.example',
  'inline-boot-secret-55',
  'retired-api-key-77x',
  'k8s-token-old-3131',
  'k8s-token-new-4242',
  'LEAKY_KEY_NAME',
  'API_TOKEN',
  'provider-literal-creds-0042',
  'default-admin-token-9q',
  'module-psk-literal-31x',
  'legacy-Db-Pass-2019',
  'legacy-conn-string',
  'legacy-provider-key-0012',
  'svc-token-0.15-abcd',
  'BEGIN PRIVATE KEY',
  'MC4CAQAwBQYDK2VwBCIEIOBmB0G3',
];
