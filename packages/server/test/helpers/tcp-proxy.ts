import net from 'node:net';

/**
 * A TCP proxy between the service and the real PostgreSQL, so a test can
 * make the database go away and come back without touching the shared
 * server: `cut()` is what clients see of a restart (every connection
 * closed, then nothing listening: ECONNREFUSED), `restore()` listens again
 * on the same port. `cutWhen` and `holdWhen` act when a client sends a
 * given SQL text, so a write can be interrupted at a chosen statement.
 */
export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Closes every connection and stops listening; resolves once the port refuses and the service has seen each connection end. */
  cut(): Promise<void>;
  /** Listens again on the same port: forwarding, or with `stall`, accepting and never answering (a network that drops packets). */
  restore(mode?: 'forward' | 'stall'): Promise<void>;
  /** Resolves after the next client bytes containing `sql` arrive: those bytes are dropped and everything is cut. */
  cutWhen(sql: string): Promise<void>;
  /** Resolves when a client sends bytes containing `sql`: that connection forwards nothing more from its client, answers still flow back. */
  holdWhen(sql: string): Promise<void>;
  /** Resolves once no connection is open through the proxy (both sides closed). */
  drained(): Promise<void>;
  /** Connections currently open through the proxy. */
  readonly open: number;
  close(): Promise<void>;
}

interface Trigger {
  sql: string;
  action: 'cut' | 'hold';
  resolve(): void;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket | null }>();
  let server: net.Server | null = null;
  let port = 0;
  let mode: 'forward' | 'stall' = 'forward';
  let trigger: Trigger | null = null;
  let drainWaiters: Array<() => void> = [];

  const settle = () => {
    if (pairs.size > 0) return;
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const resolve of waiters) resolve();
  };


  function accept(client: net.Socket): void {
    const pair: { client: net.Socket; upstream: net.Socket | null } = { client, upstream: null };
    pairs.add(pair);
    let closed = 0;
    const sides = mode === 'stall' ? 1 : 2;
    const onClose = () => {
      closed += 1;
      if (closed === sides) {
        pairs.delete(pair);
        settle();
      }
    };
    client.on('error', () => pair.upstream?.destroy());
    client.on('close', onClose);
    if (mode === 'stall') {
      client.resume(); // read and discard, so the service's closing is seen
      return;
    }

    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', onClose);
    upstream.pipe(client);
    let held = false;
    // Client bytes are inspected for the trigger's SQL; the tail of the previous chunk covers text split across two.
    let tail = '';
    client.on('data', (chunk: Buffer) => {
      if (held || upstream.destroyed) return;
      const text = tail + chunk.toString('latin1');
      const armed = trigger;
      if (armed && text.includes(armed.sql)) {
        trigger = null;
        if (armed.action === 'cut') {
          void cut().then(armed.resolve);
        } else {
          held = true;
          armed.resolve();
        }
        return;
      }
      tail = text.slice(-256);
      upstream.write(chunk);
    });
    client.on('end', () => upstream.end());
  }

  async function listen(): Promise<void> {
    const next = net.createServer(accept);
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
    port = (next.address() as net.AddressInfo).port;
  }

  /**
   * Stops listening, drops the PostgreSQL side of every connection and
   * closes the service's side; the listening socket's close waits until
   * each of those is closed at both ends, that is until the service has seen
   * every connection end.
   */
  async function cut(): Promise<void> {
    const current = server;
    server = null;
    const closed = current ? new Promise<void>((resolve) => current.close(() => resolve())) : Promise.resolve();
    for (const pair of pairs) {
      pair.upstream?.destroy();
      pair.client.end();
    }
    await closed;
  }

  await listen();

  return {
    get port() {
      return port;
    },
    get open() {
      return pairs.size;
    },
    via(url: string): string {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut,
    async restore(next = 'forward') {
      if (server) throw new Error('the proxy is listening already');
      mode = next;
      await listen();
    },
    cutWhen(sql) {
      return new Promise<void>((resolve) => (trigger = { sql, action: 'cut', resolve }));
    },
    holdWhen(sql) {
      return new Promise<void>((resolve) => (trigger = { sql, action: 'hold', resolve }));
    },
    drained() {
      return new Promise<void>((resolve) => {
        drainWaiters.push(resolve);
        settle();
      });
    },
    async close() {
      trigger = null;
      await cut();
    },
  };
}

/** The proxy target of TEST_DATABASE_URL: the real PostgreSQL. */
export function postgresTarget(): { host: string; port: number } {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  return { host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) };
}
