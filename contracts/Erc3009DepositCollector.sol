// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @dev The EIP-3009 entry point of the token (USDC's bytes-signature overload).
interface IErc3009Token {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
    function transfer(address to, uint256 value) external returns (bool);
}

/**
 * @title Erc3009DepositCollector
 * @notice The EIP-3009 deposit collector of the x402 `batch-settlement` scheme, for LOCAL CHAINS
 *         ONLY; installed with `anvil_setCode` at 0x4020806089470a89826cB9fB1f4059150b550004.
 *         Written for this project from the scheme's specification and the SDK's encoding.
 *
 * The payer signs a `ReceiveWithAuthorization` to this collector whose nonce is
 * `keccak256(abi.encode(channelId, salt))`, so the signature can fund only that channel.
 * `collectorData` is `abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature)`.
 * Only the channel contract may call `collect`; the funds go straight on to it.
 */
contract Erc3009DepositCollector {
    /// @notice The channel contract, at the address the SDK uses on every chain.
    address public constant BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        require(msg.sender == BATCH_SETTLEMENT, "Erc3009DepositCollector: caller is not the channel contract");
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IErc3009Token(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        (bool ok, bytes memory ret) = token.call(abi.encodeCall(IErc3009Token.transfer, (msg.sender, amount)));
        require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "Erc3009DepositCollector: transfer failed");
    }
}
