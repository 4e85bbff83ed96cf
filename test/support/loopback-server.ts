import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it: method, path, headers, and the body bytes it read. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  /** Raw header lines as sent (names and values in order), to count duplicated values. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

/**
 * What the server does with request number `n` (0-based), after reading its whole body: answer
 * through `res`, or misbehave (reset the socket, go silent).
 */
export type Script = (
  n: number,
  req: IncomingMessage,
  res: ServerResponse,
  seen: SeenRequest,
) => void;

/**
 * A real HTTP server on 127.0.0.1 with a scripted answer per request, recording every request it
 * read. For integration tests of the wire: resets, silence, slow headers, quota headers.
 */
export class LoopbackServer {
  readonly seen: SeenRequest[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** Starts a server answering with `script`. */
  static async start(script: Script): Promise<LoopbackServer> {
    const seen: SeenRequest[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request: SeenRequest = {
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
        };
        const n = seen.length;
        seen.push(request);
        script(n, req, res, request);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const instance = new LoopbackServer(server, `http://127.0.0.1:${port}`);
    (instance as { seen: SeenRequest[] }).seen = seen;
    return instance;
  }

  /** Closes the server and every connection still open (silent ones included). */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Resets the connection (TCP RST) after the request was read: the client sees ECONNRESET. */
export function reset(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}

/** Answers `status` with a JSON body and extra headers. */
export function answer(
  res: ServerResponse,
  status: number,
  body: unknown = {},
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * Servers started by a test file, closed together after each test:
 * `const { serve } = loopbackServers(); afterEach(closeAll)`.
 */
export function loopbackServers(): {
  serve(script: Script): Promise<LoopbackServer>;
  closeAll(): Promise<void>;
} {
  const started: LoopbackServer[] = [];
  return {
    async serve(script) {
      const server = await LoopbackServer.start(script);
      started.push(server);
      return server;
    },
    async closeAll() {
      await Promise.all(started.splice(0).map((server) => server.close()));
    },
  };
}
