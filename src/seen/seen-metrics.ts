/**
 * The Prometheus metrics of the seen-filter checkpoints and restores (docs/operations.md "Metrics"):
 * checkpoints by result, bytes of journalled hash pairs written, the time of the last complete one, and
 * restores by kind (shard, day, reader).
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/** The metrics a checkpointer updates. */
export type CheckpointMetrics = ReturnType<typeof checkpointMetrics>;

/** The checkpoint metrics (docs/operations.md "Metrics"), registered in `registry`. */
export function checkpointMetrics(registry: Registry) {
  const registers = [registry];
  const runs = new Counter({
    name: 'freshet_seen_checkpoints_total',
    help: 'Checkpoints of the Redis seen filters to PostgreSQL',
    labelNames: ['result'],
    registers,
  });
  const bytes = new Counter({
    name: 'freshet_seen_checkpoint_bytes_total',
    help: 'Bytes of journalled hash pairs written by seen-filter checkpoints',
    registers,
  });
  const last = new Gauge({
    name: 'freshet_seen_last_checkpoint_timestamp_seconds',
    help: 'Time of the last complete seen-filter checkpoint (epoch s)',
    registers,
  });
  const restores = new Counter({
    name: 'freshet_seen_restores_total',
    help: 'Seen filters restored into Redis from their checkpoints, by kind (shard, day, reader)',
    labelNames: ['kind'],
    registers,
  });
  return {
    restores,
    done(ok: boolean, n: number, atMs: number) {
      runs.inc({ result: ok ? 'ok' : 'failed' });
      if (n > 0) bytes.inc(n);
      if (ok) last.set(Math.floor(atMs / 1000));
    },
  };
}
