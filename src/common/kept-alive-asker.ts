import { Agent, get } from 'node:http';

export interface AskPlan {
  readonly port: number;
  /** The request target each request names, e.g. `/v1/assets`. */
  readonly path: string;
  /** Requests in all, shared out over the connections. */
  readonly requests: number;
  readonly connections: number;
  /** Gives up when this many milliseconds have passed; the answers so far are counted. */
  readonly timeoutMs: number;
}

/**
 * Sends `plan.requests` plain GETs to a loopback port with Node's own HTTP client, over at most
 * `plan.connections` kept-alive connections, one request at a time on each. Resolves with how
 * many 200s came back. A connection whose request fails or is answered anything but 200 asks
 * nothing more; at the time-out every request in flight is abandoned. Never rejects.
 */
export async function askOverKeptAliveConnections(plan: AskPlan): Promise<number> {
  if (plan.requests <= 0) return 0;
  const agent = new Agent({ keepAlive: true, maxSockets: plan.connections });
  const signal = AbortSignal.timeout(plan.timeoutMs);
  let unsent = plan.requests;
  let answered = 0;
  const askInTurn = async (): Promise<void> => {
    while (unsent > 0 && !signal.aborted) {
      unsent -= 1;
      if (!(await answeredOk(plan, agent, signal))) return;
      answered += 1;
    }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(plan.connections, plan.requests)) }, askInTurn),
    );
  } finally {
    agent.destroy();
  }
  return answered;
}

/** One GET of `plan.path`: true when it was answered 200 and the answer was read whole. */
function answeredOk(plan: AskPlan, agent: Agent, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port: plan.port, path: plan.path, agent, signal };
    try {
      get(options, (response) => {
        response.resume();
        response.on('end', () => {
          resolve(response.statusCode === 200);
        });
        // cut off before its end (time-out, reset): not answered
        response.on('close', () => {
          resolve(false);
        });
      }).on('error', () => {
        resolve(false);
      });
    } catch {
      resolve(false); // a request Node refuses to build (a path with spaces, say)
    }
  });
}
