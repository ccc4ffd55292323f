// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @dev ERC-1271 entry point, used when the authorizer of a transfer is a contract (smart wallet).
interface IERC1271Wallet {
    function isValidSignature(bytes32 digest, bytes calldata signature) external view returns (bytes4);
}

/**
 * @title TestUSDC
 * @notice An EIP-3009 test token for LOCAL CHAINS ONLY, shaped like Circle's USDC (FiatToken v2)
 *         as far as the x402 "exact" scheme sees it. Anyone may mint.
 *
 * Design rules, so that the runtime code alone can be placed at any address with
 * `anvil_setCode` (for instance the Base Sepolia USDC address) and work immediately:
 *  - name, symbol, version and decimals are compile-time constants (no constructor state);
 *  - the EIP-712 domain separator is recomputed from `block.chainid` and `address(this)` on every
 *    use, never cached;
 *  - an empty storage is a valid initial state (zero supply, no balances, no used nonces).
 *
 * Revert reasons are plain strings worded so that off-chain tooling (and people) can tell the
 * causes apart: "...authorization is expired", "...authorization is not yet valid",
 * "...authorization is used or canceled", "...transfer amount exceeds balance",
 * "...invalid signature".
 */
contract TestUSDC {
    // ------------------------------------------------------------------ metadata (constants)

    string public constant name = "USDC";
    string public constant symbol = "USDC";
    string public constant version = "2";
    uint8 public constant decimals = 6;

    // ------------------------------------------------------------------ EIP-712 type hashes

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );

    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );

    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    /// @dev Upper bound for the `s` part of a canonical (low-s) secp256k1 signature.
    uint256 private constant HALF_CURVE_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;

    // ------------------------------------------------------------------ state

    uint256 public totalSupply;
    mapping(address account => uint256) public balanceOf;
    mapping(address owner => mapping(address spender => uint256)) public allowance;
    mapping(address authorizer => mapping(bytes32 nonce => bool)) private _authorizationUsed;

    // ------------------------------------------------------------------ events

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    // ------------------------------------------------------------------ EIP-712 / EIP-5267

    /// @notice The EIP-712 domain separator for the current chain and the current address.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    DOMAIN_TYPEHASH,
                    keccak256(bytes(name)),
                    keccak256(bytes(version)),
                    block.chainid,
                    address(this)
                )
            );
    }

    /// @notice EIP-5267 description of the EIP-712 domain (name, version, chainId, verifyingContract).
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory domainName,
            string memory domainVersion,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", name, version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ------------------------------------------------------------------ ERC-20

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        require(spender != address(0), "TestUSDC: approve to the zero address");
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "TestUSDC: transfer amount exceeds allowance");
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _move(from, to, value);
        return true;
    }

    // ------------------------------------------------------------------ test-only minting

    /// @notice Permissionless mint. This is a test token: never deploy it where value is real.
    function mint(address to, uint256 value) external {
        require(to != address(0), "TestUSDC: mint to the zero address");
        totalSupply += value;
        unchecked {
            balanceOf[to] += value; // cannot overflow: bounded by totalSupply
        }
        emit Transfer(address(0), to, value);
    }

    // ------------------------------------------------------------------ EIP-3009

    /// @notice Whether `nonce` of `authorizer` has been used (or canceled).
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationUsed[authorizer][nonce];
    }

    /// @notice Executes a signed transfer authorization (signature split into v, r, s).
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            abi.encodePacked(r, s, v)
        );
    }

    /// @notice Executes a signed transfer authorization (65-byte ECDSA signature, or any bytes an
    ///         ERC-1271 wallet accepts when `from` is a contract).
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            signature
        );
    }

    /// @notice Like transferWithAuthorization, but only the payee may submit it (front-running safe).
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "TestUSDC: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            abi.encodePacked(r, s, v)
        );
    }

    /// @notice Bytes-signature overload of receiveWithAuthorization.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        require(to == msg.sender, "TestUSDC: caller must be the payee");
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            signature
        );
    }

    /// @notice Cancels an unused authorization nonce (signed by the authorizer).
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    /// @notice Bytes-signature overload of cancelAuthorization.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    // ------------------------------------------------------------------ internals

    function _transferWithAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        require(block.timestamp > validAfter, "TestUSDC: authorization is not yet valid");
        require(block.timestamp < validBefore, "TestUSDC: authorization is expired");
        require(!_authorizationUsed[from][nonce], "TestUSDC: authorization is used or canceled");

        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        _requireValidSignature(from, _typedDataDigest(structHash), signature);

        _authorizationUsed[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);

        _move(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) private {
        require(!_authorizationUsed[authorizer][nonce], "TestUSDC: authorization is used or canceled");

        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        _requireValidSignature(authorizer, _typedDataDigest(structHash), signature);

        _authorizationUsed[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _move(address from, address to, uint256 value) private {
        require(from != address(0), "TestUSDC: transfer from the zero address");
        require(to != address(0), "TestUSDC: transfer to the zero address");
        uint256 fromBalance = balanceOf[from];
        require(fromBalance >= value, "TestUSDC: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = fromBalance - value;
            balanceOf[to] += value; // cannot overflow: bounded by totalSupply
        }
        emit Transfer(from, to, value);
    }

    function _typedDataDigest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// @dev EOAs: canonical 65-byte ECDSA signature (v may be 27/28 or 0/1).
    ///      Contracts: ERC-1271 `isValidSignature` must return the magic value.
    function _requireValidSignature(address signer, bytes32 digest, bytes memory signature) private view {
        require(signer != address(0), "TestUSDC: invalid signature (zero signer)");
        if (signer.code.length > 0) {
            (bool ok, bytes memory ret) = signer.staticcall(
                abi.encodeCall(IERC1271Wallet.isValidSignature, (digest, signature))
            );
            require(
                ok && ret.length >= 32 && abi.decode(ret, (bytes4)) == ERC1271_MAGIC_VALUE,
                "TestUSDC: invalid signature (rejected by ERC-1271 wallet)"
            );
            return;
        }
        require(signature.length == 65, "TestUSDC: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v < 27) v += 27;
        require(v == 27 || v == 28, "TestUSDC: invalid signature 'v' value");
        require(uint256(s) <= HALF_CURVE_ORDER, "TestUSDC: invalid signature 's' value");
        address recovered = ecrecover(digest, v, r, s);
        require(recovered != address(0) && recovered == signer, "TestUSDC: invalid signature");
    }
}
