// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * @title PriceAttestationVerifier
 * @notice Accepts a price from the x402 Price API's `Price-Attestation` header (EIP-712,
 *         docs/attestations.md) only when the configured signer signed it, for the asked symbol,
 *         in USD, and no older than the caller allows.
 *
 * An attestation signs every price of one answer. The caller passes the asked symbol's point in
 * full and the EIP-712 struct hash of each point (in the answer's order): the contract hashes
 * one point and reads the rest, so the cost hardly grows with the size of the answer.
 */
contract PriceAttestationVerifier {
    struct PricePoint {
        string symbol;
        /// USD price with 8 decimals.
        uint256 price;
        uint16 venues;
        uint32 spreadBps;
    }

    /// An answer's signed fields, its points given by their struct hashes.
    struct Attestation {
        string currency;
        /// The oldest venue quote (or stablecoin rate) behind any of the prices, epoch
        /// milliseconds: every input is at least this recent.
        uint64 timestamp;
        bytes32[] pointHashes;
    }

    bytes32 private constant DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,string version)");
    bytes32 private constant POINT_TYPEHASH =
        keccak256("PricePoint(string symbol,uint256 price,uint16 venues,uint32 spreadBps)");
    bytes32 private constant ATTESTATION_TYPEHASH =
        keccak256(
            "PriceAttestation(string currency,uint64 timestamp,PricePoint[] prices)"
            "PricePoint(string symbol,uint256 price,uint16 venues,uint32 spreadBps)"
        );
    bytes32 private constant USD = keccak256("USD");
    /// secp256k1n / 2: a larger `s` is the malleable twin of a signature.
    uint256 private constant HALF_ORDER =
        0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    bytes32 public immutable domainSeparator;
    address public immutable signer;

    error NotTheSigner(address recovered);
    error MalformedSignature();
    error WrongSymbol();
    error WrongPoint();
    error WrongCurrency();
    error Stale(uint64 timestamp);

    constructor(address signer_) {
        signer = signer_;
        domainSeparator = keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256("x402 Price API"), keccak256("1"))
        );
    }

    /**
     * @notice The price of `symbol` (8 decimals), its venue count and spread, when `attestation`
     *         is the signer's, `point` is its `index`-th point, and its oldest input is at most
     *         `maxAgeSeconds` old; reverts otherwise.
     */
    function verifiedPrice(
        Attestation calldata attestation,
        uint256 index,
        PricePoint calldata point,
        string calldata symbol,
        uint256 maxAgeSeconds,
        bytes calldata signature
    ) external view returns (uint256 price, uint16 venues, uint32 spreadBps) {
        if (keccak256(bytes(point.symbol)) != keccak256(bytes(symbol))) revert WrongSymbol();
        if (index >= attestation.pointHashes.length || attestation.pointHashes[index] != hashPoint(point)) {
            revert WrongPoint();
        }
        if (keccak256(bytes(attestation.currency)) != USD) revert WrongCurrency();
        if (uint256(attestation.timestamp) + maxAgeSeconds * 1000 < block.timestamp * 1000) {
            revert Stale(attestation.timestamp);
        }
        address recovered = recover(digest(attestation), signature);
        if (recovered != signer) revert NotTheSigner(recovered);
        return (point.price, point.venues, point.spreadBps);
    }

    /// @notice EIP-712 struct hash of a point, as `pointHashes` holds them.
    function hashPoint(PricePoint calldata point) public pure returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    POINT_TYPEHASH,
                    keccak256(bytes(point.symbol)),
                    point.price,
                    point.venues,
                    point.spreadBps
                )
            );
    }

    function digest(Attestation calldata attestation) private view returns (bytes32) {
        bytes32 structHash = keccak256(
            abi.encode(
                ATTESTATION_TYPEHASH,
                keccak256(bytes(attestation.currency)),
                attestation.timestamp,
                keccak256(abi.encodePacked(attestation.pointHashes))
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator, structHash));
    }

    function recover(bytes32 hash, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) revert MalformedSignature();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) revert MalformedSignature();
        address recovered = ecrecover(hash, v, r, s);
        if (recovered == address(0)) revert MalformedSignature();
        return recovered;
    }
}
