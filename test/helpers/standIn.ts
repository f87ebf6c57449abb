/**
 * The HTTP plumbing the model stand-ins share (modelApi, responsesApi, geminiApi, chatCompletionsApi): a
 * server on 127.0.0.1 that reads each request's body whole and sends what `answer` makes of it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInReply {
  status?: number;
  type: 'application/json' | 'text/event-stream';
  body: string;
}

export interface StandInServer {
  url: string;
  close(): Promise<void>;
}

/** A stand-in for the model of an agent CLI whose tool is a shell, whichever API it speaks (`R`: its request). */
export interface ShellStandIn<R> extends StandInServer {
  /** The agent loop's requests, in order. */
  requests: R[];
  /** What the `n`th shell command (1-based) gave back to the model. */
  toolOutput(n: number): string;
  /** The user's side of a request's conversation: Maestro's prompt and the commands' output. */
  said(request: R): string;
}

export const json = (value: unknown, status = 200): StandInReply => ({ status, type: 'application/json', body: JSON.stringify(value) });
export const events = (body: string): StandInReply => ({ type: 'text/event-stream', body });

export async function serveStandIn(answer: (request: { method: string; url: string; body: string }) => StandInReply, host = '127.0.0.1'): Promise<StandInServer> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const reply = answer({ method: req.method ?? 'GET', url: req.url ?? '/', body });
      res.writeHead(reply.status ?? 200, { 'content-type': reply.type }).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Scripted turns in order (past the last one, the last again), or a model that answers each request. */
export type Script<R, T> = readonly T[] | ((request: R) => T);

/** The turn for the `n`th (1-based) request of the agent's loop. */
export function turnFor<R, T>(script: Script<R, T>, request: R, n: number): T {
  return typeof script === 'function' ? (script as (r: R) => T)(request) : (script as readonly T[])[Math.min(n, script.length) - 1]!;
}
