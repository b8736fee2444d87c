/**
 * The service key and the token secret when the environment does not set them
 * (`FRESHET_SERVICE_KEY`, `FRESHET_SECRET`): kept in `<dataDir>/secrets.json` (mode 0600). What
 * serves or opens the stores generates them there on first use ({@link ensureSecrets}); a command that
 * only talks to a server reads them and writes nothing ({@link readSecrets}). docs/operations.md "Secrets".
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';

/** Where generated secrets live inside the data folder. */
export function secretsPath(config: Config): string {
  return join(config.dataDir, 'secrets.json');
}

/** The pair stored in `<dataDir>/secrets.json` (either may be missing), or nothing when there is no file. */
function storedSecrets(path: string): { serviceKey?: string; secret?: string } {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { serviceKey?: string; secret?: string }) : {};
}

/**
 * Fills a missing service key or token secret: from `<dataDir>/secrets.json` when present, else
 * generated (32 random bytes each) and written there with mode 0600. For what serves or opens the
 * stores (and `freshet token`, which signs with the secret the server will read); a command that only
 * talks to a server uses {@link readSecrets}.
 * @returns the config with both set, and the path when something was generated (to be logged).
 */
export function ensureSecrets(config: Config): { config: Config; generatedAt?: string } {
  if (config.serviceKey && config.secret) return { config };
  const path = secretsPath(config);
  const stored = storedSecrets(path);
  const next = {
    serviceKey: stored.serviceKey ?? `fsk_${randomBytes(24).toString('base64url')}`,
    secret: stored.secret ?? randomBytes(32).toString('base64url'),
  };
  const generated = !stored.serviceKey || !stored.secret;
  if (generated) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    config: { ...config, serviceKey: config.serviceKey ?? next.serviceKey, secret: config.secret ?? next.secret },
    generatedAt: generated ? path : undefined,
  };
}

/**
 * Fills a missing service key or token secret from `<dataDir>/secrets.json` when that file exists, and
 * never writes anything: for commands that only talk to a server (the key is the server's; a newly
 * generated one could only be refused, and would leave a stray secrets file behind).
 * @returns the config, with `serviceKey` / `secret` still undefined when neither the environment nor
 *   the file has them.
 */
export function readSecrets(config: Config): Config {
  if (config.serviceKey && config.secret) return config;
  const stored = storedSecrets(secretsPath(config));
  return { ...config, serviceKey: config.serviceKey ?? stored.serviceKey, secret: config.secret ?? stored.secret };
}
