/** Reached when a wait gave up: the value `withDeadline` resolves to past its deadline. */
export const DEADLINE = Symbol('deadline');

/**
 * Runs `work`, or stops waiting for it after `ms` or when `stop` aborts, whichever comes first
 * (it keeps running; its failure is then ignored).
 */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  stop?: AbortSignal,
): Promise<T | typeof DEADLINE> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<typeof DEADLINE>((resolve) => {
    timer = setTimeout(() => {
      resolve(DEADLINE);
    }, ms);
    onAbort = () => {
      resolve(DEADLINE);
    };
    if (stop?.aborted === true) onAbort();
    else stop?.addEventListener('abort', onAbort, { once: true });
  });
  work.catch(() => {
    // given up on at the deadline: its late failure is nobody's answer
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) stop?.removeEventListener('abort', onAbort);
  }
}
