/**
 * Writes a large, realistic transcript (for the bounded-memory test and the
 * benchmark): explorations with Read/Grep/Edit/Bash tools whose results carry
 * kilobytes of file content, split assistant records repeating message ids,
 * thinking blocks, and an occasional garbage line.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

const FILE_BODY = 'export function handler(req, res) {\n  const token = req.headers.authorization;\n  if (!token) return res.status(401).end();\n}\n';

export function writeLargeTranscript(path: string, targetBytes: number): { bytes: number; explorations: number } {
  const fd = openSync(path, 'w');
  let bytes = 0;
  let n = 0;
  let t = Date.parse('2026-11-01T00:00:00Z');
  const content = FILE_BODY.repeat(32); // ≈4 KB per tool result
  try {
    while (bytes < targetBytes) {
      n += 1;
      const ts = () => new Date((t += 700)).toISOString();
      const lines: unknown[] = [
        { type: 'user', uuid: `u${n}`, timestamp: ts(), sessionId: 'big', cwd: '/repo', message: { role: 'user', content: `Question ${n}: why does handler ${n % 97} reject the token in module ${n % 13}?` } },
        { type: 'assistant', timestamp: ts(), message: { id: `m${n}a`, content: [{ type: 'thinking', thinking: 'Look at the handler and its tests first.', signature: 'x'.repeat(200) }], usage: { input_tokens: 1200, output_tokens: 40 } } },
        { type: 'assistant', timestamp: ts(), message: { id: `m${n}a`, content: [{ type: 'tool_use', id: `t${n}r`, name: 'Read', input: { file_path: `/repo/src/h${n % 97}.ts` } }], usage: { input_tokens: 1200, output_tokens: 40 } } },
        { type: 'user', timestamp: ts(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}r`, content }] }, toolUseResult: { file: { content } } },
        { type: 'assistant', timestamp: ts(), message: { id: `m${n}b`, content: [{ type: 'tool_use', id: `t${n}b`, name: 'Bash', input: { command: 'npm test -- handler', description: 'Run tests' } }], usage: { input_tokens: 1300, output_tokens: 30 } } },
        { type: 'user', timestamp: ts(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}b`, content: 'PASS src/handler.test.ts\n'.repeat(20), is_error: n % 10 === 0 }] } },
        { type: 'assistant', timestamp: ts(), message: { id: `m${n}c`, content: [{ type: 'text', text: `The handler rejects the token because the header is read before parsing. Fixed in h${n % 97}.ts.` }], stop_reason: 'end_turn', usage: { input_tokens: 1400, output_tokens: 80 } } },
      ];
      let chunk = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
      if (n % 500 === 0) chunk += 'garbage line {\n';
      bytes += writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  return { bytes, explorations: n };
}
