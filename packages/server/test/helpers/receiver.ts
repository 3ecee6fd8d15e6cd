import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/**
 * A real HTTP server on loopback that stands in for Slack, Discord,
 * Telegram, PagerDuty or a user's webhook: it records every request whole
 * and answers what the test told it to, or never answers (`hang`).
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  answer: Answer | 'hang' = { status: 200, body: 'ok' };
  private server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      this.requests.push(request);
      const answer = this.answer;
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body ?? '');
    });
  });

  /** Starts listening on 127.0.0.1; returns the origin, e.g. `http://127.0.0.1:41234`. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this.origin;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The latest request; fails when none arrived. */
  last(): ReceivedRequest {
    const request = this.requests[this.requests.length - 1];
    if (!request) throw new Error('the receiver got no request');
    return request;
  }

  lastJson(): any {
    return JSON.parse(this.last().body);
  }

  reset(answer: Answer | 'hang' = { status: 200, body: 'ok' }): void {
    this.requests.length = 0;
    this.answer = answer;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** An origin on loopback where nothing listens: a port taken and released at once. */
export async function closedOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
