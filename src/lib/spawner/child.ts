/**
 * The spawner's helper process (spawner.ts): runs each ExecRequest it is sent and sends
 * back the ExecOutcome under the request's id. It holds nothing of the daemon: its own
 * environment is empty, and each request carries the environment its command gets.
 * It exits when its parent's channel closes (the daemon stopped, or was killed).
 */
import { closeInheritedDescriptors } from '../inheritedDescriptors.js';
import { execOnce, type ExecRequest } from './exec.js';

export type SpawnerRequest = ExecRequest & { id: number };
export type SpawnerReply = { ready: true } | ({ id: number } & Awaited<ReturnType<typeof execOnce>>);

if (!process.send) {
  process.stderr.write('the spawner helper runs only as a child with an IPC channel\n');
  process.exit(2);
}
// Nothing its starter left open goes on to git (lib/inheritedDescriptors.ts).
closeInheritedDescriptors();
const send = (reply: SpawnerReply) => {
  if (process.connected) process.send!(reply);
};
process.on('message', (req: SpawnerRequest) => {
  void execOnce(req).then((outcome) => send({ id: req.id, ...outcome }));
});
process.on('disconnect', () => process.exit(0));
// Disconnected while this module was still loading: the event came before the listener.
if (!process.connected) process.exit(0);
send({ ready: true });
