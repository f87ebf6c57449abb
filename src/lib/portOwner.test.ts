import { describe, expect, it } from 'vitest';
import { loopbackListenerUids } from './portOwner.js';

const HEAD4 = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const row4 = (local: string, state: string, uid: number) => `   0: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000 ${uid}        0 1 1 0 100 0 0 10 0`;

describe('loopbackListenerUids', () => {
  it('reads the listeners a loopback client reaches on the port: 127.0.0.1, the wildcards, ::1, not others', () => {
    // Port 4300 is 10CC; a little-endian host prints 127.0.0.1 as 0100007F.
    const tcp = [HEAD4, row4('0100007F:10CC', '0A', 65534), row4('00000000:10CC', '0A', 1000), row4('0200007F:10CC', '0A', 7), row4('0100007F:10CD', '0A', 8), row4('0100007F:10CC', '01', 9)].join('\n');
    const tcp6 = [HEAD4, row4('00000000000000000000000001000000:10CC', '0A', 11), row4('0000000000000000FFFF00000100007F:10CC', '0A', 12), row4('00000000000000000000000000000000:10CC', '0A', 13), row4('B80D0120000000000000000001000000:10CC', '0A', 14)].join('\n');
    expect(loopbackListenerUids([tcp, tcp6], 4300, true)).toEqual([65534, 1000, 11, 12, 13]);
  });

  it('reads a big-endian host\'s addresses in its own order', () => {
    const tcp = [HEAD4, row4('7F000001:10CC', '0A', 5), row4('0100007F:10CC', '0A', 6)].join('\n');
    const tcp6 = [HEAD4, row4('00000000000000000000000000000001:10CC', '0A', 7)].join('\n');
    expect(loopbackListenerUids([tcp, tcp6], 4300, false)).toEqual([5, 7]);
  });
});
