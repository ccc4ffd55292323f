/**
 * What `docker compose` makes of docker-compose.yml and the Dockerfile for one service: its
 * environment, with the compose file's `${VAR}`, `${VAR:-default}` and `${VAR:?message}`
 * interpolated as compose does, over the runtime image's `ENV` lines. Lets a test run the
 * replicas as compose would without a Docker engine.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from './project-root.js';

type Variables = Readonly<Record<string, string | undefined>>;

interface ComposeService {
  readonly environment?: Record<string, string | number | boolean | null>;
  readonly env_file?: readonly (string | { path: string; required?: boolean })[];
  readonly ports?: readonly string[];
}

export interface ComposeFile {
  readonly services: Readonly<Record<string, ComposeService>>;
}

/** docker-compose.yml as compose reads it (YAML merge keys `<<` resolved). */
export function readComposeFile(): ComposeFile {
  const text = readFileSync(path.join(projectRoot(), 'docker-compose.yml'), 'utf8');
  return parse(text, { merge: true }) as ComposeFile;
}

/** Thrown where compose refuses to start: a `${VAR:?message}` without a value. */
export class MissingComposeVariable extends Error {}

/**
 * Compose's interpolation of one value: `$$` is a `$`; `${VAR:-d}` / `${VAR-d}` default when
 * unset-or-empty / unset; `${VAR:?m}` / `${VAR?m}` refuse with `m`; `${VAR}` and `$VAR` are ''
 * when unset.
 */
export function interpolate(value: string, variables: Variables): string {
  const pattern =
    /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;
  return value.replace(
    pattern,
    (
      _match,
      dollar: string | undefined,
      braced: string | undefined,
      colon: string | undefined,
      operator: string | undefined,
      argument: string | undefined,
      bare: string | undefined,
    ) => {
      if (dollar !== undefined) return '$';
      const name = (braced ?? bare)!;
      const current = variables[name];
      const missing = current === undefined || (colon === ':' && current === '');
      if (operator === '-') return missing ? (argument ?? '') : current;
      if (operator === '?' && missing) {
        throw new MissingComposeVariable(
          `required variable ${name} is missing a value: ${argument ?? ''}`,
        );
      }
      return current ?? '';
    },
  );
}

/** The `ENV` lines of the Dockerfile's last stage (the image that runs). */
export function dockerfileEnv(): Record<string, string> {
  const lines = readFileSync(path.join(projectRoot(), 'Dockerfile'), 'utf8').split('\n');
  const lastStage = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  const env: Record<string, string> = {};
  for (const line of lines.slice(lastStage)) {
    const match = /^ENV\s+(.+)$/i.exec(line.trim());
    if (match === null) continue;
    const body = match[1]!;
    if (body.includes('=')) {
      for (const pair of body.split(/\s+/)) {
        const [key, ...rest] = pair.split('=');
        env[key!] = rest.join('=');
      }
    } else {
      const [key, ...rest] = body.split(/\s+/);
      env[key!] = rest.join(' ');
    }
  }
  return env;
}

export interface ServiceEnvironmentOptions {
  /** The shell compose runs in: interpolation reads it first. */
  readonly shell: Variables;
  /** The project's .env: compose interpolates from it too, and the services load it (env_file). */
  readonly dotEnv?: Readonly<Record<string, string>>;
}

/**
 * The environment compose gives `service`'s container: the image's ENV, then its env_file (.env),
 * then its `environment` (interpolated), each overriding the one before.
 */
export function serviceEnvironment(
  compose: ComposeFile,
  service: string,
  { shell, dotEnv = {} }: ServiceEnvironmentOptions,
): Record<string, string> {
  const definition = compose.services[service];
  if (definition === undefined) throw new Error(`docker-compose.yml has no service ${service}`);
  const variables: Variables = { ...dotEnv, ...shell };
  const fromEnvFile: Record<string, string> = {};
  for (const entry of definition.env_file ?? []) {
    const file = typeof entry === 'string' ? entry : entry.path;
    if (file !== '.env') throw new Error(`env_file ${file}: only .env is modelled here`);
    Object.assign(fromEnvFile, dotEnv);
  }
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(definition.environment ?? {})) {
    // `KEY:` with no value passes the shell's KEY through, or nothing
    if (value === null) {
      const passed = variables[key];
      if (passed !== undefined) environment[key] = passed;
      continue;
    }
    environment[key] = typeof value === 'string' ? interpolate(value, variables) : String(value);
  }
  return { ...dockerfileEnv(), ...fromEnvFile, ...environment };
}
