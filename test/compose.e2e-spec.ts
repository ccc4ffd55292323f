/**
 * docker-compose.yml as compose would run it, without a Docker engine: each replica is the built
 * service (`node dist/src/main.js`, the image's CMD) with exactly the environment compose gives
 * its container (the Dockerfile's ENV, the .env file, the compose file's `environment`
 * interpolated from the shell), Redis is a redis-server, and the proxy is Debian's nginx with
 * deploy/nginx.conf. The only changes are those Docker's network makes: service names
 * (redis, api-1, api-2) resolve to loopback ports, and each container's port is a free one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BUILD_TIMEOUT_MS, ServiceProcess, buildIfStale } from './support/built-service.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import {
  MissingComposeVariable,
  dockerfileEnv,
  readComposeFile,
  serviceEnvironment,
  type ComposeFile,
} from './support/compose-file.js';
import { FakeMarkets } from './support/fake-markets.js';
import { nginxAvailable, startNginxProxy, type NginxProxy } from './support/nginx-proxy.js';
import { fundedBuyer } from './support/paying-clients.js';
import { freePort, startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const TICKER_PRICE = 2000n;
const REPLICAS = ['api-1', 'api-2'] as const;

/**
 * The container's view after Docker's network: `redis` in REDIS_URL is the test's redis-server,
 * and the replica listens on its own loopback port (compose: 0.0.0.0:3000 in its own namespace).
 */
function onLoopback(env: Record<string, string>, redis: RedisServer, port: number) {
  const redisUrl = new URL(env['REDIS_URL'] ?? '');
  expect(redisUrl.hostname).toBe('redis');
  redisUrl.hostname = '127.0.0.1';
  redisUrl.port = String(redis.port);
  expect(env['PORT']).toBe('3000');
  return { ...env, REDIS_URL: redisUrl.href, HOST: '127.0.0.1', PORT: String(port) };
}

describe('docker-compose.yml, read as compose reads it', () => {
  const compose = readComposeFile();
  const shell = { X402_PAY_TO: PAY_TO, ATTESTATION_PRIVATE_KEY: generatePrivateKey() };

  it('runs the image in production', () => {
    expect(dockerfileEnv()).toEqual({ NODE_ENV: 'production' });
  });

  it.each(['X402_PAY_TO', 'ATTESTATION_PRIVATE_KEY'])(
    'refuses to start without %s, naming it',
    (name) => {
      const without = { ...shell, [name]: undefined };
      for (const replica of REPLICAS) {
        expect(() => serviceEnvironment(compose, replica, { shell: without })).toThrow(
          MissingComposeVariable,
        );
        expect(() => serviceEnvironment(compose, replica, { shell: without })).toThrow(
          new RegExp(`required variable ${name} is missing a value: set ${name} `),
        );
      }
    },
  );

  it('takes the attestation key from .env as well as from the shell', () => {
    const key = shell.ATTESTATION_PRIVATE_KEY;
    const env = serviceEnvironment(compose, 'api-1', {
      shell: { X402_PAY_TO: PAY_TO },
      dotEnv: { ATTESTATION_PRIVATE_KEY: key },
    });
    expect(env['ATTESTATION_PRIVATE_KEY']).toBe(key);
  });
});

describeWithRedis('the compose stack: Redis, two replicas, nginx', () => {
  let compose: ComposeFile;
  let redis: RedisServer;
  let chain: LocalChain;
  let markets: FakeMarkets;
  // undefined where beforeAll or a test stopped before starting it
  let proxy: NginxProxy | undefined;
  const replicas: ServiceProcess[] = [];
  const workDirs: string[] = [];
  const attestationKey = generatePrivateKey();

  /** A replica's container: its compose environment on loopback, its own /app directory. */
  async function startReplica(
    name: string,
    shell: Record<string, string>,
    dotEnv?: Record<string, string>,
  ): Promise<{ service: ServiceProcess; port: number }> {
    const port = await freePort();
    const env = onLoopback(serviceEnvironment(compose, name, { shell, dotEnv }), redis, port);
    const workDir = mkdtempSync(path.join(tmpdir(), `compose-${name}-`));
    workDirs.push(workDir);
    const service = await ServiceProcess.start(env, { cwd: workDir });
    replicas.push(service);
    return { service, port };
  }

  beforeAll(async () => {
    if (!nginxAvailable()) {
      throw new Error('nginx is not installed: apt-get install -y nginx-light (or nginx)');
    }
    await buildIfStale();
    compose = readComposeFile();
    redis = await startRedisServer();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
  }, BUILD_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await proxy?.stop();
    for (const replica of replicas) await replica.stop();
    for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
    await markets.close();
    await chain.stop();
    await redis.stop();
  });

  it('a replica with only the compose file and the image: /health/live 200', async () => {
    const { service } = await startReplica('api-1', {
      X402_PAY_TO: PAY_TO,
      ATTESTATION_PRIVATE_KEY: attestationKey,
    });
    const live = await service.get('/health/live');
    expect(live.status).toBe(200);
    await service.stop();
  }, 60_000);

  it('behind nginx: the asset list, a 402 naming PUBLIC_URL, and a paid call that settles', async () => {
    const ports: Record<string, number> = {};
    const dotEnv = {
      ...markets.env(),
      X402_FACILITATOR: 'embedded',
      X402_RPC_URL: chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
    };
    // the proxy's port is known only once it listens; the replicas need PUBLIC_URL first
    const publicPort = await freePort();
    const publicUrl = `http://127.0.0.1:${publicPort}`;
    for (const name of REPLICAS) {
      const { service, port } = await startReplica(
        name,
        {
          X402_PAY_TO: PAY_TO,
          ATTESTATION_PRIVATE_KEY: attestationKey,
          PUBLIC_URL: publicUrl,
          X402_SETTLER_PRIVATE_KEY_1: chain.accounts[0]!,
          X402_SETTLER_PRIVATE_KEY_2: chain.accounts[2]!,
        },
        dotEnv,
      );
      await service.ready();
      ports[name] = port;
    }
    const nginx = await startNginxProxy(ports, publicPort);
    proxy = nginx;
    const buyer = await fundedBuyer(chain);

    const assets = await fetch(`${nginx.url}/v1/assets`);
    expect(assets.status).toBe(200);
    expect(((await assets.json()) as { assets: { symbol: string }[] }).assets).toContainEqual(
      expect.objectContaining({ symbol: 'BTC' }),
    );

    const unpaid = await fetch(`${nginx.url}/v1/ticker/BTC`);
    expect(unpaid.status).toBe(402);
    expect(paymentRequiredOf(unpaid).resource.url).toBe(`${publicUrl}/v1/ticker/BTC`);

    const signer = (await (await fetch(`${nginx.url}/.well-known/price-attestation`)).json()) as {
      signer: string;
    };
    expect(signer.signer).toBe(privateKeyToAccount(attestationKey).address);

    const before = await chain.usdcBalance(PAY_TO);
    const paid = await buyer.fetchV2(`${nginx.url}/v1/ticker/BTC`);
    expect(paid.status).toBe(200);
    expect(paid.headers.get('payment-response')).not.toBeNull();
    expect(paid.headers.get('price-attestation')).not.toBeNull();
    expect((await chain.usdcBalance(PAY_TO)) - before).toBe(TICKER_PRICE);
    expect(nginx.accessLog()).toMatch(/"GET \/v1\/ticker\/BTC HTTP\/1\.1" 200 /);
  }, 120_000);
});
