/**
 * `freshet erase-user <id>` and `freshet export-user <id>`: the personal-data use cases (src/use-cases/personal-data.ts)
 * from the command line — through the running server when there is one (`--url`, or the embedded server named
 * by `<dataDir>/server.json`: `DELETE /v1/users/:id`, `GET /v1/users/:id/export`), else on the configured stores
 * opened in this process (src/cli/import.ts `writeTarget`, as the imports choose).
 */
import { openDirect } from './open-direct.js';
import { loadConfig } from '../compose/config.js';
import { FreshetClient } from '../client/index.js';
import type { ItemsChoice } from '../use-cases/personal-data.js';
import { writeTarget } from './import.js';

/** Erases `userId`; prints the answer (what was removed, with counts) as JSON. */
export async function runEraseUser(userId: string, items: ItemsChoice, url?: string): Promise<void> {
  const config = loadConfig();
  const t = await writeTarget(config, url ? 'http' : 'auto', url);
  if (t.kind === 'http') {
    const erased = await new FreshetClient({ baseUrl: t.url, serviceKey: t.key }).users.erase(userId, { items });
    console.log(JSON.stringify(erased));
    return;
  }
  const f = await openDirect(config);
  try {
    console.log(JSON.stringify(await f.useCases.eraseUser(userId, items, f.clock.now())));
  } finally {
    await f.close();
  }
}

/** Writes the export of `userId` to standard output (`freshet export-user <id> > file.json`). */
export async function runExportUser(userId: string, url?: string): Promise<void> {
  const config = loadConfig();
  const t = await writeTarget(config, url ? 'http' : 'auto', url);
  if (t.kind === 'http') {
    const doc = await new FreshetClient({ baseUrl: t.url, serviceKey: t.key, timeoutMs: 300_000 }).users.export(userId);
    process.stdout.write(`${JSON.stringify(doc)}\n`);
    return;
  }
  const f = await openDirect(config);
  try {
    for await (const chunk of f.useCases.exportUser(userId, f.clock.now())) {
      if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
    }
    process.stdout.write('\n');
  } finally {
    await f.close();
  }
}
