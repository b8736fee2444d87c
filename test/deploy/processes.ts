/**
 * Process and HTTP helpers of the deployment checks (test/deploy/): stop a child started with
 * `detached: true` together with everything it started (its process group, by the child's own pid), and
 * poll a URL until it answers 200 — bounded, no fixed sleep.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether `child` has exited. */
export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Sends `signal` to the process group of `child` (spawned with `detached: true`, so the group is the
 * child's pid and holds only what it started) — or, with `only: 'main'`, to the child alone, as `docker
 * stop`, Kubernetes and systemd's `KillMode=mixed` do — and waits for the child to exit; SIGKILLs the
 * group after `graceMs`. Resolves with the child's exit code and signal.
 */
export async function stopGroup(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs = 10_000,
  only: 'group' | 'main' = 'group',
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const done = exited(child) ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = (s: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, s);
    } catch {
      // the group is gone already
    }
  };
  if (only === 'main') child.kill(signal);
  else kill(signal);
  const timer = setTimeout(() => kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
  kill('SIGKILL'); // whatever of the group outlived the child
  return { code: child.exitCode, signal: child.signalCode };
}

/**
 * GETs `url` every 100 ms until it answers 200 with a JSON body, or throws after `timeoutMs` with the
 * last answer or error.
 */
export async function untilOk(url: string, timeoutMs: number): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      const body = await res.text();
      if (res.status === 200) return JSON.parse(body);
      last = `${res.status} ${body.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms: ${last}`);
    await sleep(100);
  }
}
