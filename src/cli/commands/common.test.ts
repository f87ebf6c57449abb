import { afterEach, describe, expect, it } from 'vitest';
import { silentServer } from '../../../test/helpers/silentServer.js';
import { clientFor } from './common.js';

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("the CLI's wait for a daemon that accepts and never answers", () => {
  it('gives a read MAESTRO_READ_TIMEOUT, and a health check at most that too (10 s when it is longer)', async () => {
    const silent = await silentServer();
    servers.push(silent);
    const client = clientFor({ url: `http://127.0.0.1:${silent.port}` }, { MAESTRO_READ_TIMEOUT: '0.3' });
    for (const path of ['/api/tasks', '/api/health']) {
      await expect(client.raw('GET', path), path).rejects.toMatchObject({ code: 'DAEMON_UNREACHABLE', message: expect.stringContaining('sent no answer within 0.3 s') });
    }
  });
});
