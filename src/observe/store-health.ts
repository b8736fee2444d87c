/**
 * Redis readiness for `/readyz`: can Freshet WRITE to Redis now?
 *
 * `PING` is not enough: Redis answers it while refusing every write — at `maxmemory` under the
 * `noeviction` policy (`OOM command not allowed`), after a failed save (`MISCONF`), on a
 * replica promoted away from (`READONLY`). Nearly every Freshet request writes (views, seen marks,
 * page caches, fan-out), so the probe is one tiny write: `SET <prefix>ready:{probe} <ms> PX 10000`
 * (src/kernel/redis/keys.ts; 13 bytes that expire by themselves, so probes never accumulate). On a Cluster it writes
 * once per master, under a hash tag chosen to land in a slot that master owns: one node out of
 * memory makes the service not ready, as a standalone server would.
 *
 * Why not compare `INFO memory`'s `used_memory` with `maxmemory`: under an eviction policy
 * (`allkeys-lru`, the usual cache setting) a full Redis is healthy — writes evict and succeed — so
 * the ratio would report a working server as down, and it says nothing about MISCONF, READONLY,
 * LOADING or a stalled server. The write answers exactly what requests will meet, for ~30 µs.
 *
 * The probe has its own deadline (the app passes `FRESHET_REDIS_TIMEOUT_MS`; {@link PROBE_TIMEOUT_MS}
 * by default): a stalled server makes it answer "not ready" within that time instead of hanging the
 * readiness check.
 */
import { Cluster } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import type { RedisClient } from '../kernel/redis/client.js';
import type { Keys } from '../kernel/redis/keys.js';
import { outageReason } from '../kernel/redis/errors.js';

/** Time to live of a probe key (ms). */
export const PROBE_TTL_MS = 10_000;
/** How long the probe waits for every write before answering "not ready" (ms). */
export const PROBE_TIMEOUT_MS = 1_000;

/** What the probe found: `reason` says why Redis is not ready (null when it is). */
export interface RedisReadiness {
  ready: boolean;
  reason: string | null;
}

/**
 * Writes one probe key per master (see the module doc).
 * @returns `{ready: true}` when every write succeeded within `timeoutMs`; else `ready: false` and
 *   a reason (`Redis unavailable: out of memory (OOM)`, `no answer within 1000 ms`). Never throws.
 */
export async function probeRedis(
  client: RedisClient,
  keys: Keys,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<RedisReadiness> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<RedisReadiness>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, reason: `Redis unavailable: no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const probe = (async (): Promise<RedisReadiness> => {
    try {
      const value = String(Date.now());
      await Promise.all(probeKeys(client, keys).map((key) => client.set(key, value, 'PX', PROBE_TTL_MS)));
      return { ready: true, reason: null };
    } catch (err) {
      const reason = outageReason(err);
      return {
        ready: false,
        reason: reason ? `Redis unavailable: ${reason}` : `Redis refused the probe: ${(err as Error).message}`,
      };
    }
  })();
  try {
    return await Promise.race([probe, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Hash tags found per master so far (the search below runs once per master and topology). */
const tagCache = new Map<string, string>();

/**
 * The probe keys: one on a standalone server; on a Cluster one per master known from the slot map
 * (none yet known: one key, which ioredis routes once the map arrives).
 */
function probeKeys(client: RedisClient, keys: Keys): string[] {
  if (!(client instanceof Cluster)) return [keys.readyProbe()];
  const owners = new Set<string>();
  for (const nodes of client.slots) if (nodes?.[0]) owners.add(nodes[0]);
  if (owners.size === 0) return [keys.readyProbe()];
  const out: string[] = [];
  for (const owner of owners) {
    const tag = tagFor(client, owner);
    if (tag) out.push(keys.readyProbe(tag));
  }
  return out;
}

/** A hash tag `ready.<i>` whose slot `owner` holds (smallest i), or null when none within 100k tries. */
function tagFor(client: Cluster, owner: string): string | null {
  const cached = tagCache.get(owner);
  if (cached && client.slots[calculateSlot(cached)]?.[0] === owner) return cached;
  for (let i = 0; i < 100_000; i++) {
    const tag = `ready.${i}`;
    if (client.slots[calculateSlot(tag)]?.[0] === owner) {
      tagCache.set(owner, tag);
      return tag;
    }
  }
  return null;
}
