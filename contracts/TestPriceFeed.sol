// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/**
 * @title TestPriceFeed
 * @notice A price feed for LOCAL CHAINS ONLY that answers like a Chainlink AggregatorV3Interface
 *         proxy (decimals, description, version, getRoundData, latestRoundData). Anyone may
 *         publish a round, so tests can set any answer and any update time, including bad ones.
 *
 * Like Chainlink's aggregators, reading a round that was never published reverts with
 * "No data present", and so does latestRoundData() before the first round.
 */
contract TestPriceFeed {
    struct Round {
        int256 answer;
        uint256 updatedAt;
    }

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;

    uint80 private latestRound;
    mapping(uint80 => Round) private rounds;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    constructor(uint8 decimals_, string memory description_) {
        decimals = decimals_;
        description = description_;
    }

    /// @notice Publishes the next round. `updatedAt` is unix seconds; 0 plays an unfinished round.
    function setRoundData(int256 answer, uint256 updatedAt) external returns (uint80 roundId) {
        roundId = ++latestRound;
        rounds[roundId] = Round(answer, updatedAt);
        emit AnswerUpdated(answer, roundId, updatedAt);
    }

    function getRoundData(uint80 roundId)
        public
        view
        returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        require(roundId != 0 && roundId <= latestRound, "No data present");
        Round memory round = rounds[roundId];
        return (roundId, round.answer, round.updatedAt, round.updatedAt, roundId);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return getRoundData(latestRound);
    }
}
