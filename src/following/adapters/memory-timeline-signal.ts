/**
 * In-process TimelineSignal (the embedded default): the worker runs in the server's process, so a
 * signal is a direct call of each listener.
 */
import type { TimelineSignal } from '../timeline-signal.js';

export class MemoryTimelineSignal implements TimelineSignal {
  private readonly listeners = new Set<(tid: number) => void>();

  publish(tid: number): void {
    for (const l of this.listeners) l(tid);
  }

  subscribe(listener: (tid: number) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
