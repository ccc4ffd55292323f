import { LogLines } from '../../test/support/log-lines.js';
import { escapeControl, textDestination, textLine } from './text-lines.js';

describe('textLine', () => {
  it('writes time, level, [context] message, then the other fields as key=value', () => {
    const record = JSON.stringify({
      level: 'log',
      time: '2026-11-23T16:01:07.412Z',
      requestId: 'req-1',
      context: 'SoldAnswers',
      payer: '0xabc',
      amount: '2000',
      message: 'payment settled',
    });
    expect(textLine(record)).toBe(
      '2026-11-23T16:01:07.412Z LOG     [SoldAnswers] payment settled requestId=req-1 payer=0xabc amount=2000',
    );
  });

  it('writes numbers, booleans and objects as JSON, text with spaces or quotes quoted', () => {
    const record = JSON.stringify({
      level: 'warn',
      time: 't',
      status: 503,
      ok: false,
      detail: 'two words',
      quoted: 'say "hi"',
      nested: { a: [1, 'b'] },
      message: 'request completed',
    });
    expect(textLine(record)).toBe(
      't WARN    request completed status=503 ok=false detail="two words" quoted="say \\"hi\\"" nested={"a":[1,"b"]}',
    );
  });

  it('cannot be made to start a line of its own by a message, a context or a field', () => {
    const forged =
      'boom\n[Nest] 4242  - LOG [SoldAnswers] payment settled FORGED\u001b[31m\u2028x\u0085';
    const line = textLine(
      JSON.stringify({
        level: 'error',
        time: 't',
        context: 'X\rY',
        stack: forged,
        message: forged,
      }),
    );
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(line).toBe(
      't ERROR   [X\\rY] boom\\n[Nest] 4242  - LOG [SoldAnswers] payment settled FORGED\\u001b[31m\\u2028x\\u0085' +
        ' stack="boom\\n[Nest] 4242  - LOG [SoldAnswers] payment settled FORGED\\u001b[31m\\u2028x\\u0085"',
    );
  });

  it('writes a record it cannot read as one escaped line', () => {
    expect(textLine('not json\nsecond\n')).toBe('not json\\nsecond');
  });
});

describe('escapeControl', () => {
  it('leaves printable text as it is', () => {
    expect(escapeControl('plain text: ok — é ✓')).toBe('plain text: ok — é ✓');
  });
});

describe('textDestination', () => {
  it('writes one text line per record', () => {
    const out = new LogLines();
    const destination = textDestination(out);
    destination.write(`${JSON.stringify({ level: 'log', time: 't', message: 'a' })}\n`);
    destination.write(`${JSON.stringify({ level: 'debug', time: 't', message: 'b\nc' })}\n`);
    expect(out.lines).toEqual(['t LOG     a', 't DEBUG   b\\nc']);
  });
});
