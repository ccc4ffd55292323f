import { Module } from '@nestjs/common';
import { channelStorageProvider } from '../../channels/channel-storage.js';
import {
  BATCH_EMBEDDED_FACILITATOR,
  batchEmbeddedFacilitator,
} from './batch-facilitator-scheme.js';
import { BatchChannels } from './batch-channels.js';
import { BatchMetering } from './batch-metering.js';
import { BatchSettlement } from './batch-settlement.js';
import { BatchSettlementScheme } from './batch-settlement.scheme.js';
import { LostAnswers } from './lost-answers.js';

/**
 * `batch-settlement` on EVM networks: the scheme, its channels and their claims, its settlement,
 * and its side of the embedded facilitator.
 */
@Module({
  providers: [
    { provide: BATCH_EMBEDDED_FACILITATOR, useValue: batchEmbeddedFacilitator },
    channelStorageProvider,
    BatchSettlementScheme,
    BatchChannels,
    BatchSettlement,
    LostAnswers,
    BatchMetering,
  ],
})
export class BatchSettlementSchemeModule {}
