import { collectSettings } from '../config/settings.js';
import { ATTESTATION_SETTINGS } from './attestation.settings.js';

const KEY = `0x${'ab'.repeat(32)}`;

function read(env: Record<string, string>) {
  const { settings, problems } = collectSettings(env, { attestation: ATTESTATION_SETTINGS });
  return { config: settings.attestation, problems };
}

describe('ATTESTATION_SETTINGS', () => {
  it('signs with the configured key', () => {
    expect(read({ ATTESTATION_PRIVATE_KEY: KEY })).toEqual({
      config: { enabled: true, privateKey: KEY },
      problems: [],
    });
  });

  it('leaves the key to the process outside production', () => {
    expect(read({}).config).toEqual({ enabled: true, privateKey: undefined });
  });

  it('refuses a production start without the key, naming it', () => {
    const { config, problems } = read({ NODE_ENV: 'production' });
    expect(config).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ATTESTATION_PRIVATE_KEY is required with NODE_ENV=production/);
    expect(problems[0]).toContain('ATTESTATION=off');
  });

  it('needs no key when switched off', () => {
    expect(read({ NODE_ENV: 'production', ATTESTATION: 'off' })).toEqual({
      config: { enabled: false },
      problems: [],
    });
  });

  it('never repeats a malformed key', () => {
    const { problems } = read({ ATTESTATION_PRIVATE_KEY: '0xsecret' });
    expect(problems).toEqual(['ATTESTATION_PRIVATE_KEY must be 0x and 64 hex digits']);
  });

  it('refuses an unknown mode', () => {
    expect(read({ ATTESTATION: 'maybe' }).problems[0]).toContain('ATTESTATION');
  });
});
