// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @dev The token side the channel contract needs (plain ERC-20 transfer).
interface IBatchToken {
    function transfer(address to, uint256 value) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
}

/// @dev A deposit collector moves `amount` of `token` from `payer` to the caller (the channel
///      contract), authorised by `data`, which binds the transfer to `channelId`.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data)
        external;
}

/// @dev ERC-1271 entry point, for payers that are contracts (smart wallets).
interface IBatchERC1271 {
    function isValidSignature(bytes32 digest, bytes calldata signature) external view returns (bytes4);
}

/**
 * @title BatchSettlement
 * @notice Payment channels for the x402 `batch-settlement` scheme, for LOCAL CHAINS ONLY. Written
 *         for this project from the scheme's EVM specification and the ABI and EIP-712 types that
 *         the x402 EVM SDK uses; installed with `anvil_setCode` at the address the SDK calls
 *         (0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003). Public networks use the deployed contract.
 *
 * Like the test token, the runtime code alone must work at any address: no constructor state,
 * the EIP-712 domain separator ("x402 Batch Settlement", "1") is rebuilt from `block.chainid`
 * and `address(this)` on every use, and empty storage is the valid initial state.
 *
 * Accounting per channel: `balance` is what was deposited minus what went back to the payer
 * (refunds, withdrawals); `totalClaimed` is the cumulative amount the receiver claimed with the
 * payer's vouchers. The payer's unclaimed escrow is `balance - totalClaimed`. Claims move no
 * tokens: they credit the receiver's `totalClaimed` for the token, and `settle` transfers what
 * was claimed and not yet settled to the receiver.
 */
