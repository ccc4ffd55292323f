import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { address } from '@solana/kit';
import { closeServer } from './close-server.js';
import { SolanaVm, firstSignature, type VmOutcome } from './solana-vm.js';

/**
 * The few Solana JSON-RPC methods `@x402/svm`'s client and facilitator (and the seller's proof)
 * call, answered by a SolanaVm, on loopback. `holdSubmissions()` keeps sent transactions
 * unlanded (unknown to getSignatureStatuses) until `landHeld()`: a submission whose outcome the
 * seller cannot learn in time.
 */

interface Request {
  readonly id: unknown;
  readonly method: string;
  readonly params: readonly unknown[];
}

/** A signature's status as getSignatureStatuses reports it. */
interface Landed {
  readonly slot: bigint;
  readonly err: string | null;
}

export class SolanaRpcServer {
  readonly calls: string[] = [];
  private readonly landed = new Map<string, Landed>();
  private held: Uint8Array[] | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly vm: SolanaVm,
  ) {}

  static async start(vm = new SolanaVm()): Promise<SolanaRpcServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const rpc = new SolanaRpcServer(server, `http://127.0.0.1:${port}`, vm);
    server.on('request', (request, response) => {
      void rpc.handle(request, response);
    });
    return rpc;
  }

  /** Sent transactions are accepted (their signature answered) but not landed until landHeld(). */
  holdSubmissions(): void {
    this.held ??= [];
  }

  /** Lands what was held, and lands later submissions at once again. */
  landHeld(): VmOutcome[] {
    const held = this.held ?? [];
    this.held = undefined;
    return held.map((wire) => this.land(wire));
  }

  /** Forgets what was held: those transactions never land (their blockhash is then expired). */
  dropHeld(): void {
    this.held = undefined;
    this.vm.expireBlockhash();
  }

  async close(): Promise<void> {
    await closeServer(this.server, []);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request;
    this.calls.push(call.method);
    let answer: object;
    try {
      answer = { jsonrpc: '2.0', id: call.id, result: this.answer(call) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      answer = { jsonrpc: '2.0', id: call.id, error: { code: -32602, message } };
    }
    response.setHeader('content-type', 'application/json');
    response.end(
      JSON.stringify(answer, (_key, value: unknown) =>
        typeof value === 'bigint' ? Number(value) : value,
      ),
    );
  }

  private answer({ method, params }: Request): unknown {
    const vm = this.vm;
    const context = { slot: vm.slot };
    switch (method) {
      case 'getSlot':
      case 'getBlockHeight':
        return vm.slot;
      case 'getGenesisHash':
        return 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
      case 'isBlockhashValid':
        return { context, value: params[0] === vm.blockhash };
      case 'getLatestBlockhash':
        return {
          context,
          value: { blockhash: vm.blockhash, lastValidBlockHeight: vm.slot + 150n },
        };
      case 'getBalance':
        return { context, value: vm.lamports(address(String(params[0]))) };
      case 'getAccountInfo':
        return { context, value: this.accountInfo(String(params[0])) };
      case 'getMultipleAccounts':
        return { context, value: (params[0] as string[]).map((key) => this.accountInfo(key)) };
      case 'simulateTransaction':
        return { context, value: this.simulate(params) };
      case 'sendTransaction':
        return this.submit(Buffer.from(String(params[0]), 'base64'));
      case 'getSignatureStatuses':
        return {
          context,
          value: (params[0] as string[]).map((signature) => {
            const landed = this.landed.get(signature);
            if (landed === undefined) return null;
            return {
              slot: landed.slot,
              confirmations: null,
              err: landed.err,
              confirmationStatus: 'confirmed',
            };
          }),
        };
      default:
        throw new Error(`method ${method} is not served by the test Solana RPC`);
    }
  }

  private accountInfo(key: string): object | null {
    const account = this.vm.account(address(key));
    if (account === null) return null;
    return {
      data: [Buffer.from(account.data).toString('base64'), 'base64'],
      executable: account.executable,
      lamports: account.lamports,
      owner: account.owner,
      rentEpoch: 0,
      space: account.data.length,
    };
  }

  private simulate(params: readonly unknown[]): object {
    const options = (params[1] ?? {}) as { sigVerify?: boolean };
    const outcome = this.vm.simulate(
      Buffer.from(String(params[0]), 'base64'),
      options.sigVerify === true,
    );
    return {
      err: outcome.err,
      logs: outcome.logs,
      accounts: null,
      unitsConsumed: outcome.unitsConsumed,
      returnData: null,
    };
  }

  /** Like a real RPC with skipPreflight: the signature is answered, a failure shows in its status. */
  private submit(wire: Uint8Array): string {
    if (this.held !== undefined) {
      this.held.push(wire);
      return firstSignature(wire);
    }
    return this.land(wire).signature;
  }

  private land(wire: Uint8Array): VmOutcome {
    const outcome = this.vm.send(wire);
    // a replay of a landed transaction fails in litesvm (AlreadyProcessed): keep the first status
    if (!this.landed.has(outcome.signature) || outcome.err === null) {
      this.landed.set(outcome.signature, { slot: this.vm.slot, err: outcome.err });
    }
    return outcome;
  }
}
