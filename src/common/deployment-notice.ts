import { Global, Module, type DynamicModule } from '@nestjs/common';

/**
 * What the deployment says about itself where a client reads (the /docs description,
 * /v1/sources): the local test stack's "test chain, test USDC, maybe replayed prices"; null for
 * the service itself.
 */
export type DeploymentNotice = string | null;

export const DEPLOYMENT_NOTICE = Symbol('DeploymentNotice');

/** Provides the DEPLOYMENT_NOTICE the composition root was given to every module. */
@Global()
@Module({})
export class DeploymentNoticeModule {
  static forRoot(notice: DeploymentNotice): DynamicModule {
    return {
      module: DeploymentNoticeModule,
      providers: [{ provide: DEPLOYMENT_NOTICE, useValue: notice }],
      exports: [DEPLOYMENT_NOTICE],
    };
  }
}
