import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { MetadataScanner, Reflector, type DiscoveryService } from '@nestjs/core';
import type { AnswerResolver } from '../paid-answers/index.js';
import { Paid } from '../payments/index.js';
import { Attested } from './attested.decorator.js';
import { AttestedRoutes } from './attested-routes.js';

class Answer {
  readonly value!: number;
}

class AnswerResolverDouble implements AnswerResolver<number> {
  resolve(): Promise<number> {
    return Promise.resolve(1);
  }
}

function check(controller: object): void {
  const discovery = { getControllers: () => [{ metatype: controller }] };
  new AttestedRoutes(
    discovery as unknown as DiscoveryService,
    new MetadataScanner(),
    new Reflector(),
  ).onModuleInit();
}

describe('AttestedRoutes', () => {
  it('lets a @Paid route with a resolver be attested', () => {
    @Controller()
    class Sold {
      @Get('a')
      @Attested()
      @Paid({
        price: '$0.001',
        response: Answer,
        description: 'A.',
        resolver: AnswerResolverDouble,
      })
      a(): void {}
    }
    expect(() => {
      check(Sold);
    }).not.toThrow();
  });

  it('stops start-up on an attested route that is not sold', () => {
    @Controller()
    class Free {
      @Get('a')
      @Attested()
      a(): void {}
    }
    expect(() => {
      check(Free);
    }).toThrow('@Attested() on Free.a: only a @Paid route');
  });

  it('stops start-up on an attested route that names no resolver', () => {
    @Controller()
    class Unresolved {
      @Get('a')
      @Attested()
      @Paid({ price: '$0.001', response: Answer, description: 'A.' })
      a(): void {}
    }
    expect(() => {
      check(Unresolved);
    }).toThrow('@Attested() on Unresolved.a: @Paid names no resolver');
  });
});