contract BatchSettlement {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverTotals {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    // ------------------------------------------------------------------ EIP-712

    string public constant NAME = "x402 Batch Settlement";
    string public constant VERSION = "1";

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH =
        keccak256(
            "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
        );

    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");

    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");

    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");

    bytes32 public constant CLAIM_BATCH_TYPEHASH =
        keccak256(
            "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
        );

    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 2_592_000;

    uint256 private constant HALF_CURVE_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;

    // ------------------------------------------------------------------ state

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => PendingWithdrawal) public pendingWithdrawals;
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(address receiver => mapping(address token => ReceiverTotals)) public receivers;
    uint256 private _locked;

    // ------------------------------------------------------------------ events

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance);
    event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 amount, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed payer, uint128 amount, uint256 nonce);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt);
    event Withdrawn(bytes32 indexed channelId, address indexed payer, uint128 amount);

    modifier nonReentrant() {
        require(_locked == 0, "BatchSettlement: reentrant call");
        _locked = 1;
        _;
        _locked = 0;
    }

    // ------------------------------------------------------------------ views

    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(NAME)), keccak256(bytes(VERSION)), block.chainid, address(this))
        );
    }

    /// @notice channelId = EIP-712 hash of the config under this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _digest(
            keccak256(
                abi.encode(
                    CHANNEL_CONFIG_TYPEHASH,
                    config.payer,
                    config.payerAuthorizer,
                    config.receiver,
                    config.receiverAuthorizer,
                    config.token,
                    config.withdrawDelay,
                    config.salt
                )
            )
        );
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(voucherClaims[i].voucher.channel),
                    voucherClaims[i].voucher.maxClaimableAmount,
                    voucherClaims[i].totalClaimed
                )
            );
        }
        return _digest(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // ------------------------------------------------------------------ deposits

    /// @notice Adds `amount` to the channel; the collector pulls it from the payer. Anyone may
    ///         submit (the facilitator pays the gas); the collector's authorization is the payer's.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        _requireValidConfig(config);
        require(amount > 0, "BatchSettlement: zero deposit");
        require(collector.code.length > 0, "BatchSettlement: collector has no code");
        bytes32 channelId = getChannelId(config);

        uint256 before = IBatchToken(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        require(
            IBatchToken(config.token).balanceOf(address(this)) == before + amount,
            "BatchSettlement: collector did not deliver the deposit"
        );

        ChannelState storage ch = channels[channelId];
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelCreated(channelId, config);
        ch.balance += amount;
        emit Deposited(channelId, msg.sender, amount, ch.balance);
    }

    // ------------------------------------------------------------------ claims and settlement

    /// @notice Claims vouchers; the caller must be the receiver or the receiver authorizer of
    ///         every row.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            require(
                msg.sender == config.receiver || msg.sender == config.receiverAuthorizer,
                "BatchSettlement: caller is not the receiver or its authorizer"
            );
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Claims vouchers on a ClaimBatch signature of the rows' common receiver
    ///         authorizer; anyone may relay it.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        require(voucherClaims.length > 0, "BatchSettlement: no claims");
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            require(
                voucherClaims[i].voucher.channel.receiverAuthorizer == authorizer,
                "BatchSettlement: claims have different receiver authorizers"
            );
        }
        _requireSignature(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Transfers everything claimed and not yet settled for (receiver, token) to the
    ///         receiver. Permissionless.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverTotals storage totals = receivers[receiver][token];
        uint128 amount = totals.totalClaimed - totals.totalSettled;
        totals.totalSettled = totals.totalClaimed;
        if (amount > 0) _transferOut(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ------------------------------------------------------------------ refunds and withdrawals

    /// @notice Cooperative refund by the receiver or its authorizer.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        require(
            msg.sender == config.receiver || msg.sender == config.receiverAuthorizer,
            "BatchSettlement: caller is not the receiver or its authorizer"
        );
        _refund(config, getChannelId(config), amount);
    }

    /// @notice Cooperative refund on a Refund signature of the receiver authorizer; anyone may relay.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        require(nonce == refundNonce[channelId], "BatchSettlement: wrong refund nonce");
        _requireSignature(
            config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
        );
        _refund(config, channelId, amount);
    }

    /// @notice Starts the payer's timed withdrawal of unclaimed escrow; the receiver can still
    ///         claim vouchers until the delay has passed.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = getChannelId(config);
        ChannelState storage ch = channels[channelId];
        require(amount > 0, "BatchSettlement: zero withdrawal");
        require(amount <= ch.balance - ch.totalClaimed, "BatchSettlement: withdrawal exceeds unclaimed escrow");
        uint40 nowTs = uint40(block.timestamp);
        pendingWithdrawals[channelId] = PendingWithdrawal(amount, nowTs);
        emit WithdrawInitiated(channelId, amount, nowTs);
    }

    /// @notice Completes a timed withdrawal after the channel's delay, capped to what is still
    ///         unclaimed at this point.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal memory pending = pendingWithdrawals[channelId];
        require(pending.initiatedAt != 0, "BatchSettlement: no pending withdrawal");
        require(
            block.timestamp >= uint256(pending.initiatedAt) + config.withdrawDelay,
            "BatchSettlement: withdraw delay has not passed"
        );
        delete pendingWithdrawals[channelId];
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 amount = pending.amount < available ? pending.amount : available;
        if (amount == 0) return;
        ch.balance -= amount;
        _transferOut(config.token, config.payer, amount);
        emit Withdrawn(channelId, config.payer, amount);
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    /// @notice Runs several calls of this contract in one transaction (same caller).
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory ret) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(ret, 0x20), mload(ret))
                }
            }
            results[i] = ret;
        }
    }

    // ------------------------------------------------------------------ internals

    function _claim(VoucherClaim calldata vc) private {
        ChannelConfig calldata config = vc.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage ch = channels[channelId];
        require(vc.totalClaimed <= vc.voucher.maxClaimableAmount, "BatchSettlement: claim above the voucher");
        require(vc.totalClaimed <= ch.balance, "BatchSettlement: claim above the channel balance");
        _requireVoucherSignature(config, getVoucherDigest(channelId, vc.voucher.maxClaimableAmount), vc.signature);
        if (vc.totalClaimed <= ch.totalClaimed) return; // already claimed: a no-op, never a step back
        uint128 increase = vc.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = vc.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += increase;
        emit Claimed(channelId, config.receiver, increase, vc.totalClaimed);
    }

    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        uint256 nonce = refundNonce[channelId];
        refundNonce[channelId] = nonce + 1; // first: a refund that moves nothing still uses its nonce
        ChannelState storage ch = channels[channelId];
        uint128 available = ch.balance - ch.totalClaimed;
        uint128 paid = amount < available ? amount : available;
        if (paid == 0) return;
        ch.balance -= paid;
        PendingWithdrawal storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) {
            if (paid >= pending.amount) delete pendingWithdrawals[channelId];
            else pending.amount -= paid;
        }
        _transferOut(config.token, config.payer, paid);
        emit Refunded(channelId, config.payer, paid, nonce);
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    function _requireValidConfig(ChannelConfig calldata config) private pure {
        require(config.payer != address(0), "BatchSettlement: zero payer");
        require(config.receiver != address(0), "BatchSettlement: zero receiver");
        require(config.receiverAuthorizer != address(0), "BatchSettlement: zero receiver authorizer");
        require(config.token != address(0), "BatchSettlement: zero token");
        require(
            config.withdrawDelay >= MIN_WITHDRAW_DELAY && config.withdrawDelay <= MAX_WITHDRAW_DELAY,
            "BatchSettlement: withdraw delay out of range"
        );
    }

    function _requirePayerSide(ChannelConfig calldata config) private view {
        require(
            msg.sender == config.payer || (config.payerAuthorizer != address(0) && msg.sender == config.payerAuthorizer),
            "BatchSettlement: caller is not the payer or its authorizer"
        );
    }

    /// @dev A voucher is signed by the payer authorizer (an EOA, ECDSA only) when one is set,
    ///      otherwise by the payer (EOA or ERC-1271 wallet).
    function _requireVoucherSignature(ChannelConfig calldata config, bytes32 digest, bytes calldata signature)
        private
        view
    {
        if (config.payerAuthorizer != address(0)) {
            require(_recover(digest, signature) == config.payerAuthorizer, "BatchSettlement: invalid voucher signature");
        } else {
            _requireSignature(config.payer, digest, signature);
        }
    }

    function _requireSignature(address signer, bytes32 digest, bytes calldata signature) private view {
        require(signer != address(0), "BatchSettlement: zero signer");
        if (signer.code.length > 0) {
            (bool ok, bytes memory ret) =
                signer.staticcall(abi.encodeCall(IBatchERC1271.isValidSignature, (digest, signature)));
            require(
                ok && ret.length >= 32 && abi.decode(ret, (bytes4)) == ERC1271_MAGIC_VALUE,
                "BatchSettlement: signature rejected by ERC-1271 wallet"
            );
            return;
        }
        require(_recover(digest, signature) == signer, "BatchSettlement: invalid signature");
    }

    /// @dev Canonical 65-byte ECDSA (v 27/28, low s), as OpenZeppelin's ECDSA; address(0) otherwise.
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if ((v != 27 && v != 28) || uint256(s) > HALF_CURVE_ORDER) return address(0);
        return ecrecover(digest, v, r, s);
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", domainSeparator(), structHash));
    }

    function _transferOut(address token, address to, uint128 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IBatchToken.transfer, (to, amount)));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "BatchSettlement: token transfer failed");
    }
}
