/**
 * /api/ws: the board's live feed. Each stored event (status changes, phases,
 * task creation, …) is sent as `{"type":"event","event":{…}}`. A client may
 * send `{"type":"subscribe","projectId":"…"}` to narrow the feed to one
 * project (or null for all); anything else it sends is answered with an error
 * message and otherwise ignored. Observer updates (`event.type` "observer.update",
 * payload per src/observer/README.md) reach every client whatever it subscribed to.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ApiDeps } from '../deps.js';

const clientMessage = z.object({ type: z.literal('subscribe'), projectId: z.string().max(200).nullable() }).strict();

export function registerWebSocket(app: FastifyInstance, { bus }: ApiDeps): void {
  app.get('/api/ws', { websocket: true }, (socket) => {
    let projectId: string | null = null;
    const off = bus.onEvent((event) => {
      // Observer updates belong to no project: every client gets them, narrowed or not.
      if (projectId && event.projectId !== projectId && !event.type.startsWith('observer.') && !event.type.startsWith('daemon.')) return;
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: 'event', event }));
    });
    socket.on('message', (raw: Buffer) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch {
        socket.send(JSON.stringify({ type: 'error', error: { code: 'BAD_INPUT', message: 'Messages must be JSON.' } }));
        return;
      }
      const msg = clientMessage.safeParse(parsed);
      if (!msg.success) {
        socket.send(JSON.stringify({ type: 'error', error: { code: 'BAD_INPUT', message: 'Expected {"type":"subscribe","projectId":string|null}.' } }));
        return;
      }
      projectId = msg.data.projectId;
      socket.send(JSON.stringify({ type: 'subscribed', projectId }));
    });
    socket.on('close', off);
    socket.send(JSON.stringify({ type: 'hello' }));
  });
}
