/** Longest remote text kept: enough to diagnose, too short to flood a log or a response. */
export const MAX_REMOTE_TEXT_LENGTH = 200;

/**
 * Text that came from a remote (a venue, the chain's RPC, a facilitator, Redis), as it may be
 * logged or shown: every URL replaced by `<url>` (an RPC URL is a secret: providers put keys in
 * its path or host), no control characters or escape sequences (they would forge log lines or
 * colour a terminal), one line, capped in length. An error gives its message (the first of an
 * AggregateError's); duck-typed, since errors from Node's modules come from another realm under
 * Jest.
 */
export function remoteText(error: unknown): string {
  const printable = messageOf(error)
    // ANSI escape sequences first, then any other control character
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi, '<url>')
    .replace(/ {2,}/g, ' ')
    .trim();
  return printable.length <= MAX_REMOTE_TEXT_LENGTH
    ? printable
    : `${printable.slice(0, MAX_REMOTE_TEXT_LENGTH - 1)}…`;
}

/** An error's message; viem's own errors as their short message and the remote's details. */
function messageOf(error: unknown): string {
  if (typeof error === 'string') return error;
  if (typeof error !== 'object' || error === null) return String(error);
  const { errors, message, shortMessage, details } = error as {
    errors?: unknown;
    message?: unknown;
    shortMessage?: unknown;
    details?: unknown;
  };
  if (Array.isArray(errors) && errors.length > 0) return messageOf(errors[0]);
  if (typeof shortMessage === 'string' && shortMessage !== '') {
    return typeof details === 'string' && details !== ''
      ? `${shortMessage} ${details}`
      : shortMessage;
  }
  return typeof message === 'string' && message !== '' ? message : 'unknown error';
}
