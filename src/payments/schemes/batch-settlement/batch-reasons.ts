/**
 * Why a batch-settlement voucher or deposit is refused, or its charge is in doubt: the SDK's
 * reason strings (its clients act on them) and this seller's own.
 */

/** The payer started a timed withdrawal: the channel takes no new voucher until it is finalized. */
export const WITHDRAWAL_PENDING = 'invalid_batch_settlement_evm_withdrawal_pending';
/** The SDK's reason for "your voucher is not the next cumulative amount": its clients resync on it. */
export const CUMULATIVE_MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
export const INVALID_VOUCHER_SIGNATURE = 'invalid_batch_settlement_evm_voucher_signature';
export const CUMULATIVE_EXCEEDS_BALANCE = 'invalid_batch_settlement_evm_cumulative_exceeds_balance';
export const CUMULATIVE_BELOW_CLAIMED = 'invalid_batch_settlement_evm_cumulative_below_claimed';
/** The channel storage failed while a voucher was being recorded: nothing was charged. */
export const CHANNEL_STATE_UNAVAILABLE =
  'invalid_batch_settlement_evm_verification_state_unavailable';
/** The channel storage failed while a voucher was being recorded, and it may have been. */
export const CHANNEL_STATE_UNCERTAIN = 'channel_state_uncertain';
/** Another request holds the channel (a refund's hold, a facilitator-verified voucher in flight). */
export const CHANNEL_BUSY = 'invalid_batch_settlement_evm_channel_busy';
/** The channel's record is gone (refunded and deleted) since the voucher was checked. */
export const MISSING_CHANNEL = 'invalid_batch_settlement_evm_missing_channel';
/** The chain refused this channel's last claim: it sells nothing until that is cleared up. */
export const CHANNEL_SET_ASIDE = 'invalid_batch_settlement_evm_channel_set_aside';
