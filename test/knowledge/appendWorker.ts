/**
 * Child process for the concurrency and crash suites.
 *   append <workflowRoot> <worker> <count>   appends <count> entries
 *   hang-before-rename <workflowRoot>        appends one entry, prints READY after the tmp write, then blocks
 */
import { appendSpecEntry } from '../../src/knowledge/format/specWriter.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';

const [mode, dir, worker, count] = process.argv.slice(2);
const root = resolveWorkflowRoot({ env: process.env, workflowRoot: dir! });
if (mode === 'append') {
  for (let i = 0; i < Number(count); i++) {
    appendSpecEntry(root, { category: 'learning', title: `worker ${worker} entry ${i}`, content: `written by worker ${worker}, number ${i}`, keywords: ['concurrency', `w${worker}`] });
  }
} else if (mode === 'hang-before-rename') {
  appendSpecEntry(root, {
    category: 'learning',
    title: 'the entry that never lands',
    content: 'x'.repeat(1500),
    keywords: ['crash'],
    hooks: {
      beforeRename() {
        process.stdout.write('READY\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
      },
    },
  });
}
