import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ApiExcludeEndpoint, ApiProperty } from '@nestjs/swagger';
import { AppModule } from '../src/app.module.js';
import { loadConfig } from '../src/app-config.js';
import { Paid } from '../src/payments/paywall/paid.decorator.js';
import { responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

/** What an extending team writes to sell a new endpoint: a DTO and a controller method. */
class AnswerDto {
  @ApiProperty({ example: 42 })
  readonly answer!: number;
}

@Controller('v1/sample')
class SampleController {
  @Get('answer')
  @Paid({ price: '$0.004', response: AnswerDto, description: 'The answer.' })
  answer(): AnswerDto {
    return { answer: 42 };
  }
}

@Module({ controllers: [SampleController] })
class SampleModule {}

describe('a paid endpoint added by another module', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({ features: [SampleModule] });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('is challenged at its price, with its response schema for discovery', async () => {
    const response = await stack.service.get('/v1/sample/answer');
    expect(response.status).toBe(402);
    const [accepted] = paymentRequiredOf(response).accepts;
    expect(accepted).toMatchObject({ amount: '4000', payTo: stack.payTo, scheme: 'exact' });
    const body = await responseJson(response);
    expect(body).toMatchObject({
      accepts: [
        {
          maxAmountRequired: '4000',
          outputSchema: { output: { properties: { answer: { type: 'number' } } } },
        },
      ],
    });
  });

  it('is sold: the official client pays, gets the body, and exactly the price moves', async () => {
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/sample/answer`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ answer: 42 });
    const after = await stack.balances();
    expect(after.payTo - before.payTo).toBe(4000n);
    expect(before.buyer - after.buyer).toBe(4000n);
  });

  it('is documented with its price, its 200 and its 402', async () => {
    const document = (await (await stack.service.get('/openapi.json')).json()) as {
      paths: Record<string, { get: { summary: string; responses: Record<string, unknown> } }>;
    };
    const operation = document.paths['/v1/sample/answer']?.get;
    expect(operation?.summary).toBe('$0.004 per request');
    expect(Object.keys(operation?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '402', '409', '502']),
    );
  });
});

describe('a misused paywall fails start-up with a sentence naming the route', () => {
  // the channel store opens its directory when the app is built, and an app whose start-up fails
  // is never closed: a throwaway one, not the project's data/batch-settlement, which the process
  // would then hold against the suites that run after it
  const channels = mkdtempSync(path.join(os.tmpdir(), 'misused-paywall-channels-'));
  afterAll(() => {
    rmSync(channels, { recursive: true, force: true });
  });
  const config = loadConfig({
    X402_BATCH_DATA_DIR: channels,
    LOG_LEVEL: 'error',
    X402_FACILITATOR: 'embedded',
    X402_NETWORK: 'base-sepolia',
    X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    X402_SETTLER_PRIVATE_KEY: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
    X402_RPC_URL: 'http://127.0.0.1:9',
    MARKET_STREAMS: 'none',
  });

  it('refuses to start when the paywall was never installed', async () => {
    const app = await NestFactory.create(
      AppModule.forRoot(config, [SampleModule]),
      new FastifyAdapter(),
      { logger: false, abortOnError: false },
    );
    try {
      await expect(app.init()).rejects.toThrow(
        /the x402 paywall was never installed, so the @Paid routes \(.*SampleController\.answer.*\) cannot be sold; call installPaywall\(app, document\)/,
      );
    } finally {
      await app.close();
    }
  });

  it('refuses to sell a route the OpenAPI document leaves out', async () => {
    @Controller('v1/hidden')
    class HiddenController {
      @Get()
      @ApiExcludeEndpoint()
      @Paid({ price: '$0.001', response: AnswerDto, description: 'Hidden.' })
      hidden(): AnswerDto {
        return { answer: 0 };
      }
    }
    @Module({ controllers: [HiddenController] })
    class HiddenModule {}
    const { createApp } = await import('../src/app.js');
    await expect(createApp({ config, logger: false, features: [HiddenModule] })).rejects.toThrow(
      'HiddenController.hidden is missing from the OpenAPI document',
    );
  });
});
