// Tries to take the home lock once everyone is ready; prints "won" or "lost: <message>".
import { once } from 'node:events';
import { acquireHomeLock } from '../../src/daemon/homeLock.js';

process.stdout.write('ready\n');
await once(process.stdin, 'data');
try {
  acquireHomeLock(process.argv[2]!);
  process.stdout.write(`${JSON.stringify({ won: true })}\n`);
  // Hold the lock until told to exit, like a running daemon.
  await once(process.stdin, 'end');
} catch (err) {
  process.stdout.write(`${JSON.stringify({ won: false, message: (err as Error).message })}\n`);
}
