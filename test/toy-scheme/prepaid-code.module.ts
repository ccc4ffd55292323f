import { Module } from '@nestjs/common';
import { PrepaidCodeScheme } from './toy.scheme.js';

/** The toy scheme's module: the one line an app adds to sell with it. */
@Module({ providers: [PrepaidCodeScheme] })
export class PrepaidCodeModule {}
