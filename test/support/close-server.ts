import type { Server, ServerResponse } from 'node:http';

/** Closes a loopback test server now: responses it is holding open are cut, not waited for. */
export async function closeServer(
  server: Server,
  hanging: Iterable<ServerResponse>,
): Promise<void> {
  for (const response of hanging) response.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}
