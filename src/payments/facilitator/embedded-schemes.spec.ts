import { Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { EmbeddedFacilitatorScheme, embeddedSchemesIn } from './embedded-schemes.js';

const first = new EmbeddedFacilitatorScheme('first', () => undefined);
const second = new EmbeddedFacilitatorScheme('second', () => undefined);

@Module({ providers: [{ provide: Symbol('First'), useValue: first }] })
class FirstModule {}

@Module({
  providers: [
    { provide: Symbol('Second'), useValue: second },
    { provide: Symbol('NotAScheme'), useValue: { scheme: 'lookalike', register: () => undefined } },
  ],
})
class SecondModule {}

describe('embeddedSchemesIn', () => {
  it("collects every module's facilitator side, and nothing that merely looks like one", async () => {
    const app = await Test.createTestingModule({
      imports: [DiscoveryModule, FirstModule, SecondModule],
    }).compile();
    expect(embeddedSchemesIn(app.get(DiscoveryService))).toEqual([first, second]);
    await app.close();
  });
});
