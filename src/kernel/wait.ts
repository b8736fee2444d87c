/**
 * Bounded waits: wait for background work (a restore, a catch-up, a store reading) at most a given time,
 * and go on while it finishes on its own — start-up and scrapes never hang on a stalled store.
 */

/**
 * Waits for `work` at most `ms` (the timer never keeps a process alive); `work` goes on past it. Never
 * throws: `work` must not reject (catch its failure first).
 */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
  await Promise.race([work, waited]);
  clearTimeout(timer);
}
